"""Values a page may print: those whose text is the same on every run.

A function, a method, a generator or an object Python prints by its address (``{{ title.upper }}``,
``{{ files|map(attribute='path') }}`` without ``|list``, ``{{ cycler(1, 2) }}``) prints
``<... at 0x7f34ac83e1c0>``, which differs from one run to the next: a page holding it would never
render again the same from the kit. It is refused where it is printed, at the template's line.
"""

from __future__ import annotations

import types
from typing import Any

import jinja2

_CONTAINERS = (list, tuple, dict, set, frozenset)
# Their own repr names where Python keeps them.
_ADDRESSED = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
)


class Unsteady(jinja2.TemplateError):
    """A template printed a value whose text differs from one run to the next."""


def _addressed(value: Any, printed: bool) -> bool:
    """Whether ``value``'s text (its str when ``printed`` whole, else its repr) holds an address."""
    kind = type(value)
    if isinstance(value, _ADDRESSED):
        return True
    if printed and kind.__str__ is not object.__str__:
        return False  # (a text of its own: a figure, a Markup)
    return kind.__repr__ is object.__repr__


def check_steady(value: Any) -> None:
    """Refuses ``value`` (already measured, so its walk is bounded) if its text would hold an address."""
    if isinstance(value, (str, int, float)) or value is None:
        return
    stack, printed = [value], True
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, _CONTAINERS):
            stack.extend(item)
        elif not isinstance(item, (str, int, float)) and item is not None and _addressed(item, printed and item is value):
            raise Unsteady(
                "it prints a function, a method or an iterator (such as a filter's result before '|list'), whose text "
                "says where Python keeps it and so differs from one run to the next; print a value: call it, or add '|list'"
            )
