"""The one pass over one file of a kit, used by ``build`` and by ``verify`` alike.

``build`` feeds each file's bytes to an :class:`Observer` as it writes them into the staged kit;
``verify`` feeds the bytes it reads from a folder or an archive. Either way the file is read
once, in blocks, and the :class:`Observation` that comes out is a function of its bytes and the
:class:`Plan` alone: so the checks that run on observations (:mod:`kitbuild.checks`) give build
and verify the same answer for the same kit.

In that pass a file is hashed (hashlib), and searched for: the digests it prints, the placeholder
and the words each rule wrote, leaks (:mod:`kitbuild.leaks`), and, in a JSON or NDJSON record
that prints a digest, the (path, digest) pairs it states. Positions are kept as byte offsets;
:func:`locate` turns the few a report prints into lines and columns.

A large file is searched over a window: what is left of the previous block and the new block. A
window is settled up to a margin before its end; a match counts only if it starts in the settled
part, so nothing is cut by a block edge or counted twice, and as much context before the settled
part is kept for the searches that look behind (the margin is the leak scanner's MAX_MATCH).
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, BinaryIO, Callable, Mapping

import ahocorasick_rs
import orjson

from kitbuild.compressed import DEPTH, Budget, Unpacked
from kitbuild.digests import DIGEST_LENGTH, MARKS, digest_starts, find_from, may_spell_digest
from kitbuild.embedded import Embedded
from kitbuild.fileformat import BINARY_SNIFF, format_of, is_binary
from kitbuild.hashing import BlockHasher
from kitbuild.index import WRITTEN
from kitbuild.leaks import Leak, LeakScanner
from kitbuild.lines import BLOCK_SIZE
from kitbuild.pairs import json_pairs
from kitbuild.streamstarts import file_compression
from kitbuild.tarlayout import Layout, layout_of, scan as layout_scan
from kitbuild.wordcount import WordCounter

FIRST_READ = 64 << 10
# A NUL byte in a file's first 8 KiB makes it binary: never rewritten, and searched only for
# what can hide in any bytes (see kitbuild.leaks).
# A JSON document (or an NDJSON record) larger than this is not parsed for pairs.
PAIR_LIMIT = 16 << 20


@dataclass(frozen=True)
class Plan:
    """What to look for in every file of one kit. Picklable: workers get it once."""

    # Every kit path a record may pair with a digest.
    paths: frozenset[str] = frozenset()
    # digest-withheld's placeholders: each is counted exactly.
    placeholders: tuple[str, ...] = ()
    # Per rule whose words can be counted: the spellings of the words it wrote.
    words: tuple[tuple[str, ...], ...] = ()
    allow: tuple[str, ...] = ()
    # Only in a build: the private strings the config names (string -> what it is), and the
    # original digests of changed files (hex -> what it is). A reader has neither.
    private: Mapping[str, str] = field(default_factory=dict)
    withheld: Mapping[str, str] = field(default_factory=dict)
    # Whether to read the (path, digest) pairs of records; if not, the records that would be
    # read are only counted (Observation.pairs_pending). A build's first pass does not: most
    # files that print digests are written again once the digests are withheld.
    pairs: bool = True

    def __getstate__(self) -> dict[str, Any]:
        # The compiled searches are made again in each worker, not pickled.
        state = dict(self.__dict__)
        for name in ("scanner", "counters", "path_finder"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @cached_property
    def scanner(self) -> LeakScanner:
        return LeakScanner(self.private, self.allow, self.withheld)

    @cached_property
    def path_finder(self) -> ahocorasick_rs.BytesAhoCorasick | None:
        """Every kit path: a record that names none (and spells none with escapes) cannot pair a
        digest with a file here, and is not parsed."""
        paths = [p.encode("utf-8") for p in sorted(self.paths) if p]
        # Leftmost-longest: it turns on the automaton's prefilter (7,000 against 240 MB/s over
        # records full of other paths), and still finds one match in each record naming a path.
        return ahocorasick_rs.BytesAhoCorasick(paths, matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST) if paths else None

    @cached_property
    def counters(self) -> tuple[WordCounter | None, ...]:
        """One counter per placeholder, then per rule's words."""
        forms = [(p,) for p in self.placeholders] + [tuple(w) for w in self.words]
        return tuple(WordCounter(needles) if (needles := sorted({f.encode("utf-8") for f in fs if f})) else None for fs in forms)


