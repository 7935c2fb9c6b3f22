"""JSON pointers (RFC 6901): how a figure names a value inside a JSON document or a row.

A pointer is the one way a figure spec names a field, whatever the file's format: ``/score/all@5``
inside an NDJSON row, ``/counts/answerable/all@5`` inside a JSON file, and ``/A2:all@5`` for the
column of that name in a TSV file (whose rows are flat, so the pointer has one step).
"""

from __future__ import annotations

import functools
from typing import Any

_MISSING = object()


class PointerMiss(Exception):
    """The pointer does not resolve; ``at`` is the longest prefix that did."""

    def __init__(self, pointer: str, at: str, why: str) -> None:
        super().__init__(why)
        self.pointer = pointer
        self.at = at
        self.why = why


@functools.lru_cache(maxsize=1024)
def tokens(pointer: str) -> tuple[str, ...]:
    """``'/a~1b/0'`` -> ``('a/b', '0')``. The schema guarantees a leading '/' or the empty pointer."""
    if pointer == "":
        return ()
    # ~1 before ~0, as RFC 6901 section 4 requires, so '~01' reads as '~1' and not '/'.
    return tuple(step.replace("~1", "/").replace("~0", "~") for step in pointer[1:].split("/"))


def _escape(step: str) -> str:
    return step.replace("~", "~0").replace("/", "~1")


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer``; raises :class:`PointerMiss` saying where it stopped and why."""
    node = document
    steps = tokens(pointer)
    for done, step in enumerate(steps):
        # (Where it stopped is spelled out only when it stops: a figure resolves a pointer in
        # every row, thousands of times.)
        if isinstance(node, dict):
            value = node.get(step, _MISSING)
            if value is _MISSING:
                here = _where(steps[:done])
                raise PointerMiss(pointer, here, f"no key {step!r} at {here}")
            node = value
        elif isinstance(node, list):
            if not step.isdigit() or (len(step) > 1 and step[0] == "0"):
                here = _where(steps[:done])
                raise PointerMiss(pointer, here, f"{step!r} is not an index of the list at {here}")
            index = int(step)
            if index >= len(node):
                here = _where(steps[:done])
                raise PointerMiss(pointer, here, f"the list at {here} has {len(node)} items, no index {index}")
            node = node[index]
        else:
            here = _where(steps[:done])
            raise PointerMiss(pointer, here, f"the value at {here} is {a_kind(node)}, not an object or a list")
    return node


def _where(done: tuple[str, ...]) -> str:
    return "/" + "/".join(_escape(s) for s in done) if done else "the top level"


def kind(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def a_kind(value: Any) -> str:
    """``kind`` with its article, for messages: 'an object', 'a list', 'null'."""
    name = kind(value)
    if name == "null":
        return "null"
    return ("an " if name[0] in "aeiou" else "a ") + name
