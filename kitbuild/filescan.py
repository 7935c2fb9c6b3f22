"""One streaming pass over one kit file: everything ``kitbuild verify`` needs to learn from it.

Each file is read once, in fixed-size blocks, whatever its line lengths (a kit from anywhere may
hold a 100 MB line). In that pass it is hashed, compared with the page it should be, and searched
for the digests it prints, the placeholder, the words the rules wrote and leak shapes. JSON and
NDJSON records are also parsed for (path, digest) pairs, up to :data:`PAIR_PARSE_LIMIT` bytes per
document, so memory stays bounded by that limit and never grows with the file.

Patterns run over a window: the bytes carried from the previous block, then the new block. A
match is taken only if it starts before the last :data:`_MARGIN` bytes of the window (those are
carried into the next one), so a match is never cut by a block edge and never counted twice; a few
bytes before the window stay visible to look-behind assertions.

:func:`scan_file` is a pure function of a kit reader, a kit path and a picklable :class:`ScanPlan`,
so a process pool can map it over the files.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping

import orjson

from kitbuild.kitfs import KitFS, MemberError
from kitbuild.leaks import GENERIC_SHAPES, READER_SHAPES
from kitbuild.rewrite import format_of
from kitbuild.schema import key_path

BLOCK_SIZE = 1 << 20
PAIR_PARSE_LIMIT = 16 << 20
# Longer than any match the patterns need whole (a prefixed digest is 71 bytes; an allow entry
# rarely passes a few hundred), and the look-behind context kept before a window.
_MARGIN = 8192
_LOOKBACK = 4096
_DIFF_CONTEXT = 200

LEAK_SHAPES: tuple[tuple[str, str, bytes], ...] = tuple(
    [("KB501", what, shape) for what, shape in GENERIC_SHAPES]
    + [("KB502" if "e-mail" in what else "KB503", what, shape) for what, shape in READER_SHAPES]
)
# A digest is a maximal run of exactly 64 hex digits (DIGEST_RE's look-arounds say the same);
# finding runs and keeping those of length 64 is several times faster than DIGEST_RE itself.
_HEX_RUN = re.compile(rb"[0-9A-Fa-f]{64,}")
_SHAPE_ANCHORS: tuple[tuple[str, tuple[bytes, ...]], ...] = (
    ("(/home/", (b"home",)),
    ("(/Users/", (b"Users",)),
    ("(/root/", (b"root",)),
    ("(/mnt/", (b"mnt",)),
    ("Users\\", (b"Users",)),
    ("file://", (b"file://",)),
    ("e-mail", (b"@",)),
    ("IPv4", (b"10.", b"172.", b"192.168.")),
)
_DIGEST_VALUE = re.compile(r"(?:sha256:)?([0-9A-Fa-f]{64})")
_PATH_KEYS = {"path", "file", "filename", "file_path", "filepath", "name_path"}
_DIGEST_KEYS = {"sha256", "sha256sum", "digest", "checksum"}


@dataclass(frozen=True)
class ScanPlan:
    """What to look for in the kit's files; the same for every file."""

    records: frozenset[str]  # kit paths of record files: digests, words and pairs are read there
    paths: frozenset[str]  # every kit path a record may pair with a digest
    placeholders: tuple[str, ...] = ()
    words: tuple[tuple[str, ...], ...] = ()  # per re-observable rule: the forms of the words it wrote
    allow: tuple[str, ...] = ()
    expect: Mapping[str, bytes] = field(default_factory=dict)  # page path -> the bytes it must have
    block_size: int = BLOCK_SIZE
    pair_limit: int = PAIR_PARSE_LIMIT


@dataclass(frozen=True)
class Leak:
    code: str
    line: int
    col: int
    what: str


@dataclass(frozen=True)
class Pair:
    """A digest a record pairs with a kit path: ``key`` (a key path) says ``said`` for ``target``."""

    key: str
    target: str
    said: str  # lower-case hex, or a placeholder
    line: int | None


