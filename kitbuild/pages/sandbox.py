"""The bounded sandbox the pages, and every other template a kit brings, are rendered in.

jinja2's sandbox with ``StrictUndefined``, bounded as well (:class:`_BoundedEnvironment`):
``kitbuild verify`` renders a template that came with a stranger's kit, and jinja2's sandbox
keeps a template from Python's internals, not from work. ``{% for i in range(10**9) %}`` or
``{{ 'x' * 10**9 }}`` would hang the reader's verify or exhaust its memory; past any of the
limits below a template stops with an error that names the limit (which
:func:`kitbuild.pages.render_pages` reports as a :class:`kitbuild.pages.TemplateError`). The
built-in templates run in the same environment, far inside every limit.

The pages' own filters live here too: every bounded environment has them, and they keep its
limits themselves.
"""

from __future__ import annotations

import functools
import inspect
import re
import time
import types
from typing import Any, Callable, Iterable, Iterator, Mapping

import jinja2
from jinja2.runtime import Context, markup_join, str_join
from jinja2.sandbox import SandboxedEnvironment

from kitbuild.pages.compiled import COMPILED
from kitbuild.pages.faults import Unknown
from kitbuild.pages.printable import check_steady
from kitbuild.pages.routing import _BoundedCodeGenerator
from kitbuild.pages.walks import _Refused, check_walk, check_wrap
from kitbuild.resources import templates_dir

# The limits on rendering the pages, for every template. The built-in templates render the demo
# kit in milliseconds into 27 KiB, and a kit of 100,000 files with three rules firing in each
# (every firing listed, file by file) in a third of a second into 10 MiB: these are far beyond
# what any page needs.
RENDER_SECONDS = 10.0  # both pages, from reading the first template to the last character
MAX_PAGE = 64 << 20  # characters of one page
MAX_STEP = 16 << 20  # characters (or items, for a list) one operation may build: '*', '~', a filter...
MAX_BUILT = 64 << 20  # characters and items all the operations of one rendering may build together
MAX_RANGE = 100_000  # numbers in one range(), and items a batch() or slice() may make up
MAX_LOOP_ITEMS = 10_000_000  # items all the {% for %} loops of one rendering may take together
MAX_CALL_DEPTH = 64  # calls inside calls: a macro calling itself, caller(), a recursive loop
MAX_NUMBER_BITS = 1 << 16  # a whole number an operator makes (about 20,000 digits)


def _thousands(n: Any) -> str:
    return f"{n:,}"


def _short(digest: Any) -> str:
    return _as_text(digest)[:12]


def _cell(text: Any) -> str:
    # A Markdown table cell: a '|' in a page text or a path would end the cell.
    return _as_text(text).replace("|", "\\|")


# The pages' own filters. They keep the sandbox's limits themselves (a list or dict is measured
# before it is made text, and none makes more than twice what it is given), so that a long table
# calls no wrapper for them (see _BoundedEnvironment._bounded_filter).
FILTERS = {"thousands": _thousands, "short": _short, "cell": _cell}


# -- the bounded sandbox -------------------------------------------------------------------------
#
# Every step a template can repeat (a call, a filter, an operator, a '~', a block's text, a loop's
# next item, the next piece of output) first looks at the clock and at what it is about to build.
# A step that Python or jinja2 takes in C cannot be stopped halfway, so what could make one step
# long (a width, a count, a text the size of its input) is measured before the step, and the text
# it built is counted after.

_CONTAINERS = (list, tuple, dict, set, frozenset)
_SEQUENCES = (str, list, tuple)
# Filters that read their input item by item or as a number, and never make it one text:
# measuring it first would walk a kit's 100,000 files each time {{ files|length }} is asked.
_ITEMWISE_FILTERS = frozenset(
    "abs attr batch count d default dictsort first float groupby int items last length list map max min "
    "reject rejectattr reverse round select selectattr slice sort sum unique".split()
)
# The methods of a list or dict that compare (or hash) what they are given, or the list's items:
# list.count(x), dict.get(k), loop.changed(x). Both are walked first.
_COMPARING_METHODS = frozenset("changed count fromkeys get index pop remove setdefault sort".split())
# Filters that compare (or hash) their items, or their items with an argument: walked first.
_COMPARING_FILTERS = frozenset("dictsort groupby max min reject rejectattr select selectattr sort unique".split())
# Widths and precisions in a %-format and in a str.format field; '*' and a field inside a field
# take theirs from the arguments.
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?")
_FORMAT_SPEC = re.compile(r"\{[^{}]*:([^{}]*)\}")
_NESTED_FIELD = re.compile(r"\{[^{}]*\{")
_DIGITS = re.compile(r"\d+")


