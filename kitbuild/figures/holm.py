"""``holm``: Holm's step-down adjustment of a family of p-values.

Sorted ascending, the i-th smallest of m p-values (i from 1) is multiplied by m - i + 1; each
adjusted value is then raised to the largest one before it, so the adjusted values keep the
order of the raw ones, and capped at 1. Equal p-values keep the family's order. Arithmetic is
exact: a p-value read from a file as a float is taken at its exact binary value.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping, Sequence

from kitbuild.figures.context import Context
from kitbuild.figures.recount import Recount
from kitbuild.figures.value import FigureValue


def holm_adjust(ps: Sequence[Fraction]) -> list[Fraction]:
    """The Holm-adjusted p-values, in the order given."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [Fraction(0)] * m
    running = Fraction(0)
    for step, index in enumerate(order):
        running = max(running, min(Fraction(1), (m - step) * ps[index]))
        adjusted[index] = running
    return adjusted


class Holm(Recount):
    name = "holm"
    summary = "Holm-adjusted p-values of a family of figures (parts, by name); value: how many are at or below alpha."

    def references(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return tuple(spec["family"])

    def parts(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return tuple(spec["family"])

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        names = list(spec["family"])
        if len(set(names)) != len(names):
            ctx.fail("the family names a figure twice")
        ps = []
        for name in names:
            value = ctx.figure(name).value
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or not 0 <= value <= 1:
                ctx.fail(f"{name!r} is {ctx.figure(name).text()!r}, not a p-value between 0 and 1")
            ps.append(Fraction(value))
        alpha = Fraction(str(spec.get("alpha", 0.05)))
        adjusted = holm_adjust(ps)
        parts = {name: FigureValue(p, format="p") for name, p in zip(names, adjusted)}
        return FigureValue(value=sum(1 for p in adjusted if p <= alpha), of=len(names), parts=parts)
