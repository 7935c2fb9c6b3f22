"""One streaming pass over one kit file: everything ``kitbuild verify`` needs to learn from it.

Each file is read once, in fixed-size blocks, whatever its line lengths (a kit from anywhere may
hold a 100 MB line). In that pass it is hashed, compared with the page it should be, and searched
for the digests it prints, the placeholder, the words the rules wrote and leak shapes. Every
search is a C-level pass over the whole block (the scans of :mod:`kitbuild.speedups`, an
Aho–Corasick automaton, a regular expression from a candidate found in C); Python runs per
match, never per byte or per line. A file up to a block is read with one call and searched
where it lies (:func:`_scan_one`).

A larger file is searched over a window kept in a bytearray: a little context before, the bytes
carried from the previous block, then the new block, read from the file straight into the window
(:func:`kitbuild.speedups.refill`; a file from an archive is read into a reused buffer and
appended). A match is taken only if it starts in the window's settled part, which ends
at the last line end at least :data:`_MARGIN` bytes before the window's end (or, inside a line
longer than that, :data:`_MARGIN` bytes before the end), so a match is never cut by a block edge
and never counted twice.

Only a record that prints a real digest (a run of 64 hex digits) is parsed for (path, digest)
pairs: a pair whose digest is a placeholder always holds, so parsing the many records that print
only placeholders would check nothing. JSON documents are parsed whole and NDJSON records line by
line, up to :data:`PAIR_PARSE_LIMIT` bytes each, so memory stays bounded by that limit.

Where something was found is kept as a byte offset; :func:`locate` turns the few offsets a report
prints into lines and columns, reading the file again only when it has a finding to place.

:func:`scan_file` is a pure function of a kit reader, a kit path and a picklable :class:`ScanPlan`;
:func:`scan_files` maps it over a kit's files in forked workers (:mod:`kitbuild.crew`).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import itertools
import mmap
import os
import re
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Generator, Iterable, Iterator, Mapping, Sequence, TypeVar

import orjson

from kitbuild.kitfs import KitFS, MemberError
from kitbuild.leaks import GENERIC_SHAPES, READER_SHAPES, ShapeFinder
from kitbuild.literals import LiteralFinder
from kitbuild.memory import collector_paused, freed_blocks_kept, keep_freed_blocks, read_blocks
from kitbuild.progress import SILENT, Progress
from kitbuild.fileformat import format_of
from kitbuild.schema import key_path
from kitbuild.slotted import Slotted
from kitbuild import crew, mapped
from kitbuild.crew import Crew
from kitbuild.speedups import COMPILED, DIGEST_LENGTH, MAX_NEEDLES, PREFIX, Data, census, count_starts, email_ats, quiet, record_walk, refill

if TYPE_CHECKING:
    import hashlib

BLOCK_SIZE = 1 << 20
PAIR_PARSE_LIMIT = 16 << 20
# Longer than any match that must be seen whole (a prefixed digest is 71 bytes; a shape reaches
# at most 4,096 bytes past its anchor; an allow entry rarely passes a few hundred), and the
# context kept before a window for look-behind assertions and an e-mail's local part.
_MARGIN = 8192
_LOOKBACK = 4096
_DIFF_CONTEXT = 200

_T = TypeVar("_T")  # what a scan of a whole small file gives (see _scan_run)

LEAK_SHAPES: tuple[tuple[str, str, bytes], ...] = tuple(
    [("KB501", what, shape) for what, shape in GENERIC_SHAPES]
    + [("KB502" if "e-mail" in what else "KB503", what, shape) for what, shape in READER_SHAPES]
)
_EMAIL = next(i for i, (_, what, _) in enumerate(LEAK_SHAPES) if "e-mail" in what)
_LOCAL_PART = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_MAX_LOCAL_PART = 64
_MAX_AFTER_ANCHOR = 4096
_DIGEST_VALUE = re.compile(r"(?:sha256:)?([0-9A-Fa-f]{64})")
_PATH_KEYS = {"path", "file", "filename", "file_path", "filepath", "name_path"}
_DIGEST_KEYS = {"sha256", "sha256sum", "digest", "checksum"}


def _sha256(data: bytes = b"") -> hashlib._Hash:
    """hashlib's SHA-256. hashlib is imported here, at first use, not with the module: loading
    OpenSSL took 4 to 6 ms of verify's start, before its workers fork, and large files are hashed
    by the compiled hash (kitbuild.mapped) where there is one."""
    import hashlib

    return hashlib.sha256(data)


class ScanPlan(Slotted):
    """What to look for in the kit's files; the same for every file (not changed once made:
    :meth:`~kitbuild.slotted.Slotted.replace` makes another)."""

    __slots__ = ("records", "paths", "placeholders", "words", "allow", "expect", "block_size", "pair_limit")

    def __init__(
        self,
        records: frozenset[str],  # kit paths of record files: digests, words and pairs are read there
        paths: frozenset[str],  # every kit path a record may pair with a digest
        placeholders: tuple[str, ...] = (),
        words: tuple[tuple[str, ...], ...] = (),  # per re-observable rule: the forms of the words it wrote
        allow: tuple[str, ...] = (),
        expect: Mapping[str, bytes] | None = None,  # page path -> the bytes it must have
        block_size: int = BLOCK_SIZE,
        pair_limit: int = PAIR_PARSE_LIMIT,
    ) -> None:
        self.records, self.paths, self.placeholders, self.words, self.allow = records, paths, placeholders, words, allow
        self.expect: Mapping[str, bytes] = {} if expect is None else expect
        self.block_size, self.pair_limit = block_size, pair_limit


# What scans a file read in one piece: (path, bytes, plan, hex digest if known already).
Whole = Callable[[str, bytes, ScanPlan, "str | None"], _T]


class Leak(Slotted):
    """A leak shape at byte ``offset`` of a file (see :func:`locate` for its line and column)."""

    __slots__ = ("code", "offset", "what")

    def __init__(self, code: str, offset: int, what: str) -> None:
        self.code, self.offset, self.what = code, offset, what


class FileScan(Slotted):
    """What one pass learned about one file. Positions are byte offsets into the file."""

    __slots__ = ("path", "size", "sha256", "error", "digests", "placeholders", "words", "leaks", "pairs", "pairs_unread", "page_diff")

    def __init__(
        self,
        path: str,
        size: int = 0,
        sha256: str = "",
        error: MemberError | None = None,
        digests: dict[str, list[int]] | None = None,  # lower-case hex -> [count, offset of the first]
        placeholders: list[int] | None = None,
        words: list[int] | None = None,
        leaks: list[Leak] | None = None,
        # (key path, kit path, the digest it says) -> [how many records say so, offset of the first
        # such NDJSON record, or None in a JSON document]. Placeholders are left out: they always hold.
        pairs: dict[tuple[str, str, str], list[Any]] | None = None,
        pairs_unread: bool = False,  # a record that prints a digest but is too large or not parseable
        page_diff: tuple[int, str, str] | None = None,  # (line, expected line, found line)
    ) -> None:
        self.path, self.size, self.sha256, self.error = path, size, sha256, error
        self.digests: dict[str, list[int]] = {} if digests is None else digests
        self.placeholders: list[int] = [] if placeholders is None else placeholders
        self.words: list[int] = [] if words is None else words
        self.leaks: list[Leak] = [] if leaks is None else leaks
        self.pairs: dict[tuple[str, str, str], list[Any]] = {} if pairs is None else pairs
        self.pairs_unread, self.page_diff = pairs_unread, page_diff


# -- what a plan compiles to, once per process ----------------------------------------------------


def _overlap_free(needles: Sequence[bytes]) -> bool:
    """True when no two occurrences of these needles (one needle's twice included) can overlap.

    Then the leftmost-longest count a regex alternation gives is the plain sum of
    ``bytes.count`` per needle, and an occurrence belongs to the window its start is in.
    """
    for a in needles:
        for b in needles:
            if a != b and a in b:
                return False
            if any(a[-k:] == b[:k] for k in range(1, min(len(a), len(b)))):
                return False
    return True


class _Counter:
    """Counts leftmost-longest, non-overlapping occurrences of a set of literals."""

    def __init__(self, forms: Iterable[str]) -> None:
        needles = sorted({f.encode("utf-8") for f in forms if f}, key=lambda b: (-len(b), b))
        self.needles = needles
        fast = _overlap_free(needles) and all(len(n) <= _MARGIN for n in needles)
        self.finder = None if fast or not needles else LiteralFinder(needles)

    def count(self, window: Data, lo: int, safe: int, resume: int) -> tuple[int, int]:
        """Occurrences that start in ``window[lo:safe]``, and where the next search resumes."""
        if self.finder is None:
            return sum(window.count(n, lo, safe + len(n) - 1) for n in self.needles), resume
        n = 0
        for s, e, _ in self.finder.find(window, max(lo, resume)):
            if s >= safe:
                break
            n += 1
            resume = e
        return n, resume


class _Compiled:
    def __init__(self, plan: ScanPlan) -> None:
        self.plan = plan
        self._paths: LiteralFinder | None | bool = False
        self.counters = [_Counter([p]) for p in plan.placeholders] + [_Counter(forms) for forms in plan.words]
        # Needles whose counts are plain occurrence counts, all counted in one pass per group
        # (speedups.count_starts), with the counter each one adds to.
        plain = [(i, n) for i, k in enumerate(self.counters) if k.finder is None for n in k.needles]
        self.plain = [
            (tuple(n for _, n in group), [i for i, _ in group])
            for group in (plain[g : g + MAX_NEEDLES] for g in range(0, len(plain), MAX_NEEDLES))
        ]
        self.found = [(i, k) for i, k in enumerate(self.counters) if k.finder is not None]
        others = [i for i in range(len(LEAK_SHAPES)) if i != _EMAIL]
        self.shape_index = others
        self.shapes = ShapeFinder([(LEAK_SHAPES[i][1], LEAK_SHAPES[i][2]) for i in others])
        self.email = re.compile(LEAK_SHAPES[_EMAIL][2])
        self.allow = tuple(a.encode("utf-8") for a in plan.allow if a)
        # What a file must hold none of for every search of its scan to come back empty (with no
        # digest and no e-mail '@', see speedups.quiet): each counter's needles and each leak
        # shape's anchors. None when a shape has no anchor (it could match anywhere), and without
        # the compiled scans, whose pure-Python twin costs more than the searches it would spare.
        anchors = self.shapes.anchors
        self.all_anchored = anchors is not None
        needles = sorted({*(anchors or ()), *(n for k in self.counters for n in k.needles)})
        self.quiet = None if anchors is None or not COMPILED else tuple(tuple(needles[g : g + MAX_NEEDLES]) for g in range(0, len(needles), MAX_NEEDLES))

    @property
    def paths(self) -> LiteralFinder | None:
        """Every kit path, to skip records that print a digest but name no file here (built on first use).

        None when a kit path holds a line break: a match could then run from one record into the
        next, and every record with a digest is parsed.
        """
        if self._paths is False:
            paths = [p.encode("utf-8") for p in sorted(self.plan.paths) if p]
            self._paths = LiteralFinder(paths) if paths and not any(b"\n" in p for p in paths) else None
        return self._paths  # type: ignore[return-value]


_COMPILED: tuple[ScanPlan, _Compiled] | None = None


def _compiled(plan: ScanPlan) -> _Compiled:
    global _COMPILED
    if _COMPILED is None or _COMPILED[0] is not plan:
        _COMPILED = (plan, _Compiled(plan))
    return _COMPILED[1]


# -- leaks ----------------------------------------------------------------------------------------


def _emails(pattern: re.Pattern[bytes], window: Data, lo: int, safe: int, ats: list[int] | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of e-mail addresses starting in ``window[lo:safe]``, found from their '@'
    (``ats``: what ``email_ats`` gives for the whole window, if known already).

    The same match the leak gate's anchor search makes: the local part is read back from the
    '@' (at most 64 bytes), and the shape is tried there, up to the line's end. Only an '@' that
    a domain follows is looked at: records full of '@' that start no address ("any@5") cost no
    Python.
    """
    for at in email_ats(window, lo, safe + _MAX_LOCAL_PART) if ats is None else ats:
        start, floor = at, max(0, at - _MAX_LOCAL_PART)
        while start > floor and window[start - 1] in _LOCAL_PART:
            start -= 1
        if not lo <= start < safe:
            continue
        line_end = window.find(b"\n", at + 1, at + 1 + _MAX_AFTER_ANCHOR)
        m = pattern.match(window, start, line_end if line_end >= 0 else min(len(window), at + 1 + _MAX_AFTER_ANCHOR))
        if m is not None and at < m.end():
            yield m.start(), m.end()


def _allowed(allow: tuple[bytes, ...], window: Data, start: int, end: int) -> bool:
    """True when an allow entry covers ``window[start:end]`` on its own line."""
    for t in allow:
        pos = window.find(t, max(0, end - len(t)), start + len(t))
        while 0 <= pos <= start:
            if end <= pos + len(t) and b"\n" not in window[pos : pos + len(t)]:
                return True
            pos = window.find(t, pos + 1, start + len(t))
    return False


# -- pairs in JSON records ----------------------------------------------------------------------


_PATH_KEY, _DIGEST_KEY = 1, 2
# Each key's kind, as a record's keys come again line after line (bounded: a hostile record's
# keys could be all different).
_KEY_KINDS: dict[str, int] = {}
_SAID_LENGTHS = (DIGEST_LENGTH, DIGEST_LENGTH + len(PREFIX))  # a bare digest, or one after "sha256:"


def _key_kind(key: str) -> int:
    """_PATH_KEY if ``key`` names a path (``path``, ``file``, ``*_path``...), _DIGEST_KEY if a
    digest (``sha256``, ``checksum``, ``*_digest``...), by its lower case."""
    kind = _KEY_KINDS.get(key)
    if kind is None:
        k = key.lower()
        kind = (_PATH_KEY if k in _PATH_KEYS or k.endswith("_path") else 0) | (
            _DIGEST_KEY if k in _DIGEST_KEYS or k.endswith("sha256") or k.endswith("_digest") else 0
        )
        if len(_KEY_KINDS) < 4096:
            _KEY_KINDS[key] = kind
    return kind


def json_pairs(document: Any, paths: frozenset[str], placeholders: tuple[str, ...]) -> Iterator[tuple[str, str, str]]:
    """(key path, kit path, what it says) for each digest ``document`` pairs with a kit path.

    A pair is an object with exactly one path-like field and one sha256-like field (``{"path":
    ..., "sha256": ...}``), or a mapping entry from a kit path to a digest. The walk uses its own
    stack: a hostile record nested a thousand deep must not exhaust Python's recursion limit.
    Each object's fields are looked at once, each key's kind is looked up, and only a string of
    a digest's length is matched against the digest pattern; a key path is spelled out only for
    a pair. A line of workload B's records took 28.5 µs here when each field went through three
    passes and the pattern, 15.1 µs with a key's kind worked out at each, and takes 11.5 µs.
    """
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    kinds = _KEY_KINDS
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            path_keys = digest_keys = 0
            path_key = digest_key = digest_said = ""
            entries: list[tuple[str, str, str]] | None = None  # mapping entries from a kit path
            inner: list[tuple[Any, Any]] | None = None
            for k, v in value.items():
                if type(v) is str:
                    kind = kinds.get(k)
                    if kind is None:
                        kind = _key_kind(k)
                    if kind & _PATH_KEY:
                        path_keys += 1
                        path_key = k
                    if v in placeholders:
                        said = v
                    elif len(v) in _SAID_LENGTHS and (m := _DIGEST_VALUE.fullmatch(v)) is not None:
                        said = m.group(1).lower()
                    else:
                        continue
                    if said and kind & _DIGEST_KEY:
                        digest_keys += 1
                        digest_key, digest_said = k, said
                    if (named := _normal(k)) in paths:
                        (entries := entries or []).append((k, named, said))
                elif isinstance(v, (dict, list)):
                    (inner := inner or []).append((k, v))
            if path_keys == 1 and digest_keys == 1:
                target = _normal(value[path_key])
                if target in paths:
                    yield key_path([*where, digest_key]), target, digest_said
            if entries:
                for k, target, said in entries:
                    yield key_path([*where, k]), target, said
            if inner:
                stack.extend(((*where, k), v) for k, v in reversed(inner))
        elif isinstance(value, list):
            stack.extend(((*where, i), v) for i, v in reversed(list(enumerate(value))) if isinstance(v, (dict, list)))


def _normal(path: str) -> str:
    return path[2:] if path.startswith("./") else path


class _Pairs:
    """Parses for pairs the JSON document, or the NDJSON records, that print a digest."""

    def __init__(self, ndjson: bool, plan: ScanPlan, scan: FileScan, compiled: _Compiled) -> None:
        self.ndjson = ndjson
        self.plan = plan
        self.compiled = compiled
        self.scan = scan
        # A JSON document, or an NDJSON record that runs past the settled part of a window.
        self.parts: list[Data] | None = None if ndjson else []
        self.start = 0  # absolute offset of the open record
        self.size = 0
        self.over = False
        self.has_digest = False

    def _parse(self, data: Data, offset: int | None) -> None:
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.scan.pairs_unread = True
            return
        placeholders = self.plan.placeholders
        for triple in json_pairs(document, self.plan.paths, placeholders):
            if triple[2] in placeholders:
                continue
            seen = self.scan.pairs.get(triple)
            if seen is None:
                self.scan.pairs[triple] = [1, offset]
            else:
                seen[0] += 1

    def _grow(self, piece: Data) -> None:
        assert self.parts is not None
        if self.over:
            return
        self.size += len(piece)
        if self.size > self.plan.pair_limit:
            self.over, self.parts = True, []
        else:
            self.parts.append(piece)

    def _close(self) -> None:
        if self.has_digest:
            if self.over:
                self.scan.pairs_unread = True
            else:
                self._parse(b"".join(self.parts or ()), self.start if self.ndjson else None)
        self.parts = None if self.ndjson else []
        self.size, self.over, self.has_digest = 0, False, False

    def block(self, block: bytes | memoryview) -> None:
        """A JSON document is kept whole (up to the limit) until the end: it is one record."""
        if not self.ndjson:
            self._grow(bytes(block))  # a copy: the block's buffer is read into again

    def settle(self, window: Data, lo: int, safe: int, base: int, runs: list[int], final: bool) -> None:
        """Take the settled part ``window[lo:safe]`` (at absolute ``base``) and the digest starts in it."""
        if not self.ndjson:
            self.has_digest = self.has_digest or bool(runs)
            return
        pos = lo
        if self.parts is not None:
            nl = window.find(b"\n", lo, safe)
            end = nl if nl >= 0 else safe
            self._grow(window[lo:end])
            if runs and runs[0] < end:
                self.has_digest = True
            if nl < 0:
                if final:
                    self._close()
                return
            self._close()
            pos = nl + 1
        # Lines in [pos, tail) are whole; one in [tail, safe) runs on into the next window.
        if final or window[safe - 1 : safe] == b"\n":
            tail = safe
        else:
            tail = window.rfind(b"\n", pos, safe) + 1 or pos
        # A record can pair a digest with a file here only if it names one: literally, or in a
        # string with escapes. Records that do neither are not parsed.
        named: list[int] | None = None
        if any(pos <= s < tail for s in runs) and (finder := self.compiled.paths) is not None:
            named = [s for s, _, _ in finder.find(window, pos, tail)]
            if not named and window.find(b"\\", pos, tail) < 0:
                runs = [s for s in runs if s >= tail]
        last = -1
        for s in runs:
            if s < pos:
                continue
            if s >= tail:
                self.has_digest = True
                break
            ls = window.rfind(b"\n", pos, s) + 1 or pos
            if ls == last:
                continue
            last = ls
            le = window.find(b"\n", s, tail)
            le = le if le >= 0 else tail
            if named is not None and not _names(named, ls, le) and window.find(b"\\", ls, le) < 0:
                continue
            self._parse(window[ls:le], base + ls)
        if tail < safe:
            self.parts, self.start = [], base + tail
            self._grow(window[tail:safe])

    def close(self) -> None:
        if self.parts is not None:
            self._close()


def _names(starts: list[int], lo: int, hi: int) -> bool:
    """True when a kit path starts in [lo, hi) (``starts`` is sorted)."""
    i = bisect.bisect_left(starts, lo)
    return i < len(starts) and starts[i] < hi


# -- the pass -----------------------------------------------------------------------------------


class _PageCompare:
    def __init__(self, expected: bytes) -> None:
        self.expected = expected
        self.offset = 0
        self.tail = b""
        self.diff: tuple[int, str, str] | None = None

    def feed(self, block: bytes | memoryview) -> None:
        if self.diff is None:
            want = self.expected[self.offset : self.offset + len(block)]
            if want != block:
                at = next((i for i, (a, b) in enumerate(zip(want, block)) if a != b), min(len(want), len(block)))
                self._record(self.offset + at, self.tail + block, len(self.tail) + at)
        self.tail = (self.tail + block)[-_DIFF_CONTEXT:]
        self.offset += len(block)

    def close(self) -> None:
        if self.diff is None and self.offset != len(self.expected):
            self._record(min(self.offset, len(self.expected)), self.tail, len(self.tail))

    def _record(self, at: int, seen: bytes, seen_at: int) -> None:
        line = self.expected.count(b"\n", 0, at) + 1
        want_start = self.expected.rfind(b"\n", 0, at) + 1
        want_end = self.expected.find(b"\n", at)
        want = self.expected[want_start : want_end if want_end >= 0 else len(self.expected)]
        found_start = seen.rfind(b"\n", 0, seen_at) + 1
        found_end = seen.find(b"\n", seen_at)
        found = seen[found_start : found_end if found_end >= 0 else len(seen)]
        self.diff = (line, _show(want), _show(found))


def _show(data: bytes) -> str:
    text = data[:_DIFF_CONTEXT].decode("utf-8", "replace")
    return text + ("…" if len(data) > _DIFF_CONTEXT else "")


def _by_digest(raw: dict[bytes, list[int]], digests: dict[str, list[int]]) -> None:
    """Fold a census kept by printed bytes into ``digests``, by lower-case hex: counts add up,
    the first offset is the least."""
    for printed, (count, first) in raw.items():
        hexdigest = printed.decode("ascii").lower()
        seen = digests.get(hexdigest)
        if seen is None:
            digests[hexdigest] = [count, first]
        else:
            seen[0] += count
            seen[1] = min(seen[1], first)


# What record_walk found of the leak searches in a whole file: the anchors (as
# leftmost_starts gives them) and the '@' (as email_ats does).
_Searched = tuple[list[tuple[int, int]], list[int]]


def _leaks(c: _Compiled, window: Data, lb: int, safe: int, base: int, out: list[Leak], searched: _Searched | None = None) -> None:
    """The leak shapes that start in ``window[lb:safe]`` (at absolute ``base``), unless allowed;
    ``searched``: the anchors and '@' found in the whole window already, if they were."""
    leftmost, ats = searched if searched is not None else (None, None)
    if not leftmost and leftmost is not None and not ats and ats is not None and c.all_anchored:
        return  # no anchor and no '@' in the window, and every shape stands on an anchor
    found = [(s, e, c.shape_index[i]) for s, e, i in c.shapes.find(window, leftmost=leftmost) if lb <= s < safe]
    any_at = bool(ats) if ats is not None else b"@" in window
    if any_at:
        found.extend((s, e, _EMAIL) for s, e in _emails(c.email, window, lb, safe, ats))
        found.sort()
    for s, e, i in found:
        if not (c.allow and _allowed(c.allow, window, s, e)):
            code, what, _ = LEAK_SHAPES[i]
            out.append(Leak(code, base + s, what))


def _scan_one(path: str, data: bytes, plan: ScanPlan, digest: str | None = None) -> FileScan:
    """The scan of a whole file in one block: what :class:`_Scanner` learns, without a window.

    Most kit files are small; for them the scanner's carry, look-back and per-block state cost
    more than the searches do.
    """
    sent = _sent_one(path, data, plan, digest)
    if isinstance(sent, FileScan):
        return sent
    counts = [0] * len(_compiled(plan).counters)
    k = len(plan.placeholders)
    return FileScan(path, sent[0], sent[1], placeholders=counts[:k], words=counts[k:])


def _quiet(path: str, data: bytes, plan: ScanPlan) -> bool:
    """True when no search of ``plan`` would find anything in ``data`` (see speedups.quiet) and
    ``path`` is no page to compare: then its size and digest are all the file's scan holds."""
    c = _compiled(plan)
    return path not in plan.expect and c.quiet is not None and quiet(data, c.quiet)


def _sent_one(path: str, data: bytes, plan: ScanPlan, digest: str | None = None) -> Sent:
    """What a worker sends for a whole file in one block (see :data:`Sent`): for a file in which
    nothing any search would find, its size and digest alone, learnt in one compiled pass instead
    of the half a dozen calls and their lists that cost most of a small file's scan. ``digest``:
    the file's hex SHA-256, if known already."""
    c = _compiled(plan)
    if digest is None:
        digest = mapped.hexdigest(data)  # (compiled where it runs: a worker never imports hashlib)
    if _quiet(path, data, plan):
        return len(data), digest
    n = len(data)
    scan = FileScan(path, n, digest)
    counts = [0] * len(c.counters)
    k = len(plan.placeholders)
    if path in plan.expect:
        page = _PageCompare(plan.expect[path])
        page.feed(data)
        page.close()
        scan.page_diff = page.diff
    searched: _Searched | None = None
    if path in plan.records:
        raw: dict[bytes, list[int]] = {}
        plain = c.plain
        anchors = c.shapes.leftmost_args(data) if plain else None
        if anchors is not None:
            # The digests, the first group of words, the leak anchors and the '@' in one walk over
            # the record (see speedups.record_walk); the leak search below takes what it found.
            (needles, owners), plain = plain[0], plain[1:]
            starts, found_words, leftmost, ats = record_walk(data, needles, *anchors, raw)
            for i, found in zip(owners, found_words):
                counts[i] += found
            searched = (leftmost, ats)
        else:
            starts = census(data, 0, n, 0, raw)
        if raw:
            _by_digest(raw, scan.digests)
        for needles, owners in plain:
            for i, found in zip(owners, count_starts(data, needles, 0, n)):
                counts[i] += found
        for i, counter in c.found:
            counts[i] += counter.count(data, 0, n, 0)[0]
        fmt = format_of(path) if starts else ""
        if fmt in ("json", "ndjson"):
            # Only a file that prints a digest can pair one with a path.
            pairs = _Pairs(fmt == "ndjson", plan, scan, c)
            pairs.block(data)
            pairs.settle(data, 0, n, 0, starts, True)
            pairs.close()
    scan.placeholders, scan.words = counts[:k], counts[k:]
    _leaks(c, data, 0, n, 0, scan.leaks, searched)
    return scan


class _Scanner:
    """The searches of one file, fed block by block (see the module doc for the window)."""

    def __init__(self, path: str, plan: ScanPlan) -> None:
        self.c = _compiled(plan)
        self.record = path in plan.records
        self.scan = FileScan(path, placeholders=[0] * len(plan.placeholders), words=[0] * len(plan.words))
        fmt = format_of(path) if self.record else ""
        self.pairs = _Pairs(fmt == "ndjson", plan, self.scan, self.c) if fmt in ("json", "ndjson") else None
        self.counts = [0] * len(self.c.counters) if self.record else []
        self.resume = [0] * len(self.counts)
        self.raw: dict[bytes, list[int]] = {}
        # The look-back context and the unsettled carry, then each new block appended: one
        # buffer whose allocation is reused block after block (a new window per block would
        # cost a copy of it and fresh pages from the kernel).
        self.held = bytearray()
        self.lb = 0  # how much of ``held`` is look-back, already settled
        self.start = 0  # absolute offset of held[0]

    def feed(self, block: bytes | memoryview, final: bool) -> None:
        held = self.held
        if held:
            held += block
            window: Data = held
        elif isinstance(block, bytes):
            window = block  # the first block is searched where it is
        else:
            held += block  # a view of a buffer that the next read overwrites
            window = held
        drop = self.advance(window, final)
        if window is held:
            del held[:drop]  # from the front of a bytearray: no copy, the start just moves
        else:
            held += memoryview(window)[drop:]

    def read(self, fd: int, size: int, keep: int) -> int:
        """Read up to ``size`` more bytes of ``fd`` into the window itself, after dropping its
        first ``keep`` bytes (what :meth:`advance` said is done with); how many were read."""
        return refill(fd, self.held, keep, size)

    def advance(self, window: Data, final: bool) -> int:
        """Settle what can be settled of ``window`` (the carry, then what was read since); how
        many bytes from its front are no longer needed."""
        lb = self.lb
        base = self.start
        n = len(window)
        if final:
            safe = n
        else:
            cut = n - _MARGIN
            safe = window.rfind(b"\n", lb, cut) + 1 if cut > lb else 0
            if safe <= lb:
                safe = max(lb, cut)
        if safe > lb or final:
            self._settle(window, lb, safe, base, final)
        drop = max(0, safe - _LOOKBACK)
        self.lb = safe - drop
        self.start = base + drop
        return drop

    def _settle(self, window: Data, lb: int, safe: int, base: int, final: bool) -> None:
        c = self.c
        scan = self.scan
        if self.record:
            starts = census(window, lb, safe, base, self.raw)
            counts = self.counts
            for needles, owners in c.plain:
                for i, n in zip(owners, count_starts(window, needles, lb, safe)):
                    counts[i] += n
            for i, counter in c.found:
                n, resume = counter.count(window, lb, safe, self.resume[i] - base)
                self.resume[i] = resume + base
                counts[i] += n
            if self.pairs is not None:
                self.pairs.settle(window, lb, safe, base, starts, final)
        _leaks(c, window, lb, safe, base, scan.leaks)

    def close(self) -> FileScan:
        scan = self.scan
        if self.pairs is not None:
            self.pairs.close()
        k = len(scan.placeholders)
        if self.record:
            scan.placeholders = self.counts[:k]
            scan.words = self.counts[k:]
        _by_digest(self.raw, scan.digests)
        return scan


def scan_blocks(path: str, blocks: Iterable[bytes | memoryview], plan: ScanPlan) -> FileScan:
    """Scan a file given as a sequence of byte blocks (a block may be a view of a buffer that the
    next block overwrites: nothing keeps one past its turn)."""
    if isinstance(blocks, tuple) and len(blocks) == 1 and isinstance(blocks[0], bytes):
        return _scan_one(path, blocks[0], plan)  # the whole file at once
    scanner = _Scanner(path, plan)
    tally = _Tally(path, plan, scanner)
    pieces = itertools.chain(((block, False) for block in blocks), ((b"", True),))
    for block, final in pieces:
        tally.block(block)
        scanner.feed(block, final)
    return tally.close()


class _Tally:
    """What each block of a file adds to besides its window's searches: the file's digest and
    size, the comparison with the page it should be, and a JSON document's parts."""

    def __init__(self, path: str, plan: ScanPlan, scanner: _Scanner, digest: mapped.Hasher | None = None) -> None:
        self.scanner = scanner
        self.page = _PageCompare(plan.expect[path]) if path in plan.expect else None
        # The compiled hash where it runs, whether a mapped file brings one or not: hashlib is
        # then not imported at all, which in each of verify's workers cost 10 to 15 ms of CPU
        # beside the other's hashing, and 3 ms in its main process for the files at the root.
        self.digest: mapped.Hasher = mapped.new_hash() if digest is None else digest
        self.size = 0

    def block(self, block: bytes | memoryview) -> None:
        self.digest.update(block)
        self.seen(block)

    def seen(self, block: bytes | memoryview) -> None:
        """What ``block`` adds besides the digest (which :func:`_scan_mapped` makes itself)."""
        self.size += len(block)
        if self.scanner.pairs is not None:
            self.scanner.pairs.block(block)
        if self.page is not None:
            self.page.feed(block)

    def close(self) -> FileScan:
        scan = self.scanner.close()
        if self.page is not None:
            self.page.close()
            scan.page_diff = self.page.diff
        scan.size = self.size
        scan.sha256 = self.digest.hexdigest()
        return scan


def _blocks(stream: BinaryIO, size: int, tick: Callable[[int], None] | None = None) -> Iterator[bytes]:
    while block := stream.read(size):
        if tick is not None:
            tick(len(block))
        yield block


def scan_file(kit: KitFS, path: str, plan: ScanPlan, tick: Callable[[int], None] | None = None) -> FileScan:
    """Read ``path`` once and scan it; a file that cannot be opened gives a scan with ``error``.

    ``tick`` is called with each block's size as it is read (a progress bar's bytes).
    """
    return _scan_run(kit, [path], plan, tick, _scan_one)[0]


def _scan_run(kit: KitFS, paths: Sequence[str], plan: ScanPlan, tick: Callable[[int], None] | None, whole: Whole[_T]) -> list[_T | FileScan]:
    """:func:`scan_file` for each of ``paths``, in order, with ``whole`` taking a file read in one
    piece (see :func:`_sent_one`).

    Where the compiled hash runs, large files are hashed from their maps two at a time, side by
    side (see :class:`_Mapped`): each one found waits for the next, and the two go on together
    until one ends, when the other waits in its turn. Two files are open at most. Files read in
    one piece wait, read, until :data:`mapped.BATCH` of them are, and are hashed together
    (``mapped.digest_batch``): sixteen at once in vector registers where the processor has
    AVX-512BW, two or three at a time on the SHA extensions otherwise, whichever the processor
    hashes faster (:data:`mapped.SIDE_BY_SIDE`). On workload B's records of 400 KiB, a pair
    hashes in 0.56 times what hashlib takes for its two files one by one, and sixteen at once in
    about two thirds of what eight pairs take.
    """
    out: list[_T | FileScan | None] = [None] * len(paths)
    waiting: _Mapped | None = None
    held: list[tuple[int, str, bytes]] = []  # files read whole, waiting to be hashed together
    for i, path in enumerate(paths):
        try:
            opened = kit.open_fd(path)
            if opened is None:
                with kit.open(path) as stream:
                    out[i] = scan_blocks(path, _blocks(stream, plan.block_size, tick), plan)
                continue
        except MemberError as exc:
            out[i] = FileScan(path, error=exc)
            continue
        except OSError as exc:
            out[i] = _unreadable(path, exc)
            continue
        fd, size = opened
        if mapped.ACCELERATED and size >= plan.block_size:
            lane = _Mapped(i, path, fd, size, plan, tick)
            waiting = lane if waiting is None else _pair(waiting, lane, out)
            continue
        try:
            if not (mapped.ACCELERATED and size < plan.block_size):
                out[i] = _scan_fd(path, fd, size, plan, tick, whole)
                continue
            data = _read_whole(fd, size, tick)
            if len(data) > size:  # it grew since its size was taken: read on, block by block
                out[i] = _scan_grown(path, fd, data, plan, tick)
            else:
                held.append((i, path, data))
                if len(held) == mapped.BATCH:
                    _whole_batch(held, out, plan, whole)
        except OSError as exc:
            out[i] = _unreadable(path, exc)
        finally:
            os.close(fd)
    if held:
        _whole_batch(held, out, plan, whole)
    if waiting is not None:
        _alone(waiting, out)
    return out  # type: ignore[return-value]  # every slot filled


def _whole_batch(held: list[tuple[int, str, bytes]], out: list[Any], plan: ScanPlan, whole: Whole[Any]) -> None:
    """Hash the files read whole in ``held`` together (``mapped.digest_batch``), scan each into
    ``out``, and empty ``held``."""
    digests = mapped.digest_batch([data for _, _, data in held])
    for (i, path, data), digest in zip(held, digests):
        out[i] = whole(path, data, plan, digest)
    held.clear()


def _unreadable(path: str, exc: OSError) -> FileScan:
    return FileScan(path, error=MemberError(path, f"cannot be read ({exc.strerror})", "unreadable"))


def _read_whole(fd: int, size: int, tick: Callable[[int], None] | None) -> bytes:
    """A file that fits one block, in one read of exactly its size and one byte more (which a
    plain file returns only if it grew)."""
    data = os.read(fd, size + 1)
    if tick is not None:
        tick(len(data))
    return data


def _scan_grown(path: str, fd: int, head: bytes, plan: ScanPlan, tick: Callable[[int], None] | None) -> FileScan:
    """The scan of a file whose first read, ``head``, found it larger than its size said."""
    blocks = read_blocks(lambda buffer: os.readv(fd, [buffer]), plan.block_size)
    return scan_blocks(path, itertools.chain((head,), blocks if tick is None else _ticking(blocks, tick)), plan)


def _scan_fd(path: str, fd: int, size: int, plan: ScanPlan, tick: Callable[[int], None] | None, whole: Whole[_T]) -> _T | FileScan:
    if size < plan.block_size:
        # Most kit files fit one block: one read, no window to carry.
        data = _read_whole(fd, size, tick)
        if len(data) <= size:
            return whole(path, data, plan, None)
        return _scan_grown(path, fd, data, plan, tick)
    return _scan_stream(path, fd, plan, tick)


def _scan_stream(path: str, fd: int, plan: ScanPlan, tick: Callable[[int], None] | None) -> FileScan:
    """:func:`scan_blocks` for a file read from its descriptor: each block is read into the
    scan's window itself, which hashes and searches it there (see :func:`refill`)."""
    scanner = _Scanner(path, plan)
    return _read_rest(scanner, _Tally(path, plan, scanner), fd, plan.block_size, 0, tick)


def _read_rest(scanner: _Scanner, tally: _Tally, fd: int, step: int, keep: int, tick: Callable[[int], None] | None) -> FileScan:
    """Feed ``scanner`` and ``tally`` what is left of ``fd`` from its offset on, a block at a time
    (the window first drops the ``keep`` bytes it is done with); the file's scan."""
    held = scanner.held
    while True:
        n = scanner.read(fd, step, keep)
        if n:
            with memoryview(held) as view, view[len(held) - n :] as block:
                tally.block(block)
            if tick is not None:
                tick(n)
        keep = scanner.advance(held, n == 0)
        if n == 0:
            return tally.close()


class _Mapped:
    """A large file scanned from its memory maps (kitbuild.mapped), a block at a time: each block
    hashed and copied into the scan's window in one compiled pass, alone or side by side with
    another file's (:func:`_pair`), then searched there.

    ``piece`` is the next block, as (map, start, stop), or None once the maps are done. Anything
    that goes wrong with them (a file system without maps, a map that faults because the file
    was cut short) spoils the lane: the file is then read again from its start, as a file that
    is not mapped is.
    """

    def __init__(self, index: int, path: str, fd: int, size: int, plan: ScanPlan, tick: Callable[[int], None] | None) -> None:
        self.index, self.path, self.fd, self.plan, self.tick = index, path, fd, plan, tick
        self.scanner = _Scanner(path, plan)
        self.held = self.scanner.held
        self.digest = mapped.sha256()
        self.tally = _Tally(path, plan, self.scanner, self.digest)
        self.keep = 0
        self.spoilt = False
        self._pieces = self._blocks(size, plan.block_size)
        self.piece: tuple[mmap.mmap, int, int] | None = None
        self.next()

    def _blocks(self, size: int, step: int) -> Generator[tuple[mmap.mmap, int, int], None, None]:
        for window in mapped.windows(self.fd, size):
            for lo in range(0, len(window), step):
                yield window, lo, min(lo + step, len(window))

    def next(self) -> None:
        try:
            self.piece = next(self._pieces, None)
        except (OSError, ValueError):
            self.spoil()

    def spoil(self) -> None:
        self.spoilt = True
        self.piece = None

    def took(self, n: int) -> None:
        """The block just hashed into the window (its last ``n`` bytes) is searched; on to the next."""
        held = self.held
        with memoryview(held) as view, view[len(held) - n :] as block:
            self.tally.seen(block)
        if self.tick is not None:
            self.tick(n)
        self.keep = self.scanner.advance(held, False)
        self.next()

    def finish(self) -> FileScan:
        """The scan: what the file grew by since its size was taken read to its end, or (a spoilt
        lane) the whole file read again; its descriptor closed."""
        self._pieces.close()  # unmaps the window still mapped
        try:
            if self.spoilt:
                os.lseek(self.fd, 0, os.SEEK_SET)
                return _scan_stream(self.path, self.fd, self.plan, None)  # (its bytes were ticked once)
            os.lseek(self.fd, self.tally.size, os.SEEK_SET)
            return _read_rest(self.scanner, self.tally, self.fd, self.plan.block_size, self.keep, self.tick)
        except OSError as exc:
            return _unreadable(self.path, exc)
        finally:
            os.close(self.fd)


def _pair(a: _Mapped, b: _Mapped, out: list[Any]) -> _Mapped | None:
    """Hash ``a`` and ``b`` side by side until one ends (into ``out``); the other, if any."""
    while a.piece is not None and b.piece is not None:
        (am, alo, ahi), (bm, blo, bhi) = a.piece, b.piece
        try:
            mapped.update_pair(a.digest, am, alo, ahi, a.held, a.keep, b.digest, bm, blo, bhi, b.held, b.keep)
        except OSError:  # one of them faulted, and both hashes are spoilt
            a.spoil()
            b.spoil()
            break
        a.took(ahi - alo)
        b.took(bhi - blo)
    going = None
    for lane in (a, b):
        if lane.piece is None:
            out[lane.index] = lane.finish()
        else:
            going = lane
    return going


def _alone(lane: _Mapped, out: list[Any]) -> None:
    """Hash ``lane`` to its end by itself (into ``out``)."""
    while lane.piece is not None:
        m, lo, hi = lane.piece
        try:
            lane.digest.update_into(m, lo, hi, lane.held, lane.keep)
        except OSError:
            lane.spoil()
            break
        lane.took(hi - lo)
    out[lane.index] = lane.finish()


def _ticking(blocks: Iterable[memoryview], tick: Callable[[int], None]) -> Iterator[memoryview]:
    """``blocks``, telling ``tick`` each one's size (a progress bar's bytes)."""
    for block in blocks:
        tick(len(block))
        yield block


def scan_bytes(path: str, data: bytes, plan: ScanPlan) -> FileScan:
    """Scan bytes already in memory (a file verify had to read whole, such as index.json)."""
    return scan_blocks(path, _split(data, plan.block_size), plan)


def _split(data: bytes, size: int) -> Iterator[bytes]:
    return (data[i : i + size] for i in range(0, len(data), size))


# -- where a finding is -------------------------------------------------------------------------


def locate(blocks: Iterable[bytes], offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """The (line, column) of each byte offset, both counted from 1, in one pass over ``blocks``."""
    want = sorted(set(offsets))
    out: dict[int, tuple[int, int]] = {}
    line, last_nl, pos, i = 1, -1, 0, 0
    for block in blocks:
        if i == len(want):
            break
        end = pos + len(block)
        counted = 0
        while i < len(want) and want[i] < end:
            at = want[i] - pos
            line += block.count(b"\n", counted, at)
            nl = block.rfind(b"\n", counted, at)
            if nl >= 0:
                last_nl = pos + nl
            counted = at
            out[want[i]] = (line, want[i] - last_nl)
            i += 1
        line += block.count(b"\n", counted)
        nl = block.rfind(b"\n", counted)
        if nl >= 0:
            last_nl = pos + nl
        pos = end
    for o in want[i:]:  # past the end: the file changed since it was scanned
        out[o] = (line, o - last_nl)
    return out


def locate_in(kit: KitFS, path: str, offsets: Iterable[int], data: bytes | None = None) -> dict[int, tuple[int, int]]:
    """:func:`locate` over a kit file (read again) or over bytes already in memory."""
    if data is not None:
        return locate(_split(data, BLOCK_SIZE), offsets)
    try:
        with kit.open(path) as stream:
            return locate(_blocks(stream, BLOCK_SIZE), offsets)
    except (MemberError, OSError):
        return {o: (0, 0) for o in offsets}


# -- many files -----------------------------------------------------------------------------------


def default_jobs() -> int:
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# Below this estimated cost the workers' start costs more than they save.
_SERIAL_BELOW_S = 0.05
_FILE_S = 30e-6
_BYTE_S = 3e-9
# How many files a pass in this process gives _scan_run at once: enough that its pairs are
# rarely split, few enough that the progress bar's count of files moves.
_SERIAL_RUN = 64
_CHUNKS_PER_JOB = 8
# The runs that start past three quarters of the estimated work get a quarter of the share.
_TAIL_FROM = 0.75
_TAIL_SHARE = 4


def chunks(paths: Sequence[str], sizes: Sequence[int], jobs: int) -> list[list[str]]:
    """``paths`` cut, in order, into runs of about equal bytes and files for ``jobs`` workers.

    About eight runs per worker balance the load; a run of many small files costs one round trip
    to a worker, not one per file. The last quarter of the work (files and bytes weighed as in
    the estimate of :class:`StartedScan`) is cut four times as fine: the workers take runs in
    order, so the last runs decide how long one waits for the other at the end. With runs of
    one size, the two workers on workload B ended 5 to 64 ms apart (median 25), one core idle
    meanwhile; with the finer tail, 0 to 14 ms (median 4), and the pass, from the workers' start
    to the end of the process, took 670 ms against 690 (medians of ten, alternating).
    """
    if not paths:
        return []
    # (A run ends at its share of the bytes or of the files, so there can be twice as many runs
    # as the shares alone would make: 1.5 times ``parts`` in the first three quarters of the
    # work, twice ``parts`` in the last, 3.5 times in all. A quarter of what a crew hands out
    # keeps them within.)
    parts = max(1, min(jobs * _CHUNKS_PER_JOB, crew.MAX_RUNS // 4))
    byte_target = max(1, sum(sizes) // parts)
    file_target = max(1, -(-len(paths) // parts))
    tail = (max(1, byte_target // _TAIL_SHARE), max(1, file_target // _TAIL_SHARE))
    # A run ends at the first file that brings it to its share of the bytes or of the files. The
    # bytes so far are running sums, searched by bisection: a step per run, not per file (a loop
    # over 100,000 files cost 35 ms before any worker could start).
    ends = list(itertools.accumulate(sizes))
    tail_from = _TAIL_FROM * (len(paths) * _FILE_S + ends[-1] * _BYTE_S)
    out: list[list[str]] = []
    start, before = 0, 0
    while start < len(paths):
        bytes_share, files_share = tail if start * _FILE_S + before * _BYTE_S >= tail_from else (byte_target, file_target)
        last = min(bisect.bisect_left(ends, before + bytes_share, start), start + files_share - 1, len(paths) - 1)
        out.append(list(paths[start : last + 1]))
        start, before = last + 1, ends[last]
    return out


def in_pairs(runs: list[list[str]], large: set[str], jobs: int) -> list[list[str]]:
    """``runs`` with each two neighbours that are one large file each made one run, so that a
    worker hashes the two side by side (see :func:`_scan_run`); unchanged if that would leave
    fewer runs than ``jobs`` (two files on two workers go faster apart than paired on one)."""
    out: list[list[str]] = []
    for run in runs:
        if len(run) == 1 and run[0] in large and out and len(out[-1]) == 1 and out[-1][0] in large:
            out[-1] = [out[-1][0], run[0]]
        else:
            out.append(run)
    return out if len(out) >= jobs else runs


# Most files print no digest, hold no placeholder and no leak: their empty containers are one
# shared object each (read only after the scan), not five new ones per file in a kit of 100,000.
_EMPTY_DIGESTS: dict[str, list[int]] = {}
_EMPTY_PAIRS: dict[tuple[str, str, str], list[Any]] = {}
_EMPTY_LEAKS: list[Leak] = []


_ZEROS: dict[int, list[int]] = {}


def _compact(scan: FileScan, path: str | None = None) -> FileScan:
    if path is not None:
        scan.path = path  # the caller's own string for it, not a second copy from the worker
    scan.sha256 = sys.intern(scan.sha256)  # shared with index.json's entry (kitbuild.commands.verify)
    if not any(scan.placeholders):
        scan.placeholders = _ZEROS.setdefault(len(scan.placeholders), [0] * len(scan.placeholders))
    if not any(scan.words):
        scan.words = _ZEROS.setdefault(len(scan.words), [0] * len(scan.words))
    if not scan.digests:
        scan.digests = _EMPTY_DIGESTS
    if not scan.pairs:
        scan.pairs = _EMPTY_PAIRS
    if not scan.leaks:
        scan.leaks = _EMPTY_LEAKS
    return scan


# What a worker sends back for a file: its scan, or for a file with nothing to report but its
# size and digest (nearly every file of a big kit), just those two. Pickling 100,000 whole scans
# cost the workers 4 µs a file, a fifth of the time they spent reading and scanning.
Sent = tuple[int, str] | FileScan


def _plain(scan: FileScan) -> bool:
    return (
        scan.error is None
        and not scan.digests
        and not scan.pairs
        and not scan.leaks
        and scan.page_diff is None
        and not scan.pairs_unread
        and not any(scan.placeholders)
        and not any(scan.words)
    )


def _sendable(sent: Sent) -> Sent:
    return (sent.size, sent.sha256) if isinstance(sent, FileScan) and _plain(sent) else sent


def _scan_chunk(kit: KitFS, plan: ScanPlan, runs: list[list[str]], k: int) -> list[Sent]:
    """What a worker sends for run ``k`` of ``runs``."""
    with collector_paused():
        return [_sendable(sent) for sent in _scan_run(kit, runs[k], plan, None, _sent_one)]


def _read_small(kit: KitFS, path: str, limit: int) -> bytes | None:
    """The bytes of the regular file at ``path`` if it has at most ``limit`` of them and opens by
    descriptor; None (the file left unread) for any other, or one that cannot be read."""
    try:
        opened = kit.open_fd(path)
    except (MemberError, OSError):
        return None
    if opened is None:
        return None
    fd, size = opened
    try:
        data = os.read(fd, size + 1) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if data is not None and len(data) <= size else None  # (a file that grew: None)


def sent_small(kit: KitFS, path: str, plan: ScanPlan, limit: int) -> Sent | None:
    """What a worker of :func:`scan_files` sends for ``path``, if :func:`_read_small` reads it;
    else None, and :func:`scan_files` is left to scan it (or to report why it cannot)."""
    data = _read_small(kit, path, limit)
    return None if data is None else _sendable(_sent_one(path, data, plan))


def quiet_small(kit: KitFS, path: str, plan: ScanPlan, limit: int) -> tuple[int, bytes] | None:
    """The size and (raw) digest of ``path``, if :func:`_read_small` reads it and it holds
    nothing any of ``plan``'s searches would find (then that is all its scan holds, whatever the
    plan's records, paths and pages); else None."""
    data = _read_small(kit, path, limit)
    if data is None or not _quiet(path, data, plan):
        return None
    return len(data), _sha256(data).digest()


def quiet_run(kit: KitFS, paths: Sequence[str], plan: ScanPlan, limit: int) -> tuple[list[int], bytes]:
    """:func:`quiet_small` for each of ``paths``, packed: the sizes (-1 for a file it leaves to
    the full pass) and the raw digests one after another (32 zero bytes for a file left).

    Where the compiled hash reads files (``mapped.FILES``), each folder's run of files below the
    root goes through one call of :func:`kitbuild.mapped.hash_files`, which opens, reads, tests
    and hashes them: workload C's files of 2 KiB cost a worker 13 µs each file by file, 9 µs
    this way, on a machine where the system calls alone took 8."""
    groups = _compiled(plan).quiet
    if not mapped.FILES or groups is None or not plan.expect.keys().isdisjoint(paths):
        return _one_by_one(kit, paths, plan, limit)
    sizes: list[int] = []
    digests: list[bytes] = []
    for folder, run in itertools.groupby(paths, lambda p: p.rpartition("/")[0]):
        names = list(run)
        fd = kit.folder_fd(folder) if folder else None
        got, raw = _one_by_one(kit, names, plan, limit) if fd is None else mapped.hash_files(fd, [p[len(folder) + 1 :] for p in names], limit, quiet, groups)
        sizes.extend(got)
        digests.append(raw)
    return sizes, b"".join(digests)


def _one_by_one(kit: KitFS, paths: Sequence[str], plan: ScanPlan, limit: int) -> tuple[list[int], bytes]:
    """:func:`quiet_run`'s answer, file by file through :func:`quiet_small`."""
    sent = [quiet_small(kit, p, plan, limit) for p in paths]
    return [s[0] if s else -1 for s in sent], b"".join([s[1] if s else bytes(32) for s in sent])


class Receiver:
    """The scans of a run from what a worker sent, their shared parts shared (see :func:`_compact`).

    A file with nothing to report arrives as (size, digest): its scan is made here, inline, with
    the plan's zero counts made once. A call per file and its look-ups cost the main process
    a tenth of a second on a kit of 100,000 files, while both cores were busy with the workers.
    """

    def __init__(self, plan: ScanPlan) -> None:
        self.placeholders = _ZEROS.setdefault(len(plan.placeholders), [0] * len(plan.placeholders))
        self.words = _ZEROS.setdefault(len(plan.words), [0] * len(plan.words))

    def receive_quiet(self, run: list[str], sizes: list[int], digests: bytes, out: dict[str, FileScan]) -> tuple[int, int]:
        """Add the scans of the files of ``run`` found quiet (see :func:`quiet_run`: a size, -1
        for a file left, and 32 raw digest bytes each); returns the files and bytes added. (Made
        straight from the packed answers: as (size, digest) pairs first, 100,000 of them cost the
        main process another 60 ms while a worker was still busy.)"""
        placeholders, words, intern, new = self.placeholders, self.words, sys.intern, FileScan
        hexed = digests.hex()
        files = size = 0
        for i, (path, n) in enumerate(zip(run, sizes)):
            if n >= 0:
                out[path] = new(path, n, intern(hexed[64 * i : 64 * i + 64]), None, _EMPTY_DIGESTS, placeholders, words, _EMPTY_LEAKS, _EMPTY_PAIRS)
                files += 1
                size += n
        return files, size

    def receive(self, run: list[str], result: list[Sent], out: dict[str, FileScan], loud: list[str]) -> int:
        """Add the scans of ``run`` to ``out``, and to ``loud`` the paths of those sent whole;
        returns the bytes they hold."""
        placeholders, words, intern, new = self.placeholders, self.words, sys.intern, FileScan
        size = 0
        for path, sent in zip(run, result):
            if isinstance(sent, FileScan):
                scan = out[path] = _compact(sent, path)
                n = scan.size
                loud.append(path)
            else:
                n, sha256 = sent
                out[path] = new(path, n, intern(sha256), None, _EMPTY_DIGESTS, placeholders, words, _EMPTY_LEAKS, _EMPTY_PAIRS)
            size += n
        return size


def scan_files(
    kit: KitFS, paths: Sequence[str], sizes: Sequence[int], plan: ScanPlan, jobs: int, progress: Progress = SILENT, loud: list[str] | None = None
) -> dict[str, FileScan]:
    """Scan every file, in ``jobs`` worker processes when that pays; the same result either way.

    ``sizes`` (the files' sizes as listed) only balance the work. ``progress`` is told the files
    and bytes as their scans arrive. ``loud``, if given, gets the paths, in order, of the scans
    with anything besides a size and a digest in them (an error, a digest, a count, a leak, a
    pair, a page's difference): the few that a check over a big kit's scans needs to look at.
    """
    with collector_paused():
        return _scan_files(kit, paths, sizes, plan, jobs, progress, [] if loud is None else loud)


def _scan_files(kit: KitFS, paths: Sequence[str], sizes: Sequence[int], plan: ScanPlan, jobs: int, progress: Progress, loud: list[str]) -> dict[str, FileScan]:
    return StartedScan(kit, paths, sizes, plan, jobs).collect(progress, loud)


class StartedScan:
    """:func:`scan_files`, begun now and collected later: the workers (if the pass is worth
    them) start at once, while the caller goes on with other work; :meth:`collect` waits for
    them, or runs the pass in this process. verify starts the files below the kit's root this
    way as soon as it has its plan for them, then checks the schemas and renders the pages while
    the workers read: on a kit of 2,000 large records those came to a fifth of the run, with
    every other core idle. The scans are the same as scan_files' own."""

    def __init__(self, kit: KitFS, paths: Sequence[str], sizes: Sequence[int], plan: ScanPlan, jobs: int) -> None:
        self.kit, self.paths, self.plan = kit, paths, plan
        self._crew: Crew | None = None
        self._runs: list[list[str]] = []
        self._answer: Callable[[int], list[Sent]] | None = None  # what a worker sends for run k
        self._collected = self._cancelled = False
        if jobs <= 1 or len(paths) < 2 or kit.sequential or not crew.AVAILABLE or len(paths) * _FILE_S + sum(sizes) * _BYTE_S < _SERIAL_BELOW_S:
            return  # one process: the pass runs in collect()
        runs = chunks(paths, sizes, jobs)
        if mapped.ACCELERATED:
            runs = in_pairs(runs, set(itertools.compress(paths, map(plan.block_size.__le__, sizes))), jobs)
        self._runs = runs
        self._answer = functools.partial(_scan_chunk, kit, plan, runs)
        self._crew = Crew(len(runs))
        # A worker holding sixteen (or three) files read whole frees megabytes at a time, which
        # glibc would give back to the kernel and fault in again for the next: verify B spent 0.5
        # to 0.7 s in the kernel that way with sixteen, 0.2 s with the blocks kept; with three,
        # 0.33 to 0.39 s against 0.12 to 0.14. (Two at a time, glibc keeps them by itself.)
        self._crew.start(min(jobs, len(runs)), self._answer, setup=keep_freed_blocks if mapped.BATCH > 2 else None)

    def collect(self, progress: Progress = SILENT, loud: list[str] | None = None) -> dict[str, FileScan]:
        """Every file's scan (see :func:`scan_files` for ``progress`` and ``loud``), once: the
        workers' answers are consumed, and a scan whose workers were cancelled has none."""
        if self._collected or self._cancelled:
            raise RuntimeError("a StartedScan is collected once, and not after it was cancelled")
        self._collected = True
        loud = [] if loud is None else loud
        out: dict[str, FileScan] = {}
        with collector_paused():
            if self._crew is None:
                # In runs, as a worker takes them, so that this process too hashes its files
                # together (see _scan_run): one by one, verify of workload A on one job took
                # 2.29 s of CPU, in pairs 1.75.
                try:
                    # (Freed blocks kept while the files go through, as in a worker: see __init__.)
                    with freed_blocks_kept() if mapped.BATCH > 2 else contextlib.nullcontext():
                        for at in range(0, len(self.paths), _SERIAL_RUN):
                            run = self.paths[at : at + _SERIAL_RUN]
                            for p, scan in zip(run, _scan_run(self.kit, run, self.plan, lambda n: progress.advance(size=n), _scan_one)):
                                scan = out[p] = _compact(scan)
                                if not _plain(scan):
                                    loud.append(p)
                            progress.advance(files=len(run))
                finally:
                    self.kit.close()  # the folders the pass kept open
                return out
            try:
                # The scans go into ``out`` in the runs' order; a run whose worker died, or failed
                # on it, is scanned here (and fails here).
                receiver = Receiver(self.plan)
                assert self._answer is not None
                for k, result in self._crew.in_order(self._answer):
                    progress.advance(len(self._runs[k]), receiver.receive(self._runs[k], result, out, loud))
            finally:
                self._crew.cancel()
        return out

    def cancel(self) -> None:
        """Stop the workers (once collected, or when the caller gives up; safe to call twice)."""
        if self._crew is not None:
            self._cancelled = not self._collected
            self._crew.cancel()