def _too_big(size: int, what: str) -> _Refused:
    return _Refused(
        f"{what} would build {size:,} characters or items, more than the limit of {MAX_STEP:,} for one step; build less at once"
    )


def _text_size(value: Any, limit: int = MAX_STEP) -> int:
    """About how many characters ``str(value)`` makes, counted only until past ``limit``: a list
    holding a list twice, thirty lists deep, is a gigabyte of text from a line of template."""
    if isinstance(value, str):
        return len(value)
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + 4 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, _CONTAINERS):
            total += 2 + 2 * len(item)
            stack.extend(item)
        else:  # a number (kept short by MAX_NUMBER_BITS), None, an index entry
            total += 8
    return total


def _as_text(value: Any) -> str:
    """``value`` as a text, measured before it is made one."""
    if isinstance(value, str):
        return value
    size = _text_size(value)
    if size > MAX_STEP:
        raise _too_big(size, "making a list or dict a text")
    return str(value)


def _ints(values: Iterable[Any]) -> int:
    return sum(abs(v) for v in values if isinstance(v, int))


def _percent_size(text: str, args: Any) -> int:
    """About how long ``text % args`` is."""
    values = list(args.values()) if isinstance(args, dict) else list(args) if isinstance(args, tuple) else [args]
    specs = _PERCENT_SPEC.findall(text)
    size = len(text) + sum(int(n) for spec in specs for n in spec if n.isdigit()) + sum(map(_text_size, values))
    return size + (_ints(values) if any("*" in spec for spec in specs) else 0)


def _format_size(text: str, args: Iterable[Any], kwargs: Mapping[str, Any]) -> int:
    """About how long ``text.format(*args, **kwargs)`` is."""
    values = [*args, *kwargs.values()]
    widths = sum(int(n) for spec in _FORMAT_SPEC.findall(text) for n in _DIGITS.findall(spec))
    return len(text) + widths + sum(map(_text_size, values)) + (_ints(values) if _NESTED_FIELD.search(text) else 0)


def _replace_size(text: str, old: Any, new: Any, count: Any = None) -> int:
    """About how long ``text.replace(old, new, count)`` is."""
    old, new = str(old), str(new)
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    return len(text) + times * max(0, len(new) - len(old))


def _items(n: Any, what: str) -> int:
    """``n`` items asked of ``what``, refused past MAX_RANGE (a loop in C, or a list, that long)."""
    if isinstance(n, int) and n > MAX_RANGE:
        raise _Refused(f"{what} asks for {n:,} items, more than the limit of {MAX_RANGE:,}; ask for fewer")
    return max(0, n) if isinstance(n, int) else 0


def _wrap_size(a: Mapping[str, Any]) -> int:
    text = _as_text(a["s"])
    check_wrap(text, a.get("width", 79), a.get("break_long_words", True))
    return len(text) * (1 + len(a.get("wrapstring") or "\n"))


def _indent_size(a: Mapping[str, Any]) -> int:
    text, width = _as_text(a["s"]), a.get("width", 4)
    return len(text) + (text.count("\n") + 1) * (len(width) if isinstance(width, str) else max(0, width))


# What a filter that can make far more than it is given is about to make, from its arguments as
# jinja2 names them; the others are measured by their input (unless item by item) and result.
_FILTER_SIZES: dict[str, Callable[[Mapping[str, Any]], int]] = {
    "center": lambda a: max(_text_size(a["value"]), a.get("width", 80)),
    "indent": _indent_size,
    "wordwrap": lambda a: _wrap_size(a),
    "truncate": lambda a: _text_size(a["s"]) + len(str(a.get("end", "..."))),
    "tojson": lambda a: _text_size(a["value"]) * (1 + max(0, a.get("indent") or 0)),
    "replace": lambda a: _replace_size(_as_text(a["s"]), a["old"], a["new"], a.get("count")),
    "format": lambda a: _percent_size(_as_text(a["value"]), a.get("kwargs") or tuple(a.get("args", ()))),
    "batch": lambda a: _items(a["linecount"], "batch()") if a.get("fill_with") is not None else 0,
    "slice": lambda a: _items(a["slices"], "slice()"),
}


