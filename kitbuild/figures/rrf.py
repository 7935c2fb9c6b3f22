"""``rrf``: re-fuse ranked lists by reciprocal rank fusion and count rows against the stored fusion.

Each name gets, from every list it is in, ``weight / (k + rank)`` (rank from 1), summed. Points are
Fractions, so a tie is a tie exactly: floats can split a real tie or invent one depending on the
order they are added in. An exact tie goes to the better rank in the list named first (a name
absent from a list ranks after every present one), then in the next list, then to the name in
ascending order.

``count: rebuilt`` counts the rows whose fused top ``n`` equals the stored list's first ``n``;
``count: tie_across`` counts the rows whose fused ranks ``at`` and ``at + 1`` have exactly equal
points (where the tie rule, not the points, decided what is in the top ``at``).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

from kitbuild.figures.context import DEFAULT_KEY, Context
from kitbuild.figures.recount import Recount
from kitbuild.figures.value import FigureValue

DEFAULT_K = 60
DEFAULT_N = 10


def exact(number: int | float) -> Fraction:
    """A YAML number as the decimal it was written as: 0.5 -> 1/2, 0.1 -> 1/10 (not its binary neighbour)."""
    return Fraction(number) if isinstance(number, int) else Fraction(repr(number))


@functools.lru_cache(maxsize=256)
def _points_table(weights: tuple[Fraction, ...], k: Fraction, depths: tuple[int, ...]) -> tuple[int, tuple[tuple[int, ...], ...]]:
    # Every weight / (k + rank) this fusion can meet, as integers over one common denominator:
    # sums of integers are as exact as sums of Fractions, and far cheaper over thousands of rows.
    terms = [[weight / (k + rank) for rank in range(1, depth + 1)] for weight, depth in zip(weights, depths)]
    scale = math.lcm(1, *(term.denominator for row in terms for term in row))
    return scale, tuple((0, *(term.numerator * (scale // term.denominator) for term in row)) for row in terms)


def _fused(lists: Sequence[Sequence[str]], weights: Sequence[Fraction], k: Fraction) -> tuple[int, list[tuple[str, int]]]:
    scale, table = _points_table(tuple(weights), k, tuple(len(ranked) for ranked in lists))
    absent = max((len(ranked) for ranked in lists), default=0) + 1
    points: dict[str, int] = {}
    ranks: dict[str, list[int]] = {}
    for position, ranked in enumerate(lists):
        row = table[position]
        for rank, name in enumerate(ranked, 1):
            if name in ranks and ranks[name][position] != absent:
                continue  # a name listed twice counts at its better rank only
            points[name] = points.get(name, 0) + row[rank]
            ranks.setdefault(name, [absent] * len(lists))[position] = rank
    order = sorted(points, key=lambda name: (-points[name], ranks[name], name))
    return scale, [(name, points[name]) for name in order]


def fuse(lists: Sequence[Sequence[str]], weights: Sequence[Fraction], k: Fraction) -> list[tuple[str, Fraction]]:
    """Every name in ``lists``, in fused order, with its points (exact)."""
    scale, fused = _fused(lists, weights, k)
    return [(name, Fraction(points, scale)) for name, points in fused]


class Rrf(Recount):
    name = "rrf"
    summary = "Ranked lists re-fused by RRF (weights, k, exact ties to the list named first); rows whose fused top n equals a stored list, or with a tie across a rank."
    rows_from = "rows"

    def parts(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return ()

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        key = spec.get("key", DEFAULT_KEY)
        rows, keyed = ctx.keyed(spec["rows"], key, spec.get("skip"))
        k = exact(spec.get("k", DEFAULT_K))
        inputs = []
        for number, leg in enumerate(spec["lists"]):
            leg_rows, leg_keyed = ctx.keyed(leg["rows"], leg.get("key", key))
            inputs.append((number, leg, leg_rows, {entry.key: entry.row for entry in leg_keyed}))
        weights = [exact(leg["weight"]) for leg in spec["lists"]]
        tie_mode = spec.get("count", "rebuilt") == "tie_across"
        # figures.schema.json requires 'at' when count is tie_across.
        n: int = spec["at"] if tie_mode else spec.get("n", DEFAULT_N)

        outcomes = {}
        for entry in keyed:
            lists = []
            for number, leg, leg_rows, by_key in inputs:
                row = by_key.get(entry.key)
                if row is None:
                    ctx.fail(f"row {entry.key!r} of {rows.path} has no row in lists[{number}] ({leg_rows.path})")
                ranked = ctx.list_of_names(leg_rows, row, leg["ranked"], leg.get("item"))
                lists.append(ranked[: leg["depth"]] if "depth" in leg else ranked)
            _, fused = _fused(lists, weights, k)
            if tie_mode:
                outcomes[entry.key] = len(fused) > n and fused[n - 1][1] == fused[n][1]
            else:
                stored = ctx.list_of_names(rows, entry.row, spec["stored"], spec.get("item"))
                outcomes[entry.key] = [name for name, _ in fused[:n]] == stored[:n]
        return FigureValue(value=sum(outcomes.values()), of=len(outcomes), outcomes=outcomes)
