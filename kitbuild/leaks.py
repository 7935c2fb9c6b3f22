"""The leak gate: private text that must never reach a kit.

Two kinds of finding: the private strings a config names (source paths, ``map`` keys, box names,
the original digests of changed files), known only to the build; and generic shapes of private
paths (home folders, ``/root``, ``/mnt``, Windows user folders, ``file://`` addresses), which a
reader's verify can look for too. A finding says where and what kind of thing was found, never the
private text itself, so that a CI log of the report publishes nothing.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from kitbuild.digests import DIGEST_LENGTH, hex_runs
from kitbuild.literals import TEXT, LiteralFinder, find_together, kind_of
from kitbuild.slotted import Slotted
from kitbuild.speedups import COMPILED, MAX_NEEDLES, Data, leftmost_starts

# Shapes of paths that name a person or a machine's private folders, as bytes patterns. Each
# matches the shape plus its next path component, so an allow entry can pass one folder only.
_SEP = rb"(?:/|\\/)"  # a JSON encoder may escape '/' as '\/'
GENERIC_SHAPES: tuple[tuple[str, bytes], ...] = (
    ("a home folder path (/home/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"home" + _SEP + rb"[^/\\\s\"'<>|]+"),
    ("a home folder path (/Users/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"Users" + _SEP + rb"[^/\\\s\"'<>|]+"),
    ("a root home path (/root/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"root" + _SEP + rb"[^/\\\s\"'<>|]*"),
    ("a mounted volume path (/mnt/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"mnt" + _SEP + rb"[^/\\\s\"'<>|]*"),
    ("a Windows user folder path (C:\\Users\\...)", rb"\b[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)[^/\\\s\"'<>|]+"),
    ("a file:// address", rb"\bfile://[^\s\"'<>]*"),
)


class LeakFinding(Slotted):
    """Private text found in a kit file: ``path:line:col: what``."""

    __slots__ = ("path", "line", "col", "what")

    def __init__(self, path: str, line: int, col: int, what: str) -> None:
        self.path, self.line, self.col, self.what = path, line, col, what

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.what}"


def distinct(leaks: Iterable[LeakFinding]) -> list[LeakFinding]:
    """Each finding once (a binary file's overlapping windows may find one twice), in kit order."""
    return sorted(set(leaks), key=lambda f: (f.path, f.line, f.col, f.what))


# Literal text every match of a shape contains, and how many bytes before it the match starts
# (None: an e-mail address, whose local part runs back a variable length). An Aho–Corasick pass
# finds the anchors and the shape's pattern is tried only where one stands: a pattern
# alternation run over every byte is the slow part of a scan, and most chunks hold no anchor.
SHAPE_ANCHORS: dict[str, tuple[tuple[bytes, int | None], ...]] = {
    "a home folder path (/home/...)": ((b"/home/", 0), (b"\\/home\\/", 0)),
    "a home folder path (/Users/...)": ((b"/Users/", 0), (b"\\/Users\\/", 0)),
    "a root home path (/root/...)": ((b"/root/", 0), (b"\\/root\\/", 0)),
    "a mounted volume path (/mnt/...)": ((b"/mnt/", 0), (b"\\/mnt\\/", 0)),
    "a Windows user folder path (C:\\Users\\...)": ((b":\\Users", 1), (b":\\\\Users", 1), (b":/Users", 1)),
    "a file:// address": ((b"file://", 0),),
    "an e-mail address": ((b"@", None),),
    "a private IPv4 address": ((b"10.", 0), (b"172.", 0), (b"192.168.", 0)),
}
# Bytes that rule a shape's anchor out before its pattern is tried: the byte before the match
# may not be one of the first set, the byte right after the anchor must be one of the second.
# Each mirrors the pattern's own lookbehind and first step, so an anchor ruled out is one the
# pattern would refuse. Records can hold an anchor on every line ('10.' in 'rows-010.ndjson',
# a score of 0.9210.): a pattern tried from each cost verify 0.18 s of 1.76 on workload B, on
# one job.
SHAPE_GUARDS: dict[str, tuple[frozenset[int], frozenset[int]]] = {
    "a private IPv4 address": (frozenset(b"0123456789."), frozenset(b"0123456789")),
}
_LOCAL_PART = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_MAX_LOCAL_PART = 64
# Where a window is binary (literals.kind_of: a NUL in its first 4 KiB), its anchors are left to
# the automaton: in binary bytes its prefilter runs faster than the compiled search (13.5 against
# 6.7 GB/s on workload A's files), in text slower (3.9 against 7.1 on B's records, counting the
# guards). The same matches either way.
# How far past its anchor a shape's match may reach (it never crosses a line end).
_AFTER = 4096


class ShapeFinder:
    """Matches of regex shapes, found from their anchors (see ``SHAPE_ANCHORS``)."""

    def __init__(self, shapes: Iterable[tuple[str, bytes]]) -> None:
        self.whats: list[str] = []
        self.patterns: list[re.Pattern[bytes]] = []
        anchors: list[bytes] = []
        owners: list[tuple[int, int | None, tuple[frozenset[int], frozenset[int]] | None]] = []
        self._unanchored: list[int] = []
        for what, shape in shapes:
            index = len(self.whats)
            self.whats.append(what)
            self.patterns.append(re.compile(shape))
            known = SHAPE_ANCHORS.get(what)
            if not known:
                self._unanchored.append(index)
                continue
            for anchor, back in known:
                anchors.append(anchor)
                owners.append((index, back, SHAPE_GUARDS.get(what)))
        self._owners = owners
        self._anchors = LiteralFinder(anchors) if anchors else None
        # With the compiled scans, the anchors are found, chosen leftmost-longest and tested
        # against their guards in one call (speedups.leftmost_starts): most '10.' in a record's
        # hex are refused by the guard, and refused one by one here they cost verify a fifth of
        # its leak scan on workload B. The longest first, as the automaton picks at one offset.
        self._compiled: tuple[tuple[bytes, ...], list[int], tuple[tuple[bytes, bytes] | None, ...]] | None = None
        if COMPILED and 1 < len(anchors) <= MAX_NEEDLES:
            order = sorted(range(len(anchors)), key=lambda i: (-len(anchors[i]), i))
            guards = tuple(None if (g := owners[i][2]) is None else (bytes(sorted(g[0])), bytes(sorted(g[1]))) for i in order)
            self._compiled = (tuple(anchors[i] for i in order), order, guards)

    @property
    def anchors(self) -> tuple[bytes, ...] | None:
        """The literals every match stands on (one of them at least), or None when a shape has no
        anchor and is searched for everywhere."""
        if self._unanchored:
            return None
        return tuple(self._anchors.literals) if self._anchors is not None else ()

    @property
    def anchor_finder(self) -> LiteralFinder | None:
        """What finds the anchors (see :func:`~kitbuild.literals.find_together`)."""
        return self._anchors

    def leftmost_args(self, data: Data) -> tuple[tuple[bytes, ...], tuple[tuple[bytes, bytes] | None, ...]] | None:
        """The needles and guards :meth:`find` gives ``leftmost_starts`` for ``data``, or None when
        it finds the anchors otherwise there (no compiled scans, too many anchors, binary data).
        A caller that searches ``data`` for more (kitbuild.filescan, with ``record_walk``)
        can run that search with its own and hand the result to :meth:`find`."""
        if self._compiled is not None and kind_of(data) == TEXT:
            return self._compiled[0], self._compiled[2]
        return None

    def find(self, data: Data, anchored: list[tuple[int, int, int]] | None = None, leftmost: list[tuple[int, int]] | None = None) -> list[tuple[int, int, int]]:
        """(start, end, shape index) of every match, in order; ``anchored``: the anchor finder's
        matches in ``data``, if already found; ``leftmost``: what ``leftmost_starts`` gave on
        ``data`` with :meth:`leftmost_args`, if that ran already."""
        found: set[tuple[int, int, int]] = set()
        hits: list[tuple[int, int, int]] = []
        compiled = self._compiled
        if anchored is not None:
            hits = anchored
        elif compiled is not None and (leftmost is not None or kind_of(data) == TEXT):
            needles, order, guards = compiled
            if leftmost is None:
                leftmost = leftmost_starts(data, needles, guards)
            hits = [(at, at + len(needles[k]), order[k]) for at, k in leftmost]
        elif self._anchors is not None:
            hits = self._anchors.find(data)
        for a_start, a_end, a in hits:
            index, back, guard = self._owners[a]
            if guard is not None and ((a_start > 0 and data[a_start - 1] in guard[0]) or a_end >= len(data) or data[a_end] not in guard[1]):
                continue
            if back is None:
                start = a_start
                floor = max(0, a_start - _MAX_LOCAL_PART)
                while start > floor and data[start - 1] in _LOCAL_PART:
                    start -= 1
            else:
                start = a_start - back
                if start < 0:
                    continue
            line_end = data.find(b"\n", a_end, a_end + _AFTER)
            hi = line_end if line_end >= 0 else min(len(data), a_end + _AFTER)
            m = self.patterns[index].match(data, start, hi)
            if m is not None and a_end <= m.end():
                found.add((m.start(), m.end(), index))
        for index in self._unanchored:
            found.update((m.start(), m.end(), index) for m in self.patterns[index].finditer(data))
        return sorted(found)


class LeakScanner:
    """Scans byte chunks that end at line ends for private strings, shapes and digests."""

    def __init__(
        self,
        private: Mapping[str, str],
        digests: Mapping[str, str] | None = None,
        allow: Iterable[str] = (),
        shapes: Iterable[tuple[str, bytes]] = GENERIC_SHAPES,
    ) -> None:
        what: dict[bytes, str] = {}
        for text, description in private.items():
            if text:
                what.setdefault(text.encode("utf-8"), description)
                # A JSON encoder may write '/' as '\/'; the rules do not rewrite that spelling,
                # so the gate must still see it.
                if "/" in text:
                    what.setdefault(text.replace("/", "\\/").encode("utf-8"), description)
        # Private strings are searched on their own: in one search with the shapes, a shape that
        # starts earlier (file://...) would swallow a private path inside it, and the finding
        # would read as a generic shape, which an allow entry may pass.
        self._private = list(what.items())
        self._private_finder = LiteralFinder([k for k, _ in self._private]) if self._private else None
        self._shapes = ShapeFinder(shapes)
        self._digests = {d.lower(): description for d, description in (digests or {}).items()}
        self._exact = all(len(d) == DIGEST_LENGTH for d in self._digests)  # all of them whole digests
        self._allow = [a.encode("utf-8") for a in allow if a]

    def _allowed(self, chunk: Data, start: int, end: int) -> bool:
        if not self._allow:
            return False
        line_start = chunk.rfind(b"\n", 0, start) + 1
        line_end = chunk.find(b"\n", end)
        line = chunk[line_start : line_end if line_end >= 0 else len(chunk)]
        s, e = start - line_start, end - line_start
        for text in self._allow:
            pos = line.find(text)
            while pos >= 0:
                if pos <= s and e <= pos + len(text):
                    return True
                pos = line.find(text, pos + 1)
        return False

    def scan(self, path: str, chunk: Data, first_line: int, lo: int = 0, col0: int = 0) -> list[LeakFinding]:
        """Findings in ``chunk``, whose first byte is on line ``first_line``, ``col0`` bytes after
        the line's start; a finding that ends at or before ``lo`` is left out (a binary file's
        window repeats the end of the previous one, where it was reported already)."""
        hits: list[tuple[int, int, str, bool]] = []
        anchors = self._shapes.anchor_finder
        anchored = None
        if self._private_finder is not None:
            # Both searches in one pass where they can share it (see find_together).
            private, *rest = find_together([self._private_finder, *([anchors] if anchors is not None else [])], chunk)
            anchored = rest[0] if rest else None
            for start, end, i in private:
                hits.append((start, end, self._private[i][1], False))
        for start, end, i in self._shapes.find(chunk, anchored):
            hits.append((start, end, self._shapes.whats[i], True))
        if self._digests:
            for start, end in hex_runs(chunk):
                run = chunk[start:end].decode("ascii").lower()
                if end - start == DIGEST_LENGTH and self._exact:
                    # A run a digest long holds a withheld digest only if it is one: one lookup,
                    # where comparing it with each withheld digest in turn made scanning index.json
                    # and SHA256SUMS quadratic (0.9 s for 2,000 records).
                    found = self._digests.get(run)
                    if found is not None:
                        hits.append((start, end, found, False))
                    continue
                for digest, description in self._digests.items():
                    at = run.find(digest)
                    if at >= 0:
                        hits.append((start + at, start + at + len(digest), description, False))
        if not hits:
            return []
        findings = []
        # Only generic shapes can be allowed: a string the config itself names private never is.
        # Lines are counted from the previous finding on, so many findings cost one pass.
        line, counted = first_line, 0
        for start, end, description, allowable in sorted(hits):
            if end <= lo or (allowable and self._allowed(chunk, start, end)):
                continue
            line += chunk.count(b"\n", counted, start)
            counted = start
            findings.append(LeakFinding(path, line, column(chunk, start, col0), description))
        return findings


def column(chunk: Data, pos: int, col0: int = 0) -> int:
    """The column (from 1) of ``chunk[pos]``, whose first line began ``col0`` bytes before the chunk."""
    nl = chunk.rfind(b"\n", 0, pos)
    return pos - nl if nl >= 0 else col0 + pos + 1


# What a reader's ``kitbuild verify`` looks for besides GENERIC_SHAPES. The build's gate does not
# use these: a record may name a public contact or a documentation address on purpose, and the
# build's allow list exists to say so; verify reports them unless that list covers them.
_OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
READER_SHAPES: tuple[tuple[str, bytes], ...] = (
    ("an e-mail address", rb"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"),
    (
        "a private IPv4 address",
        rb"(?<![0-9.])(?:10(?:\." + _OCTET + rb"){3}|172\.(?:1[6-9]|2[0-9]|3[01])(?:\." + _OCTET + rb"){2}"
        rb"|192\.168(?:\." + _OCTET + rb"){2})(?![0-9]|\.[0-9])",
    ),
)