@dataclass
class FileScan:
    """What one pass learned about one file."""

    path: str
    size: int = 0
    sha256: str = ""
    error: MemberError | None = None
    digests: dict[str, list[int]] = field(default_factory=dict)  # hex -> [count, first line]
    placeholders: list[int] = field(default_factory=list)
    words: list[int] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    pairs_unread: bool = False  # a JSON document too large or not parseable for pairs
    page_diff: tuple[int, str, str] | None = None  # (line, expected line, found line)


def _literal_pattern(forms: Iterable[str]) -> re.Pattern[bytes]:
    encoded = sorted({f.encode("utf-8") for f in forms if f}, key=lambda b: (-len(b), b))
    return re.compile(b"|".join(re.escape(b) for b in encoded) if encoded else b"(?!)")


def _anchors(what: str) -> tuple[bytes, ...]:
    """Literals a shape's every match holds: a window without any of them is not searched."""
    for key, anchors in _SHAPE_ANCHORS:
        if key in what:
            return anchors
    return ()


class _Patterns:
    """The compiled patterns of a plan, each with what a match means and its anchor literals."""

    def __init__(self, plan: ScanPlan, record: bool) -> None:
        self.items: list[tuple[str, int, re.Pattern[bytes]]] = []
        self.anchors: list[tuple[bytes, ...]] = []
        if record:
            self._add("digest", 0, _HEX_RUN)
            for i, placeholder in enumerate(plan.placeholders):
                self._add("placeholder", i, _literal_pattern([placeholder]))
            for i, forms in enumerate(plan.words):
                self._add("words", i, _literal_pattern(forms))
        for i, (_, what, shape) in enumerate(LEAK_SHAPES):
            self._add("leak", i, re.compile(shape), _anchors(what))

    def _add(self, kind: str, index: int, pattern: re.Pattern[bytes], anchors: tuple[bytes, ...] = ()) -> None:
        self.items.append((kind, index, pattern))
        self.anchors.append(anchors)


class _Window:
    """Runs patterns over a stream of blocks as if over the whole file (see the module doc)."""

    def __init__(self, patterns: _Patterns) -> None:
        self.patterns = patterns
        self.carry = b""
        self.lookback = b""
        self.carry_start = 0  # absolute offset of carry[0]
        self.line = 1  # line number at carry[0]
        self.col = 0  # 0-based column at carry[0]
        self.next = [0] * len(patterns.items)

    def feed(self, block: bytes, final: bool) -> list[tuple[int, re.Match[bytes], int, int, bytes]]:
        """Matches (pattern index, match, line, col, window) that start in the part now settled."""
        window = self.lookback + self.carry + block
        lb = len(self.lookback)
        base = self.carry_start - lb
        safe = len(window) if final else max(lb, len(window) - _MARGIN)
        hits: list[tuple[int, int, re.Match[bytes]]] = []
        for i, (_, _, pattern) in enumerate(self.patterns.items):
            anchors = self.patterns.anchors[i]
            if anchors and not any(a in window for a in anchors):
                continue
            for m in pattern.finditer(window, max(self.next[i] - base, lb)):
                if m.start() >= safe:
                    break
                if m.end() == m.start():
                    continue
                hits.append((m.start(), i, m))
                self.next[i] = base + m.end()
        hits.sort(key=lambda h: (h[0], h[1]))
        out = []
        line, col, counted = self.line, self.col, lb
        for start, i, m in hits:
            newlines = window.count(b"\n", counted, start)
            if newlines:
                line += newlines
                col = start - (window.rfind(b"\n", counted, start) + 1)
            else:
                col += start - counted
            counted = start
            out.append((i, m, line, col + 1, window))
        settled = window[lb:safe]
        newlines = settled.count(b"\n")
        if newlines:
            self.line += newlines
            self.col = len(settled) - (settled.rfind(b"\n") + 1)
        else:
            self.col += len(settled)
        self.carry = window[safe:]
        self.lookback = window[max(0, safe - _LOOKBACK) : safe]
        self.carry_start = base + safe
        return out