def _text_method_size(text: str, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int | None:
    """About how long the text a method of ``text`` makes is, where it can be far longer than
    ``text``; None for the others (their result is counted once made)."""
    if name in ("center", "ljust", "rjust", "zfill"):
        return max(len(text), _ints(args[:1]))
    if name == "expandtabs":
        return len(text) + text.count("\t") * _ints([*args[:1], *kwargs.values()])
    if name == "replace":
        return _replace_size(text, *args[:3]) if len(args) >= 2 else None
    if name == "format":
        return _format_size(text, args, kwargs)
    if name == "format_map":
        return _format_size(text, (), args[0]) if args and isinstance(args[0], Mapping) else None
    return None


def _method_owner(obj: Any) -> tuple[Any, str]:
    """The object ``obj`` is a method of, and the method's name; (None, "") if it is no method.
    A text's format method comes wrapped by jinja2's sandbox."""
    if isinstance(obj, types.FunctionType):
        obj = obj.__dict__.get("__wrapped__")
    if isinstance(obj, (types.BuiltinMethodType, types.MethodType)):
        return obj.__self__, obj.__name__
    return None, ""


class _BoundedEnvironment(SandboxedEnvironment):
    """jinja2's sandbox, bounded in time and size (see the limits at the top of this module)."""

    code_generator_class = _BoundedCodeGenerator
    # The operators that make more than they are given: a text or a list times a number, two
    # joined, a %-format with widths, a power. (Intercepted, they are also never folded into
    # constants when a template is compiled, before any limit holds.)
    intercepted_binops = frozenset({"+", "*", "%", "**"})

    def __init__(self, **options: Any) -> None:
        super().__init__(undefined=Unknown, keep_trailing_newline=True, finalize=self._printable, **options)
        self.globals["range"] = self._range
        # Placeholder text drawn at random: a page made with it never renders the same twice, so
        # no kit can use it, and it makes its text in a loop no limit here could reach.
        del self.globals["lipsum"]
        # (So is a random item: a page must come out the same when a reader renders it again.)
        del self.filters["random"]
        self.filters = {name: self._bounded_filter(name, function) for name, function in self.filters.items()}
        self.filters.update(FILTERS)
        self.start()

    def start(self) -> None:
        """Begin a rendering: its clock, and nothing built yet."""
        self.deadline = time.monotonic() + RENDER_SECONDS
        self.built = self.loop_items_taken = self.depth = 0

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _Refused(
                f"it ran longer than {RENDER_SECONDS:g} seconds, the time limit for rendering the pages; make it do less work (fewer or shorter loops)"
            )

    def count(self, size: int, what: str) -> None:
        """Count ``size`` characters or items that ``what`` is about to build (or has built)."""
        if size > MAX_STEP:
            raise _too_big(size, what)
        self.built += size
        if self.built > MAX_BUILT:
            raise _Refused(
                f"it builds more than {MAX_BUILT:,} characters and items in all, the limit for rendering the pages; make it build less text"
            )

    def render_page(self, name: str, context: Mapping[str, Any]) -> str:
        """The template ``name`` rendered, its output measured as it is made."""
        self.tick()
        template = self.get_template(name)
        parts: list[str] = []
        size = 0
        output = template.generate(context)
        try:
            # (The clock is read by the loops and calls that make the parts, not once a part.)
            for part in output:
                size += len(part)
                if size > MAX_PAGE:
                    raise _Refused(f"it would write more than {MAX_PAGE:,} characters, the limit for one page; make it print less")
                parts.append(part)
        finally:
            # (A generator, though jinja2 types it as an iterator: closed, a template stopped
            # halfway lets go of its frames now.)
            getattr(output, "close", lambda: None)()
        return "".join(parts)

    # -- the hooks jinja2 calls ------------------------------------------------------------------

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Every call a template makes: a macro, caller(), loop(), a method, a global."""
        self.tick()
        if self.depth >= MAX_CALL_DEPTH:
            raise _Refused(f"its calls nest more than {MAX_CALL_DEPTH} deep (a macro that calls itself without end?); make them nest less")
        owner, name = _method_owner(obj)
        what = f"{name}()"
        if name in _COMPARING_METHODS and (isinstance(owner, _CONTAINERS) or name == "changed"):
            for arg in (*args, *kwargs.values(), *((owner,) if name in ("count", "index", "remove", "sort") else ())):
                check_walk(arg, what)
        grows = len(owner) if isinstance(owner, (list, dict, set)) else None
        counted = False
        if isinstance(owner, str):
            if name == "join" and args:
                args = (list(args[0]), *args[1:])  # measured below, and then joined
                self.count(_text_size(args[0]) + len(owner) * len(args[0]), what)
                counted = True
            else:
                size = _text_method_size(owner, name, args, kwargs)
                if size is not None:
                    self.count(size, what)
                    counted = True
        self.depth += 1
        try:
            result = super().call(context, obj, *args, **kwargs)
        finally:
            self.depth -= 1
        if grows is not None and len(owner) > grows:  # list.extend(list) doubles it
            self.count(len(owner) - grows, what)
        elif isinstance(owner, (str, bytes, *_CONTAINERS)) and not counted and isinstance(result, (str, bytes, *_CONTAINERS)):
            # What a method of a text or a list made: a copy, the parts of a split.
            self.count(_text_size(result), what)
        if isinstance(owner, str) and isinstance(result, str):  # '{}'.format(f), ''.join([f])...
            check_steady((*args, *kwargs.values()))
        return result

    def compared(self, value: Any) -> Any:
        """A value '==', '<', 'in', a comparing test or a dict's key walks: measured first."""
        return check_walk(value, "a comparison")

    def getitem(self, obj: Any, argument: Any) -> Any:
        # (A dict hashes the key it is asked for, and a tuple's hash walks it.)
        return super().getitem(obj, check_walk(argument, "a lookup"))

    def sliced(self, part: Any) -> Any:
        """``text[a:b]``: a copy, counted."""
        if isinstance(part, _SEQUENCES):
            self.count(len(part), "a slice")
        return part

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        self.tick()
        if operator == "*":
            if isinstance(left, int) and isinstance(right, int):
                self._number(left.bit_length() + right.bit_length())
            elif isinstance(left, _SEQUENCES) and isinstance(right, int):
                self.count(len(left) * max(0, right), "'*'")
            elif isinstance(right, _SEQUENCES) and isinstance(left, int):
                self.count(len(right) * max(0, left), "'*'")
        elif operator == "+" and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
            self.count(len(left) + len(right), "'+'")
        elif operator == "%" and isinstance(left, str):
            self.count(_percent_size(left, right), "'%'")
            check_steady(right)
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            self._number(left.bit_length() * right)
        return super().call_binop(context, operator, left, right)

    def _number(self, bits: int) -> None:
        if bits > MAX_NUMBER_BITS:
            raise _Refused(f"it would compute a number of about {bits:,} bits, more than the limit of {MAX_NUMBER_BITS:,}; compute smaller numbers")

    def join(self, markup: bool, pieces: tuple[Any, ...]) -> str:
        """``a ~ b``: the pieces measured, then joined as jinja2 joins them."""
        self.tick()
        self.count(sum(map(_text_size, pieces)), "'~'")
        check_steady(pieces)  # (a piece is made text as {{ }} makes it)
        return markup_join(pieces) if markup else str_join(pieces)

    def concat(self, pieces: Iterable[str]) -> str:
        """The text of a macro, a {% set %} or {% filter %} block, or caller(), before it is one."""
        pieces = list(pieces)
        self.count(sum(map(len, pieces)), "a block of text")
        return "".join(pieces)

    def loop_items(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """The items of a {% for %}, each one on the clock and counted."""
        clock, deadline = time.monotonic, self.deadline  # (locals: this runs once an item)
        for item in iterable:
            self.loop_items_taken += 1
            if self.loop_items_taken > MAX_LOOP_ITEMS:
                raise _Refused(f"its loops take more than {MAX_LOOP_ITEMS:,} items in all, the limit for rendering the pages; loop over less")
            if clock() > deadline:
                self.tick()
            yield item

    def _range(self, *args: int) -> range:
        numbers = range(*args)
        try:
            too_long = len(numbers) > MAX_RANGE
        except OverflowError:  # longer than a Python int can say
            too_long = True
        if too_long:
            raise _Refused(f"range() of more than {MAX_RANGE:,} numbers is over the limit; loop over fewer")
        return numbers

    def _printable(self, value: Any) -> Any:
        """Every {{ }}, before it is made text: a list or dict is measured first."""
        if type(value) is not str and isinstance(value, _CONTAINERS):  # (a text, most often, first)
            self.count(_text_size(value), "printing a list or dict")
        check_steady(value)
        return value

    def _bounded_filter(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` as a filter that keeps the limits. (A filter runs no template code: the
        loops and calls that reach it look at the clock.)"""
        # A filter marked pass_context (or _eval_context, _environment) gets that first; jinja2
        # reads the mark off the wrapper, which functools.wraps copies.
        first = 1 if getattr(function, "jinja_pass_arg", None) is not None else 0
        if name in _FILTER_SIZES or name in ("join", "sum"):
            return self._measured_filter(name, function, first)
        itemwise = name in _ITEMWISE_FILTERS
        compares = name in _COMPARING_FILTERS
        what = f"the filter {name!r}"

        @functools.wraps(function)
        def bounded(*args: Any, **kwargs: Any) -> Any:
            if compares:
                for arg in (*args[first:], *kwargs.values()):
                    check_walk(arg, what)
            if not itemwise and len(args) > first and isinstance(args[first], _CONTAINERS):
                self.count(_text_size(args[first]), what)
            result = function(*args, **kwargs)
            if isinstance(result, _SEQUENCES):  # a text made, or a list: text|list is one item a character
                self.count(len(result), what)
            if isinstance(result, str):  # (made of its input's text: |string, |upper...)
                check_steady((*args[first:], *kwargs.values()))
            return result

        return bounded

    def _measured_filter(self, name: str, function: Callable[..., Any], first: int) -> Callable[..., Any]:
        """A filter that can make far more than it is given, measured by its arguments first."""
        # The signature is the filter's own: jinja2 wraps some in a variant that takes the eval
        # context first, which the function it wraps does not.
        own = inspect.unwrap(function)
        skip = first if getattr(own, "jinja_pass_arg", None) is None else 0
        signature = inspect.signature(own)
        sized = _FILTER_SIZES.get(name)
        what = f"the filter {name!r}"

        @functools.wraps(function)
        def measured(*args: Any, **kwargs: Any) -> Any:
            if sized is not None:
                arguments = _arguments(signature, args[skip:], kwargs)
                if arguments:  # (else the filter's own error, when it is called)
                    self.count(sized(arguments), what)
            elif len(args) > first:
                # join and sum: their input made a list (the same items, for the same result) and measured.
                args = (*args[:first], list(args[first]), *args[first + 1 :])
                size = _text_size(args[first])
                if name == "join":
                    self.count(size, what)
                elif not isinstance(_arguments(signature, args[skip:], kwargs).get("start", 0), (int, float)):
                    # A sum of lists copies the sum so far at each one: n lists, n times half the total.
                    self.count(len(args[first]) * size // 2, what)
            result = function(*args, **kwargs)
            if isinstance(result, str):  # |join, |format...
                check_steady((*args[first:], *kwargs.values()))
            return result

        return measured


def bounded_environment(**options: Any) -> SandboxedEnvironment:
    """jinja2's sandbox with ``StrictUndefined``, bounded as the pages' is (``options`` as jinja2
    takes them): for another short template a kit brings, a figure's page text. Past a limit, a
    rendering raises a :class:`jinja2.TemplateError` that says which. The clock starts here."""
    return _BoundedEnvironment(**options)


def _pages_environment(custom: Mapping[str, str]) -> _BoundedEnvironment:
    return _BoundedEnvironment(
        bytecode_cache=COMPILED,
        # A kit's own template first, then the built-in ones. (Its file name is its name, which
        # a message about one of its lines gives.)
        loader=jinja2.ChoiceLoader([jinja2.FunctionLoader(lambda name: (custom[name], name, lambda: True) if name in custom else None), jinja2.FileSystemLoader(str(templates_dir()))]),
        # The templates end in .j2: autoescape must look at the name before it, or index.html is
        # rendered unescaped and a title or file name with "<" or "&" breaks the page.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _arguments(signature: inspect.Signature, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Mapping[str, Any]:
    """A filter's arguments by name; its own error, where they do not fit, comes when it is called."""
    try:
        return signature.bind(*args, **kwargs).arguments
    except TypeError:
        return {}
