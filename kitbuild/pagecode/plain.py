"""The built-in templates' compiled code, run without jinja2.

verify renders a kit's pages again in a child process beside its workers (kitbuild.pagesahead),
and both cores are busy then: on workload B the child's import of jinja2 (about 45 ms of CPU)
cost more than rendering both pages. The code jinja2 generated for the built-in templates
(kitbuild.pagecode) asks little of jinja2's runtime: a context to look names up in, the
sandbox's attribute lookup and call, a loop that knows its last item, strict undefined values,
markupsafe's escape for index.html, and the page filters. This module gives it just that, with
jinja2's semantics for the values a page context holds (dicts, lists, strings, numbers, None and
a build's index entries), and refuses everything else: an undefined name or key, an attribute
of anything but a dict's keys and ``items``, a loop's ``last`` or a dataclass's fields, a call of
anything but a dict's ``items``, a runtime name the built-in templates do not use. A refusal, or
any error, leaves the page to jinja2, which renders it or reports why it cannot; a page rendered
here has the bytes jinja2 gives (tests/pagecode_plain_test.py renders both ways and compares).

The compiled code imports its runtime names from ``jinja2.runtime``; it runs here with an
``__import__`` that answers that import, and only that one, with this module's names.
"""

from __future__ import annotations

import builtins
from types import CodeType, SimpleNamespace
from typing import Any, Callable, Iterator, Mapping, NoReturn

from kitbuild.pagecode import code_of, module_name


class Refused(Exception):
    """Something the compiled code asked for that this runtime leaves to jinja2."""


def _refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise Refused


class _Missing:
    """What jinja2's runtime calls ``missing``: a name's value before it is looked up."""

    __slots__ = ()


MISSING = _Missing()


class _Undefined:
    """The value of an inline ``if`` without ``else`` whose test is false: jinja2's plain
    ``Undefined``, which prints as nothing (and escapes to nothing)."""

    __slots__ = ()

    def __init__(self, hint: str | None = None, obj: Any = None, name: str | None = None, exc: Any = None) -> None:
        pass

    def __str__(self) -> str:
        return ""

    def __bool__(self) -> bool:
        return False


class _Loop:
    """A ``for`` loop's ``loop``, with the one attribute the built-in templates read: ``last``."""

    __slots__ = ("_items", "last")

    def __init__(self, iterable: Any, undefined: Any, recurse: Any = None, depth0: int = 0) -> None:
        if recurse is not None or depth0:
            raise Refused
        self._items = list(iterable)
        self.last = False

    def __iter__(self) -> Iterator[tuple[Any, _Loop]]:
        end = len(self._items) - 1
        for i, item in enumerate(self._items):
            self.last = i == end
            yield item, self


# A dict's own attributes: jinja2's sandbox prefers them to its keys.
_DICT_ATTRIBUTES = frozenset(dir(dict))


class _Environment:
    """What the compiled code reads from its ``environment``."""

    def __init__(self, filters: Mapping[str, Callable[[Any], Any]]) -> None:
        self.filters = dict(filters)
        self.undefined = _refuse  # StrictUndefined: any use of an undefined value fails
        self.concat = "".join

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``obj.attribute``, for a dict's key or ``items``, a loop's ``last`` and a dataclass's
        field; else refused."""
        kind = type(obj)
        if kind is dict:
            if attribute not in _DICT_ATTRIBUTES:
                try:
                    return obj[attribute]
                except KeyError:
                    raise Refused from None
            if attribute == "items":
                return obj.items
        elif kind is _Loop and attribute == "last":
            return obj.last
        elif attribute in getattr(kind, "__dataclass_fields__", ()) and not attribute.startswith("_"):
            # A build's index entries (kitbuild.entries.Entry): a field is a plain attribute, which
            # the sandbox returns as it is.
            return getattr(obj, attribute)
        raise Refused

    def call(self, context: Any, obj: Any, *args: Any, _loop_vars: Any = None, _block_vars: Any = None, **kwargs: Any) -> Any:
        """``obj()``, for a dict's ``items``; else refused."""
        if args or kwargs or type(getattr(obj, "__self__", None)) is not dict or getattr(obj, "__name__", None) != "items":
            raise Refused
        return obj()


class _Context:
    """A render's names: the page context, without jinja2's globals (a name only they hold is
    refused, as is one nobody holds)."""

    __slots__ = ("_names",)

    def __init__(self, names: Mapping[str, Any]) -> None:
        self._names = names

    def resolve_or_missing(self, key: str) -> Any:
        try:
            return self._names[key]
        except KeyError:
            raise Refused from None


def _runtime() -> SimpleNamespace:
    from markupsafe import Markup, escape

    return SimpleNamespace(
        LoopContext=_Loop,
        Markup=Markup,
        escape=escape,
        missing=MISSING,
        Undefined=_Undefined,
        TemplateRuntimeError=Refused,
        identity=lambda x: x,
        internalcode=lambda f: f,
        TemplateNotFound=Refused,
        # Names jinja2 imports into every template's code, which the built-in ones do not use.
        **dict.fromkeys(("Macro", "Namespace", "TemplateReference", "markup_join", "str_join"), _refuse),
    )


_RUNTIME: SimpleNamespace | None = None


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    global _RUNTIME
    if name != "jinja2.runtime" or level != 0:
        raise Refused
    if _RUNTIME is None:
        _RUNTIME = _runtime()
    return _RUNTIME


_BUILTINS = {**builtins.__dict__, "__import__": _import}


def render(template: str, context: Mapping[str, Any], filters: Mapping[str, Callable[[Any], Any]]) -> str | None:
    """The built-in ``template`` rendered from ``context`` with these ``filters`` (besides jinja2's
    ``length``), or None when this runtime leaves it to jinja2: the template's compiled code is
    not current, or asked for something refused here, or failed."""
    code: CodeType | None = code_of(template)
    if code is None:
        return None
    namespace: dict[str, Any] = {
        "__builtins__": _BUILTINS,
        "__name__": module_name(template),
        "environment": _Environment({"length": len, **filters}),
    }
    try:
        exec(code, namespace)
        return "".join(namespace["root"](_Context(context)))
    except Exception:  # refused, or an error jinja2 meets again and reports
        return None
