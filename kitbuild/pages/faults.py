"""What went wrong in a template, in the words of whoever wrote it (issue 40).

jinja2's own messages name Python's types (``'dict object' has no attribute 'x'``) and no line.
Here a failure becomes a :class:`Fault`: the template and the line it happened at, what was
asked for that is not there, the nearest name that is (difflib) and the names there are. The
same wording serves a kit's README template, in a build (the researcher's file, exit 2) and in
verify (a finding), and the short page texts kit.yaml writes (``readme.figures_table``, the prose).

Every template is rendered with :class:`Unknown` as its undefined value, so the message is ours
wherever a missing name surfaces.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from types import TracebackType
from typing import Any, Iterable

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.utils import missing

# Past this many, the names there are go unlisted: the nearest one is what helps.
LISTED = 30


class UnknownName(jinja2.UndefinedError):
    """A template used a name, key or attribute that is not there. ``name`` is the one asked for;
    ``top`` says it was a name of its own (``{{ titel }}``), not a key of a value."""

    def __init__(self, message: str | None = None, name: Any = None, top: bool = False, obj: Any = missing) -> None:
        super().__init__(message)
        self.name, self.top, self.obj = name, top, obj


class Unknown(jinja2.StrictUndefined):
    """jinja2's strict undefined, telling what is missing in words rather than Python's types."""

    __slots__ = ()

    def __init__(self, hint: str | None = None, obj: Any = missing, name: str | None = None, exc: Any = jinja2.UndefinedError) -> None:
        if exc is jinja2.UndefinedError:
            exc = functools.partial(UnknownName, name=name, top=obj is missing, obj=obj)
        super().__init__(hint, obj, name, exc)

    @property
    def _undefined_message(self) -> str:
        if self._undefined_exception is SecurityError:
            # jinja2's hint names the value's Python type.
            return refused(self._undefined_name)
        if self._undefined_hint:
            return self._undefined_hint
        if self._undefined_obj is missing:
            return f"{self._undefined_name!r} is not a name the template is given"
        return absent(self._undefined_obj, self._undefined_name)


def refused(name: Any) -> str:
    return f"the sandbox refuses {name!r}: a template reads the kit's data, never Python's internals (names starting with '_')"


def refused_call() -> str:
    return "the sandbox refuses what it calls: a template reads the kit's data, never Python's internals"


def kind(value: Any) -> str:
    """What ``value`` is, as a template's writer calls it."""
    if value is None:
        return "empty (none)"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "a value"


def choices(typed: Any, names: Iterable[str], what: str = "names") -> str:
    """``; did you mean 'x'? The names here are: ...`` (all of them, when there are few), to
    follow a sentence that says what is not there."""
    names = [n for n in names if isinstance(n, str) and not n.startswith("_")]
    close = difflib.get_close_matches(str(typed), names, n=1)
    head = f"; did you mean {close[0]!r}?" if close else "."
    if not names:
        return f"{head} There are no {what} here."
    if len(names) <= LISTED:
        return f"{head} The {what} here are: {', '.join(names)}."
    return f"{head} There are {len(names)} {what} here" + ("." if close else f", none near {str(typed)!r}.")


def absent(obj: Any, name: Any, holder: str = "it") -> str:
    """Why ``obj`` (which the template calls ``holder``) has nothing called ``name``, and what it has."""
    if isinstance(obj, Mapping):
        return f"{holder} has no key {name!r}" + choices(name, list(obj), "keys")
    if isinstance(obj, (list, tuple)) and isinstance(name, int):
        return f"{holder} is a list of {len(obj)} item{'s' if len(obj) != 1 else ''}, numbered from 0: it has no item {name}"
    if isinstance(obj, (list, tuple)):
        return f"{holder} is a list, which has no {name!r}; take its items with {{% for ... in ... %}} or by number"
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return f"{holder} is {kind(obj)}, which has no {name!r}"
    return f"{holder} has no {name!r}" + choices(name, [n for n in dir(obj) if not n.startswith("_")], "names")


@dataclass(frozen=True)
class Fault:
    """Where a template failed and why: ``template`` is its name (None: not known), ``line`` its
    1-based line (None: not known), ``text`` what is wrong and what to do."""

    template: str | None
    line: int | None
    text: str


def _frames(exc: BaseException) -> list[tuple[str, int, Mapping[str, Any]]]:
    """The template lines the failure passed through, outermost first: jinja2 rewrites each
    frame of a template's code into one at the template's own file name and line."""
    out: list[tuple[str, int, Mapping[str, Any]]] = []
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if "__jinja_exception__" in frame.f_globals:
            out.append((frame.f_code.co_filename, tb.tb_lineno, frame.f_locals))
        tb = tb.tb_next
    return out


