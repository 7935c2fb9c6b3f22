"""Reciprocal rank fusion, as the bench's own fuser applies it.

Each session gets, from every list it appears in, ``weight / (k + rank)`` with
ranks counted from 1, and the points are summed. Points are kept as integers
over one common denominator so that equal totals compare equal exactly; a
float sum can split a real tie (1/61 + 1/67 against 1/67 + 1/61 summed in the
other order) or invent one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction

K = 60

POINTS_RULE = (
    "each session gets weight / (k + rank) from every list it is in, rank counted from 1; the points are summed"
)

TIE_RULE = (
    "sort by summed points, highest first; points that are exactly equal "
    "(compared as exact fractions) go to the better rank in the list named "
    "first, a session absent from that list ranking after every present one, "
    "then the same on the next list, then the session name in ascending order"
)

Fused = list[tuple[str, int]]


@functools.lru_cache(maxsize=64)
def _point_table(weights: tuple[tuple[int, int], ...], depth: int) -> tuple[tuple[int, ...], ...]:
    # One denominator for every (weight, rank) pair this fusion can meet makes
    # each contribution an integer, so sums are exact and cheap. Index 0 is
    # unused; index depth + 1 stands for "absent" and is worth nothing, which
    # also makes an absent session sort after every present one on a tie.
    scale = math.lcm(*range(K + 1, K + depth + 1)) * math.lcm(*(den for _, den in weights))
    return tuple((0, *(num * (scale // den) // (K + rank) for rank in range(1, depth + 1)), 0) for num, den in weights)


def _table(lists: Sequence[Sequence[str]], weights: Sequence[Fraction]) -> tuple[tuple[int, ...], ...]:
    if len(lists) != len(weights):
        raise ValueError("one weight per list")
    # Keyed by integer pairs: hashing a Fraction costs more than the fusion.
    ratios = tuple(Fraction(w).as_integer_ratio() for w in weights)
    return _point_table(ratios, max(len(ranked) for ranked in lists))


def fuse(lists: Sequence[Sequence[str]], weights: Sequence[Fraction]) -> Fused:
    """Every session named in ``lists``, in fused order, with its points.

    Points are integers on a scale shared by one call only: compare them within
    a result, never across two fusions.
    """
    table = _table(lists, weights)
    absent = len(table[0]) - 1
    sessions = set().union(*lists)
    points = dict.fromkeys(sessions, 0)
    positions = []
    for row, ranked in zip(table, lists):
        where = dict.fromkeys(sessions, absent)
        where.update(zip(ranked, range(1, len(ranked) + 1)))
        for session, value in zip(ranked, row[1:]):
            points[session] += value
        positions.append(where)
    # Stable sorts from the last key to the first give the tie rule's order:
    # points, then rank in each list in the order named, then the name.
    order = sorted(sessions)
    for where in reversed(positions):
        order.sort(key=where.__getitem__)
    order.sort(key=points.__getitem__, reverse=True)
    return [(session, points[session]) for session in order]


def top(fused: Sequence[tuple[str, int]], n: int) -> list[str]:
    return [session for session, _ in fused[:n]]


def tie_across(fused: Sequence[tuple[str, int]], rank: int) -> bool:
    """True when the sessions at ``rank`` and ``rank + 1`` have exactly equal points."""
    return len(fused) > rank and fused[rank - 1][1] == fused[rank][1]
