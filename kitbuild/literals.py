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

Without boundaries (the leak gate's private strings and shape anchors), a few literals may be
found by ``speedups.find_starts``, which tests all of them 16 bytes at a time. Which of the two
is faster depends on the literals more than on anything one can reason about: the automaton picks
its own prefilter, and ran the gate's 12 shape anchors at 1.7 GB/s but verify's 15 at 16 GB/s,
where find_starts runs both at about 5. So each such finder times both once, on fixed samples,
and keeps the faster; both give the same matches. Binary data has a choice of its own, timed on
the binary sample alone: verify's 15 ran at 14.9 GB/s through the automaton and 9.2 through
find_starts on random bytes, but at 6.8 and 9.4 on records, and one choice timed on both samples
summed their costs to within a percent, so that each worker of one verify took either search for
the binary files of workload A as the timing fell. Text is still timed on both samples: the
record sample holds none of a kit's own private strings, so alone it times the automaton's
prefilter at its best (the build's 6 private strings of workload B at 45 GB/s on it, against
0.25 on B's records, where they are dense, and 1.2 for find_starts); the binary sample's cost
stands in for the dense case, and with it the text choice stays find_starts there.

More literals than find_starts takes (a thousand box names) are found through the common prefixes of at most 16 groups of them (see
:class:`_Groups`), unless those prefixes turn out common in the data searched.
"""

from __future__ import annotations

import random
import time
from typing import Callable, Sequence

import ahocorasick_rs

from kitbuild.speedups import COMPILED, MAX_NEEDLES, Data, find_starts

# (start, end, literal index)
Match = tuple[int, int, int]
Boundary = Callable[[bytes, int, int, int, int], bool]


_SAMPLES: tuple[bytes, bytes] | None = None
# A search's data is binary when a NUL is among its first bytes (the leak scan tells binary data
# by the same test), and is then searched as the binary sample timed fastest; text, as both
# samples together did (see the module doc).
BINARY, TEXT = 0, 1  # the kinds; BINARY is also the binary sample's index in _samples()
_SNIFF = 4096


def kind_of(data: Data, lo: int = 0, hi: int | None = None) -> int:
    """:data:`BINARY` or :data:`TEXT`: whether ``data[lo:hi]`` has a NUL in its first bytes."""
    stop = lo + _SNIFF if hi is None else min(hi, lo + _SNIFF)
    return BINARY if data.find(b"\0", lo, stop) >= 0 else TEXT


def _samples() -> tuple[bytes, bytes]:
    """64 KiB of fixed pseudo-random bytes, and as much of an NDJSON record: what kits hold."""
    global _SAMPLES
    if _SAMPLES is None:
        line = b'{"path": "records/run-0001/rows-0001.ndjson", "route": "desktop", "reads": {"sha256": "%s"}, "score": 0.5}\n' % (b"0f" * 32)
        _SAMPLES = (random.Random(0).randbytes(1 << 16), line * ((1 << 16) // len(line)))
    return _SAMPLES


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
        # Where no boundary is checked, the matches are picked from every occurrence of every
        # literal (see _leftmost_longest). A single literal stays with the automaton, whose
        # memmem search outruns the compiled one (32 against 20 GB/s on random bytes).
        self._needles: tuple[bytes, ...] | None = None
        self._singles: list[ahocorasick_rs.BytesAhoCorasick] | None = None
        if boundary is None and 1 < len(self.literals) <= MAX_NEEDLES:
            # Longest first, so that at one offset the longest literal is reported first; equal
            # literals keep their order, as the automaton reports the first of them.
            self._owners = sorted(range(len(self.literals)), key=lambda i: (-len(self.literals[i]), i))
            self._needles = tuple(self.literals[i] for i in self._owners)
            self._lens = [len(n) for n in self._needles]
            # Without the compiled module, find_starts' twin (a find per literal) would be slower
            # than one automaton; one automaton per literal runs at memchr speed instead (the
            # 12 shape anchors: 0.2 GB/s, against 2.7).
            if not COMPILED:
                self._singles = [ahocorasick_rs.BytesAhoCorasick([n]) for n in self._needles]
        # For binary data and for text (BINARY, TEXT), each decided by _calibrate at the first
        # search of that kind.
        self._by_occurrences: list[bool | None] = [None, None]
        self._groups: _Groups | None = None
        if boundary is None and len(self.literals) > MAX_NEEDLES and COMPILED:
            self._groups = _Groups.of(self.literals)

    def __getstate__(self) -> dict[str, object]:  # automatons are rebuilt, not pickled
        return {"literals": self.literals, "boundary": self.boundary}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["literals"], state["boundary"])  # type: ignore[misc]

    def find(self, data: Data, lo: int = 0, hi: int | None = None) -> list[Match]:
        """Matches in ``data``; the boundary check sees ``lo``..``hi`` as the region's edges."""
        if hi is None:
            hi = len(data)
        groups = self._groups
        if groups is not None:
            found = groups.find(data, lo, hi)
            if found is not None:
                return found
            self._groups = None  # prefixes too common in these files: the automaton from now on
        if self._by_every_occurrence(data, lo, hi):
            return self._leftmost_longest(self._occurrences(data, lo, hi))
        view = data if (lo == 0 and hi == len(data)) else memoryview(data)[lo:hi]
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

    def _by_every_occurrence(self, data: Data, lo: int = 0, hi: int | None = None) -> bool:
        """Whether this finder picks its matches in ``data[lo:hi]`` from every occurrence (see
        :meth:`_calibrate`)."""
        if self._needles is None:
            return False
        kind = kind_of(data, lo, hi)
        chosen = self._by_occurrences[kind]
        if chosen is None:
            chosen = self._by_occurrences[kind] = self._calibrate(kind)
        return chosen

    def _calibrate(self, kind: int) -> bool:
        """Whether picking from every occurrence beats the automaton for these literals in data of
        ``kind``: timed on the binary sample for binary data, on both samples for text (see the
        module doc); about a millisecond, once per finder, kind and process."""
        costs = [0.0, 0.0]
        for sample in _samples() if kind == TEXT else (_samples()[BINARY],):
            for k, search in enumerate((lambda: self._longest.find_matches_as_indexes(sample), lambda: self._occurrences(sample, 0, len(sample)))):
                best = float("inf")
                for _ in range(3):
                    start = time.perf_counter()
                    search()
                    best = min(best, time.perf_counter() - start)
                costs[k] += best
        return costs[1] < costs[0]

    def _occurrences(self, data: Data, lo: int, hi: int) -> list[tuple[int, int]]:
        """(start, needle index) of every occurrence of every needle in ``data[lo:hi]``, overlapping
        ones too, sorted: ``find_starts``' answer, also where its twin would be too slow."""
        assert self._needles is not None
        if self._singles is None:
            return find_starts(data, self._needles, lo, hi)
        view = data if (lo == 0 and hi == len(data)) else memoryview(data)[lo:hi]
        return sorted((lo + s, k) for k, single in enumerate(self._singles) for _, s, _ in single.find_matches_as_indexes(view, overlapping=True))

    def _leftmost_longest(self, found: list[tuple[int, int]]) -> list[Match]:
        """The automaton's matches, picked from every occurrence: from the left, the longest at
        each offset, none overlapping one taken before it.

        Every occurrence is needed, overlapping ones too: with ``xa`` and ``aa`` over ``xaaa``,
        the ``aa`` at 1 is passed over and the one at 2 taken.
        """
        out: list[Match] = []
        taken_to = -1
        lens, owners = self._lens, self._owners
        for s, k in found:
            if s >= taken_to:
                taken_to = s + lens[k]
                out.append((s, taken_to, owners[k]))
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


class _Groups:
    """Many literals found through the common prefixes of at most MAX_NEEDLES groups of them.

    With more literals than ``find_starts`` takes (a thousand box names), the automaton ran the
    leak gate at 0.1–0.4 GB/s. But such names share their first bytes (``node-0``, ``/scratch/``),
    and a kit that passes the gate holds none of them: the groups' prefixes are searched by the
    compiled scan, and each rare place a prefix occurs is tried against its group's literals, by
    length, longest first. Where a prefix turns out common (over one occurrence per
    ``_DENSE`` bytes), :meth:`find` gives up and the automaton serves instead.
    """

    _DENSE = 256

    def __init__(self, needles: tuple[bytes, ...], members: list[list[tuple[int, dict[bytes, int]]]]) -> None:
        self.needles = needles
        self.members = members  # per needle: (length, literal -> first index) pairs, longest first

    @classmethod
    def of(cls, literals: Sequence[bytes]) -> "_Groups | None":
        """The literals grouped by the longest first bytes that make at most MAX_NEEDLES groups, or None.

        In sorted order, grouped by their first k bytes, two different neighbours part where they
        share fewer than k: the largest k that leaves MAX_NEEDLES groups is the MAX_NEEDLES-th
        smallest share. One sort, not a grouping per k (2,000 kit paths: 14 of them).
        """
        order = sorted(range(len(literals)), key=literals.__getitem__)
        ordered = [literals[i] for i in order]
        shares = [(_common(ordered[j - 1], ordered[j]), j) for j in range(1, len(ordered)) if ordered[j - 1] != ordered[j]]
        smallest = sorted(n for n, _ in shares)
        k = smallest[MAX_NEEDLES - 1] if len(smallest) >= MAX_NEEDLES else max(map(len, literals))
        if k == 0:
            return None
        needles: list[bytes] = []
        members = []
        start = 0
        for end in [j for n, j in shares if n < k] + [len(ordered)]:
            first, last = ordered[start], ordered[end - 1]
            needles.append(first[: _common(first, last)])  # sorted: the extremes' common prefix is the group's
            by_length: dict[int, dict[bytes, int]] = {}
            for i in order[start:end]:  # equal literals in their given order: the first one's index is kept
                by_length.setdefault(len(literals[i]), {}).setdefault(literals[i], i)
            members.append(sorted(by_length.items(), reverse=True))
            start = end
        return cls(tuple(needles), members)

    def find(self, data: Data, lo: int, hi: int) -> list[Match] | None:
        """The leftmost-longest matches in ``data[lo:hi]``, or None where the prefixes are common."""
        starts = find_starts(data, self.needles, lo, hi)
        if len(starts) * self._DENSE > max(hi - lo, 1 << 16):
            return None
        out: list[Match] = []
        taken_to = -1
        members = self.members
        best_end = best_index = -1
        at = -1
        for s, g in starts:
            if s != at:
                if best_end >= 0:
                    out.append((at, best_end, best_index))
                    taken_to = best_end
                    best_end = -1
                at = s
            if s < taken_to:
                continue
            for length, literals in members[g]:
                if s + length > hi or length <= best_end - s:
                    continue
                index = literals.get(bytes(data[s : s + length]))
                if index is not None:
                    best_end, best_index = s + length, index
                    break
        if best_end >= 0:
            out.append((at, best_end, best_index))
        return out


def _common(a: bytes, b: bytes) -> int:
    """How many first bytes ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def find_together(finders: Sequence[LiteralFinder], data: Data) -> list[list[Match]]:
    """``[f.find(data) for f in finders]``, in one compiled pass over ``data`` where each finder
    picks its matches from every occurrence and all their needles fit one ``find_starts``.

    The build's leak gate searches each window for the config's private strings and, apart, for
    the anchors of leak shapes (in one search, a shape could swallow a private string): two
    passes over every byte, a seventh of a binary file's build. Every occurrence of every
    needle, found in one pass, splits into each finder's own, from which it picks its matches as
    its own search would.
    """
    if not (COMPILED and all(f._by_every_occurrence(data) and f._singles is None for f in finders)):
        return [f.find(data) for f in finders]
    needles = tuple(n for f in finders for n in f._needles or ())
    if len(needles) > MAX_NEEDLES:
        return [f.find(data) for f in finders]
    found = find_starts(data, needles, 0, len(data))
    out: list[list[Match]] = []
    first = 0
    for f in finders:
        last = first + len(f._needles or ())
        out.append(f._leftmost_longest([(s, k - first) for s, k in found if first <= k < last]) if found else [])
        first = last
    return out