def _allowed(allow: tuple[str, ...], window: bytes, start: int, end: int) -> bool:
    """True when an allow entry covers ``window[start:end]`` on its own line."""
    for text in allow:
        t = text.encode("utf-8")
        lo = max(0, end - len(t))
        for pos in _find_all(window, t, lo, start + 1):
            if pos <= start and end <= pos + len(t) and b"\n" not in window[pos : pos + len(t)]:
                return True
    return False


def _find_all(data: bytes, needle: bytes, lo: int, hi: int) -> Iterator[int]:
    pos = data.find(needle, lo, hi + len(needle) - 1)
    while 0 <= pos < hi:
        yield pos
        pos = data.find(needle, pos + 1, hi + len(needle) - 1)


# -- pairs in JSON records ----------------------------------------------------------------------


def _is_path_key(key: str) -> bool:
    k = key.lower()
    return k in _PATH_KEYS or k.endswith("_path")


def _is_digest_key(key: str) -> bool:
    k = key.lower()
    return k in _DIGEST_KEYS or k.endswith("sha256") or k.endswith("_digest")


def _said(value: Any, placeholders: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        return None
    if value in placeholders:
        return value
    m = _DIGEST_VALUE.fullmatch(value)
    return m.group(1).lower() if m else None


def json_pairs(document: Any, paths: frozenset[str], placeholders: tuple[str, ...]) -> Iterator[tuple[str, str, str]]:
    """(key path, kit path, what it says) for each digest ``document`` pairs with a kit path.

    A pair is an object with exactly one path-like field and one sha256-like field (``{"path":
    ..., "sha256": ...}``), or a mapping entry from a kit path to a digest. The walk uses its own
    stack: a hostile record nested a thousand deep must not exhaust Python's recursion limit.
    """
    stack: list[tuple[list[Any], Any]] = [([], document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            path_keys = [k for k, v in value.items() if isinstance(v, str) and _is_path_key(k)]
            digest_keys = [k for k, v in value.items() if _is_digest_key(k) and _said(v, placeholders)]
            if len(path_keys) == 1 and len(digest_keys) == 1:
                target = _normal(value[path_keys[0]])
                if target in paths:
                    said = _said(value[digest_keys[0]], placeholders)
                    assert said is not None
                    yield key_path([*where, digest_keys[0]]), target, said
            for k, v in value.items():
                said = _said(v, placeholders)
                if said is not None and _normal(k) in paths:
                    yield key_path([*where, k]), _normal(k), said
            stack.extend(([*where, k], v) for k, v in reversed(list(value.items())) if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(([*where, i], v) for i, v in reversed(list(enumerate(value))) if isinstance(v, (dict, list)))


def _normal(path: str) -> str:
    return path[2:] if path.startswith("./") else path


class _PairReader:
    """Collects JSON (whole document) or NDJSON (line by line) bytes, up to the plan's limit."""

    def __init__(self, fmt: str, plan: ScanPlan, scan: FileScan) -> None:
        self.fmt = fmt
        self.plan = plan
        self.scan = scan
        self.parts: list[bytes] = []
        self.size = 0
        self.line = 1
        self.over = False

    def _parse(self, data: bytes, line: int | None) -> None:
        if not data.strip():
            return
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.scan.pairs_unread = True
            return
        for key, target, said in json_pairs(document, self.plan.paths, self.plan.placeholders):
            self.scan.pairs.append(Pair(key, target, said, line))

    def feed(self, block: bytes) -> None:
        if self.fmt == "json":
            if not self.over:
                self.size += len(block)
                if self.size > self.plan.pair_limit:
                    self.over, self.parts = True, []
                    self.scan.pairs_unread = True
                else:
                    self.parts.append(block)
            return
        start = 0
        while True:
            nl = block.find(b"\n", start)
            piece = block[start:] if nl < 0 else block[start : nl + 1]
            if not self.over:
                self.size += len(piece)
                if self.size > self.plan.pair_limit:
                    self.over, self.parts = True, []
                    self.scan.pairs_unread = True
                else:
                    self.parts.append(piece)
            if nl < 0:
                return
            if not self.over:
                self._parse(b"".join(self.parts), self.line)
            self.parts, self.size, self.over = [], 0, False
            self.line += 1
            start = nl + 1

    def close(self) -> None:
        if self.over or not self.parts:
            return
        self._parse(b"".join(self.parts), self.line if self.fmt == "ndjson" else None)


# -- the pass -----------------------------------------------------------------------------------


class _PageCompare:
    def __init__(self, expected: bytes) -> None:
        self.expected = expected
        self.offset = 0
        self.tail = b""
        self.diff: tuple[int, str, str] | None = None

    def feed(self, block: bytes) -> None:
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


def _blocks(stream: BinaryIO, size: int, tick: Callable[[int], None] | None = None) -> Iterator[bytes]:
    while block := stream.read(size):
        if tick is not None:
            tick(len(block))
        yield block


def scan_blocks(path: str, blocks: Iterable[bytes], plan: ScanPlan) -> FileScan:
    """Scan a file given as a sequence of byte blocks."""
    record = path in plan.records
    scan = FileScan(path, placeholders=[0] * len(plan.placeholders), words=[0] * len(plan.words))
    patterns = _Patterns(plan, record)
    window = _Window(patterns)
    fmt = format_of(path)
    pairs = _PairReader(fmt, plan, scan) if record and fmt in ("json", "ndjson") else None
    page = _PageCompare(plan.expect[path]) if path in plan.expect else None
    digest = hashlib.sha256()
    size = 0

    def take(block: bytes, final: bool) -> None:
        for i, m, line, col, text in window.feed(block, final):
            kind, index, _ = patterns.items[i]
            if kind == "digest":
                if m.end() - m.start() != 64:
                    continue
                seen = scan.digests.setdefault(m.group(0).lower().decode("ascii"), [0, line])
                seen[0] += 1
            elif kind == "placeholder":
                scan.placeholders[index] += 1
            elif kind == "words":
                scan.words[index] += 1
            elif not _allowed(plan.allow, text, m.start(), m.end()):
                code, what, _ = LEAK_SHAPES[index]
                scan.leaks.append(Leak(code, line, col, what))

    for block in blocks:
        digest.update(block)
        size += len(block)
        if pairs is not None:
            pairs.feed(block)
        if page is not None:
            page.feed(block)
        take(block, False)
    take(b"", True)
    if pairs is not None:
        pairs.close()
    if page is not None:
        page.close()
        scan.page_diff = page.diff
    scan.size = size
    scan.sha256 = digest.hexdigest()
    return scan


def scan_file(kit: KitFS, path: str, plan: ScanPlan, tick: Callable[[int], None] | None = None) -> FileScan:
    """Read ``path`` once and scan it; a file that cannot be opened gives a scan with ``error``.

    ``tick`` is called with each block's size as it is read (a progress bar's bytes).
    """
    try:
        stream = kit.open(path)
    except MemberError as exc:
        return FileScan(path, error=exc)
    try:
        with stream:
            return scan_blocks(path, _blocks(stream, plan.block_size, tick), plan)
    except OSError as exc:
        return FileScan(path, error=MemberError(path, f"cannot be read ({exc.strerror})", "unreadable"))


def scan_bytes(path: str, data: bytes, plan: ScanPlan) -> FileScan:
    """Scan bytes already in memory (a file verify had to read whole, such as index.json)."""
    size = plan.block_size
    return scan_blocks(path, (data[i : i + size] for i in range(0, len(data), size)), plan)
