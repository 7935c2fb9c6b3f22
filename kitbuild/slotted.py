"""Value classes for verify's path, made without dataclasses.

verify imports its modules before it forks its workers, with the other cores idle. There,
importing dataclasses (and inspect, which it imports) and generating the methods of nine
classes took 20 to 25 ms of CPU: a tenth of what verify B spends before its workers start.
(Newer orjsons, 3.13 for one, import dataclasses themselves; there the classes' making, about
half of it, is what is saved.)

A class of :class:`Slotted` lists its fields in ``__slots__`` and writes its own ``__init__``;
equality, hashing, ``repr`` and :meth:`Slotted.replace` come from the fields, in that order.
"""

from __future__ import annotations

from typing import Any, TypeVar

_S = TypeVar("_S", bound="Slotted")


class Slotted:
    """A value of the fields named in its class's ``__slots__``."""

    __slots__ = ()

    def _fields(self) -> tuple[str, ...]:
        fields: tuple[str, ...] = type(self).__slots__  # the class's own: one level below Slotted
        return fields

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Slotted)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self._fields())})"

    def replace(self: _S, **changes: Any) -> _S:
        """A copy with ``changes`` to some of its fields."""
        fields = self._fields()
        unknown = set(changes).difference(fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        return type(self)(**{name: changes.get(name, getattr(self, name)) for name in fields})

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The fields as one tuple, in __init__'s order: pickle's default for a slotted object
        # (a state dict per object) costs the receiving process several times more.
        return (type(self), self._values())
