"""Finding many literal strings in one pass, with the boundary rules rules need.

A kit may name two private paths or a thousand machine names; either way each chunk of a file is
searched once, by an Aho–Corasick automaton (``ahocorasick-rs``: SIMD-accelerated, made for
exactly this), instead of a regular expression whose alternation Python would try branch by
branch at every byte. Boundaries are then checked per match in Python, which costs per match, not
per byte.

The result is the one a regular expression ``(?<!L)(?:longest|...|shortest)(?!R)`` would give:
leftmost first, and at one position the longest literal whose boundaries hold. The fast path
(leftmost-longest, all boundaries hold) covers nearly every chunk; a chunk where some candidate
fails its boundary (``gpu-b17`` inside ``gpu-b170``) is searched again with every overlapping
candidate and resolved exactly.
"""

from __future__ import annotations

from typing import Callable, Sequence

import ahocorasick_rs

from kitbuild.speedups import Data

# (start, end, literal index)
Match = tuple[int, int, int]
SEPARATE_LITERALS = 8
Boundary = Callable[[bytes, int, int, int, int], bool]


def byte_class(chars: bytes) -> frozenset[int]:
    """A set of byte values, for boundary checks by ``data[i] in cls``."""
    return frozenset(chars)


class LiteralFinder:
    """Leftmost, longest, boundary-respecting occurrences of a fixed set of literals."""

    def __init__(self, literals: Sequence[bytes], boundary: Boundary | None = None) -> None:
        self.literals = [bytes(lit) for lit in literals]
        self.boundary = boundary
        usable = [lit for lit in self.literals if lit]
        if len(usable) != len(self.literals):
            raise ValueError("empty literal")
        self._longest = ahocorasick_rs.BytesAhoCorasick(self.literals, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
        self._all: ahocorasick_rs.BytesAhoCorasick | None = None
        # One automaton per literal runs at memchr speed (GB/s); one automaton for a handful of
        # literals that share common bytes can be ten times slower. Where no boundary is checked
        # (the leak gate), a few literals are searched one by one and the hits merged.
        self._singles = (
            [ahocorasick_rs.BytesAhoCorasick([lit]) for lit in self.literals]
            if boundary is None and 1 < len(self.literals) <= SEPARATE_LITERALS
            else None
        )

    def __getstate__(self) -> dict[str, object]:  # automatons are rebuilt, not pickled
        return {"literals": self.literals, "boundary": self.boundary}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["literals"], state["boundary"])  # type: ignore[misc]

    def find(self, data: Data, lo: int = 0, hi: int | None = None) -> list[Match]:
        """Matches in ``data``; the boundary check sees ``lo``..``hi`` as the region's edges."""
        if hi is None:
            hi = len(data)
        view = data if (lo == 0 and hi == len(data)) else memoryview(data)[lo:hi]
        if self._singles is not None:
            return self._merged(view, lo)
        found = self._longest.find_matches_as_indexes(view)
        if not found:
            return []
        check = self.boundary
        if check is None:
            return [(lo + s, lo + e, i) for i, s, e in found]
        # Boundaries belong to rewrite rules, whose chunks are bytes; only boundary-free finders
        # search a scan's bytearray window.
        assert isinstance(data, bytes) and not isinstance(view, bytearray)
        out = []
        for i, s, e in found:
            s += lo
            e += lo
            if not check(data, s, e, lo, hi):
                return self._resolve(data, lo, hi, view)
            out.append((s, e, i))
        return out

    def _merged(self, view: Data | memoryview, lo: int) -> list[Match]:
        """Leftmost-longest hits from one search per literal."""
        hits = [(lo + s, lo + e, i) for i, single in enumerate(self._singles or []) for _, s, e in single.find_matches_as_indexes(view)]
        if not hits:
            return []
        hits.sort(key=lambda h: (h[0], h[0] - h[1]))
        out: list[Match] = []
        taken_to = -1
        for hit in hits:
            if hit[0] >= taken_to:
                out.append(hit)
                taken_to = hit[1]
        return out

    def _resolve(self, data: bytes, lo: int, hi: int, view: bytes | memoryview) -> list[Match]:
        """The exact answer from every overlapping candidate (the slow path)."""
        if self._all is None:
            self._all = ahocorasick_rs.BytesAhoCorasick(self.literals, matchkind=ahocorasick_rs.MatchKind.Standard)
        candidates = sorted(self._all.find_matches_as_indexes(view, overlapping=True), key=lambda m: (m[1], m[1] - m[2]))
        check = self.boundary
        assert check is not None
        out: list[Match] = []
        taken_to = -1
        for i, s, e in candidates:
            s += lo
            e += lo
            if s < taken_to:
                continue
            if check(data, s, e, lo, hi):
                out.append((s, e, i))
                taken_to = e
        return out