@dataclass(slots=True)
class Observation:
    """What one pass learned about one file. Offsets are byte offsets into the file."""

    path: str
    size: int = 0
    sha256: str = ""
    binary: bool = False
    error: str | None = None  # why the file could not be read (then nothing else is known)
    # Each digest printed (lower-case hex) -> [how many times, offset of the first].
    digests: dict[str, list[int]] = field(default_factory=dict)
    # Whether a digest may be printed where the digests above are not read: inside a run of more than 64 hex digits, in base64 after
    # 'sha256-' (SRI, npm, Nix) or 'sha256=' (a wheel's RECORD), and in a build's first pass (kitbuild.digests.may_spell_digest) in
    # escapes or any long base64, as the leak scan reads them. A build reads such a file again, knowing what it withholds.
    hidden_digest: bool = False
    placeholders: list[int] = field(default_factory=list)
    words: list[int] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    # (key path, kit path, digest said) -> [how many records say so, offset of the first NDJSON
    # record saying so, or -1 in a JSON document]. A pair that says a placeholder is left out.
    pairs: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    # Records that print a digest but were too large or not JSON, so no pair was read from them.
    pairs_unread: int = 0
    # Records whose pairs a plan without ``pairs`` left to read (see Plan.pairs).
    pairs_pending: int = 0
    # The sha256 of the file's first kitbuild.hashing.HEADS[i] bytes, for each no longer than it.
    heads: tuple[str, ...] = ()

    @property
    def quiet(self) -> bool:
        """Nothing but a size and a digest to report."""
        return not (self.digests or self.hidden_digest or any(self.placeholders) or any(self.words) or self.leaks or self.pairs or self.pairs_unread)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A worker sends most observations with nothing but a size and a digest: sent without
        # their empty lists and dicts, they are made with shared read-only ones (750 bytes a
        # file down to 350 in the main process, which holds one for each of 100,000 files).
        return _sent, (self.path, self.size, self.sha256, self.binary, self.error, self.digests or None, self.hidden_digest, self.placeholders if any(self.placeholders) else len(self.placeholders), self.words if any(self.words) else len(self.words), self.leaks or None, self.pairs or None, self.pairs_unread, self.pairs_pending, self.heads)