def _expression(node: nodes.Node) -> str | None:
    """``config.licence``, ``f['as']``: a name reached by attributes and keys, as written."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        inner = _expression(node.node)
        return None if inner is None else f"{inner}.{node.attr}"
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        inner = _expression(node.node)
        return None if inner is None else f"{inner}[{node.arg.value!r}]"
    return None


def _holder(tree: nodes.Template | None, line: int | None, name: Any) -> str | None:
    """The expression at ``line`` that ``name`` is asked of (``config`` in ``config.licenc``), if one is."""
    if tree is None or line is None:
        return None
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        assert isinstance(node, (nodes.Getattr, nodes.Getitem))
        asked = node.attr if isinstance(node, nodes.Getattr) else getattr(node.arg, "value", missing)
        if node.lineno == line and asked == name:
            return _expression(node.node)
    return None


def unknown_filter_or_test(tree: nodes.Template, env: jinja2.Environment) -> tuple[int, str] | None:
    """The first filter or test ``tree`` names that ``env`` does not have: its line, and why."""
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        table, what = (env.filters, "filter") if isinstance(node, nodes.Filter) else (env.tests, "test")
        if node.name not in table:
            return node.lineno, f"there is no {what} {node.name!r}" + choices(node.name, sorted(table), what + "s")
    return None


# Python's failures inside a template line, in words: the type names are not the writer's.
_PYTHON = {
    ZeroDivisionError: "it divides by zero",
    OverflowError: "a number here is too large",
    TypeError: "it combines values that do not go together (such as a text and a number), or calls something with the wrong values",
    ValueError: "a value here does not have the form this line needs (such as a number written as a text)",
    KeyError: "it asks for a key that is not there",
    IndexError: "it asks for an item past the end of a list",
}


def innermost(exc: BaseException, template: str | None, root: str | None = None) -> tuple[str | None, int | None]:
    """The template and line the failure was raised at, the innermost a template's frames
    show (``template`` and None where none does: the page's size, counted outside them)."""
    frames = _frames(exc)
    return (shown_name(frames[-1][0], root), frames[-1][1]) if frames else (template, None)


def describe(exc: BaseException, env: jinja2.Environment, template: str | None = None, text: str | None = None, root: str | None = None) -> Fault:
    """``exc``, raised while ``env`` rendered ``template`` (a name its loader knows) or ``text``
    (a template from a string), as a :class:`Fault`.

    The template's text is read again to find the expression that failed and any filter or
    test ``env`` does not have; ``root`` is the folder of the built-in templates, whose names a
    message gives relative to it.
    """
    frames = _frames(exc)
    where, line = innermost(exc, template, root)
    if isinstance(exc, jinja2.TemplateSyntaxError):
        where, line = exc.name or template, exc.lineno
    if where in ("<template>", "<introspection>"):  # (jinja2's names for a template from a string)
        where = template
    tree = _tree(env, text if text is not None and where == template else _source(env, where))
    if isinstance(exc, (jinja2.TemplateSyntaxError, jinja2.TemplateRuntimeError)) and tree is not None:
        unknown = unknown_filter_or_test(tree, env)
        if unknown is not None:
            return Fault(where, unknown[0], unknown[1])
    if isinstance(exc, UnknownName):
        if exc.top:
            # The names the template could have meant: its data, and what it set itself by then.
            names = sorted(n for n in (frames[-1][2] if frames else {}) if isinstance(n, str) and n not in env.globals)
            return Fault(where, line, f"{exc.name!r} is not a name the template is given" + choices(exc.name, names))
        holder = _holder(tree, line, exc.name)
        if holder is None or exc.obj is missing:  # (a hint of its own: a figure's missing part)
            return Fault(where, line, str(exc.message))
        return Fault(where, line, absent(exc.obj, exc.name, holder))
    if isinstance(exc, SecurityError):
        said = str(exc.message)
        return Fault(where, line, said if said.startswith("the sandbox refuses") else refused_call())
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return Fault(where, line, f"it does not parse: {exc.message}")
    if isinstance(exc, jinja2.TemplateNotFound):
        return Fault(where, line, f"it includes {exc.name!r}, which is not a template here")
    if isinstance(exc, jinja2.TemplateError):
        return Fault(where, line, str(exc))
    for python, words in _PYTHON.items():
        if isinstance(exc, python):
            return Fault(where, line, words)
    return Fault(where, line, "it cannot be rendered at this line")


def _source(env: jinja2.Environment, name: str | None) -> str | None:
    if name is None or env.loader is None:
        return None
    try:
        return env.loader.get_source(env, name)[0]
    except jinja2.TemplateNotFound:
        return None


def _tree(env: jinja2.Environment, text: str | None) -> nodes.Template | None:
    if text is None:
        return None
    try:
        return env.parse(text)
    except (jinja2.TemplateSyntaxError, RecursionError):
        return None


def shown_name(filename: str, root: str | None) -> str:
    """A template's name as a message shows it: a built-in one relative to the templates folder
    (never the path of the machine it is installed on)."""
    if root is None:
        return filename
    try:
        return PurePath(filename).relative_to(root).as_posix()
    except ValueError:
        return filename
