"""The numbers a figure's spec may hold: what its schema cannot say.

JSON Schema takes ``5.0`` and ``1e300`` for integers, and ``.inf`` and ``.nan`` for numbers above
zero (a NaN compares false with every bound). Each would reach a recount as it is: ``[:1e300]`` is
a TypeError, ``Fraction(inf)`` a ValueError, an integer past 64 bits cannot be written to
provenance.json, and an RRF ``k`` of ``1e300`` or ``1e-300`` makes every fusion's arithmetic on
numbers hundreds of digits long. A spec comes from kit.yaml (a build: exit 2 at its key) and from
a downloaded kit's provenance.json (verify: a finding), so each number is checked here, before any
recount sees it, by :func:`number_problem` (called by
:func:`kitbuild.figures.evaluation.validate_figures`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterator, Mapping

# Any number in a spec, a plugin recount's too: whole numbers that JSON readers everywhere read
# back the same (a double holds every integer to 2**53 exactly), and no infinity or NaN (which
# provenance.json cannot hold: JSON has no word for them).
MAX_WHOLE = 2**53 - 1
# The RRF constant and weights: far beyond any fusion's (k = 60; weights near 1), and few enough
# digits that the exact arithmetic stays on numbers of a few digits (see kitbuild.figures.rrf).
MAX_RRF_K = 1_000_000
RRF_K_DECIMALS = 3
MIN_WEIGHT, MAX_WEIGHT = Fraction(1, 10**6), Fraction(10**6)


class _Limits:
    """The bounds above (a spec a build reads from kit.yaml) or, for a spec a kit already stores
    (``stored``), only those that keep a recount from failing or taking hours: a kit an earlier
    version built with 'k: 60.0001' or a weight of 1e-7 was recounted right, and keeps verifying."""

    def __init__(self, stored: bool) -> None:
        self.whole = 2**63 - 1 if stored else MAX_WHOLE
        self.rrf_k, self.decimals = (10**12, 12) if stored else (MAX_RRF_K, RRF_K_DECIMALS)
        self.weights = (Fraction(1, 10**12), Fraction(10**12)) if stored else (MIN_WEIGHT, MAX_WEIGHT)

Path = tuple[str | int, ...]


def _shown(value: Any, limit: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > limit:
        return f"a whole number of {len(str(abs(value)))} digits"
    return repr(value)


def _numbers(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every number in ``value`` (a spec, or any part of one), with its key path."""
    stack: list[tuple[Path, Any]] = [(path, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(((*at, str(key)), inner) for key, inner in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend(((*at, i), inner) for i, inner in reversed(list(enumerate(item))))
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            yield at, item


def _any_number(value: int | float, limits: _Limits) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a number a figure can use (JSON has no infinity or NaN); write a finite number"
    if abs(value) > limits.whole:
        return f"{_shown(value, limits.whole)} is too large; a number here may be at most {limits.whole:,} either side of zero"
    return None


def _whole(value: Any, least: int, what: str) -> str | None:
    """A count: a whole number written as one, at least ``least``."""
    if isinstance(value, float):
        return f"{value!r} is not a whole number as written; {what} is a whole number ({least} or more), written without a decimal point"
    if isinstance(value, int) and not isinstance(value, bool) and value < least:
        return f"{value!r} is too small; {what} is a whole number, {least} or more"
    return None


def _decimal(value: float | int) -> Fraction:
    # As kitbuild.figures.rrf reads it: the decimal as written.
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def _rrf_k(value: Any, limits: _Limits) -> str | None:
    what = "k is the RRF constant (each list's weight / (k + rank))"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None  # (the schema's to refuse)
    if not 0 <= value <= limits.rrf_k:
        return f"{value!r} is out of range; {what}, from 0 to {limits.rrf_k:,}"
    if 10**limits.decimals % _decimal(value).denominator:
        return f"{value!r} has more than {limits.decimals} digits after the point; {what}: write it with {limits.decimals} or fewer, such as 60 or 60.5"
    return None


def _weight(value: Any, limits: _Limits) -> str | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    least, most = limits.weights
    if not least <= _decimal(value) <= most:
        return f"{value!r} is out of range; a list's weight is above zero, from {float(least):g} to {int(most):,}"
    return None


def _alpha(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not 0 < value <= 1:
        return f"{value!r} is out of range; alpha is a level above 0 and at most 1, such as 0.05"
    return None


def _own(recount: str, spec: Mapping[str, Any], limits: _Limits) -> Iterator[tuple[Path, str | None]]:
    """What is wrong with each number the built-in ``recount`` reads, by key path."""
    if recount in ("every_at_k", "any_at_k") and "k" in spec:
        yield ("k",), _whole(spec["k"], 1, "k (how many of the top of the ranked list to look at)")
    if recount == "read" and not isinstance(spec.get("of"), (str, type(None))):
        yield ("of",), _whole(spec["of"], 0, "'of' (what the value counts out of)")
    if recount == "holm" and "alpha" in spec:
        yield ("alpha",), _alpha(spec["alpha"])
    if recount == "rrf":
        for key, what in (("n", "n (how many of the top to compare)"), ("at", "at (the rank whose next rank ties)")):
            if key in spec:
                yield (key,), _whole(spec[key], 1, what)
        if "k" in spec:
            yield ("k",), _rrf_k(spec["k"], limits)
        lists = spec.get("lists")
        for number, leg in enumerate(lists if isinstance(lists, list) else []):
            if not isinstance(leg, Mapping):
                continue
            if "weight" in leg:
                yield ("lists", number, "weight"), _weight(leg["weight"], limits)
            if "depth" in leg:
                yield ("lists", number, "depth"), _whole(leg["depth"], 1, "depth (how many of the list to fuse)")


def number_problem(recount: str, spec: Mapping[str, Any], stored: bool = False) -> tuple[Path, str] | None:
    """The first number in a figure's ``spec`` that its recount cannot use: its key path (inside
    the figure) and what is wrong; None when every one is fine. Any number anywhere must be
    finite and at most :data:`MAX_WHOLE` either side of zero; a built-in recount's own numbers
    (a ``k``, a weight, an ``alpha``) must also be in their range. ``stored``: a spec a kit's
    provenance.json holds, held only to the bounds that keep its recount safe (see _Limits)."""
    limits = _Limits(stored)
    for path, value in _numbers(spec):
        problem = _any_number(value, limits)
        if problem:
            return path, problem
    for path, problem in _own(recount, spec, limits):
        if problem:
            return path, problem
    return None