class _ReadOnlyList(list):  # type: ignore[type-arg]
    """An empty or all-zero list shared by observations that were sent (see Observation.__reduce__):
    an observation is never changed once made, and this one says so if anything tries."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a finished observation is read-only")

    append = extend = insert = pop = remove = clear = sort = reverse = __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


class _ReadOnlyDict(dict):  # type: ignore[type-arg]
    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a finished observation is read-only")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = __ior__ = _refuse


_NO_DICT: Any = _ReadOnlyDict()
_NO_LIST: Any = _ReadOnlyList()
_ZEROS: dict[int, Any] = {}


def _sent(path: str, size: int, sha256: str, binary: bool, error: str | None, digests: Any, hidden_digest: bool, placeholders: Any, words: Any, leaks: Any, pairs: Any, unread: int, pending: int, heads: tuple[str, ...]) -> Observation:
    def zeros(n: int) -> Any:
        return _ZEROS.setdefault(n, _ReadOnlyList([0] * n))

    return Observation(
        path, size, sha256, binary, error, _NO_DICT if digests is None else digests, hidden_digest,
        zeros(placeholders) if isinstance(placeholders, int) else placeholders, zeros(words) if isinstance(words, int) else words,
        _NO_LIST if leaks is None else leaks, _NO_DICT if pairs is None else pairs, unread, pending, heads,
    )


class Observer:
    """Feed a file's bytes in order (:meth:`feed`), then :meth:`finish` for its observation.

    ``inside``: the pass over what a compressed file holds (kitbuild.compressed), at that depth
    and within that budget: it looks for leaks only."""

    def __init__(self, path: str, plan: Plan, inside: tuple[Budget, int] | None = None) -> None:
        self.plan = plan
        self.obs = Observation(path, placeholders=[0] * len(plan.placeholders), words=[0] * len(plan.words))
        self._inside = inside
        self._depth = 0 if inside is None else inside[1]
        self._budget: Budget | None = None  # what the layers inside the file may write
        self._hash: BlockHasher | None = BlockHasher() if inside is None else None
        self._unpacked: Unpacked | None = None
        self._embedded: Embedded | None = None  # compressed data in base64 (kitbuild.embedded)
        self._layout: Layout | None = None  # what of binary data is scanned as text (kitbuild.tarlayout)
        self._format = format_of(path)
        # The files a build writes about the kit (index.json, SHA256SUMS, croissant.json...)
        # print a digest for every file: their own checks compare each with the file, and no
        # check reads them as a record's digests or pairs (a kit of 100,000 files: 300,000 fewer).
        # Neither is read inside a compressed file: nothing there is a kit's record.
        self._written = path in WRITTEN or inside is not None
        self._pairs = self._format in ("json", "ndjson") and not self._written
        self._head: bytearray | None = bytearray()  # until binary or not is known
        self._carry = b""  # the window's unsettled bytes, and context before them
        self._context = 0  # how many bytes at the carry's start are context (searched already)
        self._base = 0  # the file offset of the carry's first byte
        self._doc: list[bytes] | None = [] if self._format == "json" else None
        self._doc_size, self._doc_digest = 0, False
        # An NDJSON record that runs past a window: its pieces, kept only up to PAIR_LIMIT.
        self._record_open = False
        self._record: list[bytes] = []
        self._record_start = 0
        self._record_size = 0
        self._record_digest = False
        # Where each counter's last match ended (a file offset): a later window resumes there, so a
        # word that starts before a settle point is not counted again after it.
        self._resume = [0] * (len(plan.placeholders) + len(plan.words))
        self._marks: list[int | None] = [None] * len(MARKS)  # the first of each in a text window

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self._hash is not None:
            self._hash.update(data)
        self.obs.size += len(data)
        if self._head is not None:
            self._head += data
            if len(self._head) < BINARY_SNIFF:
                return
            data, self._head = bytes(self._head), None
            self._sniff(data)
        if self._unpacked is not None:
            self._unpacked.feed(data)
        self._window(data, final=False)

    @property
    def leaks(self) -> list[Leak]:
        return self.obs.leaks

    def _sniff(self, head: bytes) -> None:
        """Binary or not, and compressed or not, from the file's first bytes."""
        self.obs.binary = is_binary(head[:BINARY_SNIFF])
        kind = file_compression(head)
        if kind is not None and self._depth < DEPTH:
            self._unpacked = Unpacked(kind, *self._layer())
        # A zip's stored members are its own bytes (a NumPy .npz): it may hold records as they are.
        self._layout = layout_of(head, self._layer()[1], self.plan.allow) if self.obs.binary and kind in (None, "zip") else None

    def _layer(self) -> tuple[Callable[[], Observer], Budget, bool]:
        """What a layer inside this file needs (kitbuild.compressed, kitbuild.embedded): a fresh
        pass one layer deeper, the budget every layer of the file shares, and whether this pass
        is the file's own (whose bytes the budget is measured against)."""
        if self._budget is None:
            self._budget = Budget() if self._inside is None else self._inside[0]
        path, plan, budget, depth = self.obs.path, self.plan, self._budget, self._depth
        return (lambda: Observer(path, plan, (budget, depth + 1))), budget, self._inside is None

    def from_line(self, offset: int, before: bytes) -> None:
        """Observe a part of a text file (kitbuild.parts): what starts from ``offset``, a line
        start, on. ``before``: the bytes just before it, as the context a window keeps. The
        part is not hashed; its size is what is fed, the context not included."""
        self._head, self._hash = None, None
        self._base, self._carry, self._context = offset - len(before), before, len(before)
        self._resume = [offset] * len(self._resume)

    def finish(self, until: int | None = None) -> Observation:
        """The observation; ``until``: of what starts before this file offset only (a part's
        end, a line start, with the bytes after it fed as context)."""
        if self._head is not None:
            data, self._head = bytes(self._head), None
            self._sniff(data)
            if self._unpacked is not None:
                self._unpacked.feed(data)
            self._window(data, final=True)
        else:
            self._window(b"", final=True, until=until)
        if self._record_open:
            self._close_record()
        if self._doc is not None and self._doc_digest:
            if self._doc_size > PAIR_LIMIT:
                self.obs.pairs_unread += 1
            else:
                self._parse(b"".join(self._doc), -1)
        if self._unpacked is not None:
            self.obs.leaks.extend(self._unpacked.finish())
        if self._embedded is not None:
            self.obs.leaks.extend(self._embedded.finish())
        if self._hash is not None:
            self.obs.sha256, self.obs.heads = self._hash.hexdigest(), self._hash.heads
        return self.obs

    # -- the window ---------------------------------------------------------------------------

    def _window(self, data: bytes, final: bool, until: int | None = None) -> None:
        window = self._carry + data if self._carry else data
        lo = self._context
        margin = LeakScanner.MAX_MATCH
        if final:
            hi = len(window) if until is None else max(lo, min(len(window), until - self._base))
        elif len(window) - lo < 2 * margin:
            self._carry = window  # too little new to settle yet
            return
        else:
            # Settled up to a margin before the end: every search sees that far past a match
            # that starts in the settled part, and as far before it (the context kept below).
            hi = len(window) - margin
        if hi > lo:
            self._settle(window, lo, hi)
        keep = max(0, hi - margin)
        self._base += keep
        self._carry = window[keep:]
        self._context = hi - keep

    def _settle(self, window: bytes, lo: int, hi: int) -> None:
        """Everything that starts in ``window[lo:hi]``."""
        obs, plan, base = self.obs, self.plan, self._base
        # Digests are read from text: in binary data a run of hex digits is no printed digest. A
        # run that starts in the context before ``lo`` was counted with the window before.
        starts: list[int] = []
        if not obs.binary and not self._written:
            exact, longer, self._marks = digest_starts(window)
            starts = exact[bisect.bisect_left(exact, lo) : bisect.bisect_left(exact, hi)]
            if not obs.hidden_digest and (any(lo <= s < hi for s in longer) or any(find_from(window, m, f, lo, hi + 6) >= 0 for m, f in zip(MARKS[:2], self._marks)) or (plan.private and not plan.withheld and may_spell_digest(window, exact))):
                obs.hidden_digest = True
        if starts:
            # The work per digest stays in C (slices, Counter, dict): a record may print one on
            # every line. Each spelling's first start: the dict keeps the last of the reversed.
            spellings = [window[s : s + DIGEST_LENGTH] for s in starts]
            firsts = dict(zip(reversed(spellings), reversed(starts)))
            for spelling, n in Counter(spellings).items():
                hexdigest, at = spelling.decode("ascii").lower(), base + firsts[spelling]
                seen = obs.digests.get(hexdigest)
                if seen is None:
                    obs.digests[hexdigest] = [n, at]
                else:
                    seen[0] += n
                    seen[1] = min(seen[1], at)  # another spelling of it, in this window
        # Counted in every file, binary or not: a rewrite can pull a NUL into a text file's first
        # 8 KiB, and build and verify must count the words it wrote there the same way.
        for k, counter in enumerate(plan.counters):
            if counter is None or self._inside is not None:
                continue
            start = max(lo, self._resume[k] - base)
            n, end = counter.count(window, start, hi) if start < hi else (0, 0)
            if end:
                self._resume[k] = base + end  # a later window resumes there
            target = obs.placeholders if k < len(plan.placeholders) else obs.words
            target[k if k < len(plan.placeholders) else k - len(plan.placeholders)] += n
        # Compressed data inside the file (kitbuild.embedded); a compressed file's own bytes are
        # its stream's, which kitbuild.compressed reads (a stored member of a zip too).
        compressed: list[int] | None = [] if self._depth < DEPTH and not (obs.binary and self._unpacked) else None
        for leak in layout_scan(plan.scanner, window, base, lo, hi, obs.binary, compressed, self._layout):
            obs.leaks.append(Leak(leak.code, base + leak.offset, leak.what))
        if compressed and self._embedded is None:
            self._embedded = Embedded(*self._layer(), binary=obs.binary)
        if self._embedded is not None:
            self._embedded.settle(window, base, lo, hi, compressed or [])
        if self._pairs and not obs.binary:
            if self._doc is not None:
                self._grow_doc(window[lo:hi], bool(starts))
            else:
                self._records(window, lo, hi, starts)

    # -- pairs in JSON records ----------------------------------------------------------------

    def _grow_doc(self, piece: bytes, digest: bool) -> None:
        assert self._doc is not None
        self._doc_digest = self._doc_digest or digest
        self._doc_size += len(piece)
        if self._doc_size <= PAIR_LIMIT:
            self._doc.append(piece)
        else:
            self._doc = []  # kept only to be counted as unread

    def _records(self, window: bytes, lo: int, hi: int, digests: list[int]) -> None:
        """Parse each NDJSON record in ``window[lo:hi]`` that prints a digest and names a kit file."""
        pos = lo
        if self._record_open:
            nl = window.find(b"\n", lo, hi)
            end = nl if nl >= 0 else hi
            self._grow_record(window[lo:end])
            if digests and digests[0] < end:
                self._record_digest = True
            if nl < 0:
                return
            self._close_record()
            pos = nl + 1
        last = window.rfind(b"\n", pos, hi)  # the whole records end here
        if last >= 0:
            if bisect.bisect_left(digests, pos) < bisect.bisect_left(digests, last):
                for start, stop in self._naming(window, pos, last):
                    i = bisect.bisect_left(digests, start)
                    if i < len(digests) and digests[i] < stop:
                        self._parse(window[start:stop], self._base + start, named=True)
            pos = last + 1
        if hi > pos:  # a record that runs on into the next window
            self._open_record(window[pos:hi], self._base + pos, bisect.bisect_left(digests, pos) < len(digests))

    def _naming(self, window: bytes, first: int, last: int) -> list[tuple[int, int]]:
        """(start, end) of each record in window[first:last] (``last`` a line end) that names a
        kit path or holds a backslash (which can spell one): only those can pair a digest with
        a file here. One search over them all, not one a record: most name none."""
        finder = self.plan.path_finder
        at = [first + s for _, s, _ in finder.find_matches_as_indexes(memoryview(window)[first:last])] if finder else []
        q = find_from(window, b"\\", self._marks[2], first, last)
        while q >= 0:
            at.append(q)
            q = window.find(b"\\", window.find(b"\n", q, last + 1) + 1, last)
        records: list[tuple[int, int]] = []
        for p in sorted(at):
            if records and p < records[-1][1]:
                continue
            records.append((window.rfind(b"\n", first, p) + 1 or first, window.find(b"\n", p, last + 1)))
        return records

    def _open_record(self, piece: bytes, start: int, digest: bool) -> None:
        self._record_open, self._record, self._record_size = True, [], 0
        self._record_start, self._record_digest = start, digest
        self._grow_record(piece)

    def _grow_record(self, piece: bytes) -> None:
        # Past the limit the record is only counted as unread: memory stays bounded.
        self._record_size += len(piece)
        if self._record_size <= PAIR_LIMIT:
            self._record.append(piece)
        else:
            self._record = []

    def _close_record(self) -> None:
        if self._record_digest:
            if self._record_size > PAIR_LIMIT:
                self.obs.pairs_unread += 1
            else:
                self._parse(b"".join(self._record), self._record_start)
        self._record_open, self._record, self._record_size, self._record_digest = False, [], 0, False

    def _parse(self, data: bytes, offset: int, named: bool = False) -> None:
        """The pairs of one JSON document or NDJSON record (``named``: it is known to name a kit
        path or hold a backslash)."""
        finder = self.plan.path_finder
        if not named and b"\\" not in data and (finder is None or not finder.find_matches_as_indexes(data)):
            return  # names no file here: no pair to read (and parsing costs more than looking)
        if not self.plan.pairs:
            self.obs.pairs_pending += 1
            return
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.obs.pairs_unread += 1
            return
        for triple in json_pairs(document, self.plan.paths, self.plan.placeholders):
            seen = self.obs.pairs.get(triple)
            if seen is None:
                self.obs.pairs[triple] = [1, offset]
            else:
                seen[0] += 1


def observe_bytes(path: str, data: bytes, plan: Plan) -> Observation:
    """The observation of bytes already in memory."""
    observer = Observer(path, plan)
    for at in range(0, len(data), BLOCK_SIZE):
        observer.feed(data[at : at + BLOCK_SIZE])
    return observer.finish()


def observe_stream(path: str, stream: BinaryIO, plan: Plan) -> Observation:
    """The observation of a stream read to its end (not to a size given before: a file that grew
    while it was read is observed with what it grew by)."""
    observer = Observer(path, plan)
    # A first read of 64 KiB: most kit files are small, and a read of BLOCK_SIZE allocates a
    # whole MiB (a fresh mapping, with its page faults) for each of them.
    size = FIRST_READ
    while True:
        block = stream.read(size)
        if not block:
            return observer.finish()
        observer.feed(block)
        size = BLOCK_SIZE
