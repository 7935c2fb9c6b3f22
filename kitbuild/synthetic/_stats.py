"""The registered test: McNemar's exact two-sided test, Holm's adjustment, and the words."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb

# The registered decision rule: a gain counts only when it is at least this
# many questions and its Holm-adjusted p is at or below ALPHA.
MIN_DELTA = 10
ALPHA = 0.05
WIN = "a material gain"
NO_WIN = "no material difference"


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p on the discordant counts: twice the smaller binomial tail at 1/2, at most 1."""
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(comb(n, i) for i in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the order given."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (m - step) * p_values[i]))
        adjusted[i] = running
    return adjusted


def words(delta: int, p_holm: float) -> str:
    return WIN if delta >= MIN_DELTA and p_holm <= ALPHA else NO_WIN


def holm_first(p: float, family_size: int) -> float:
    """Holm-adjusted p of the family's smallest p-value, the only one w7's record carries."""
    return min(1.0, family_size * p)
