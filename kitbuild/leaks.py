"""The leak gate: private text that must never reach a kit, in any encoding a reader's tool decodes.

``build`` scans each kit file with the config's private strings and the original digests it
withholds; ``verify`` scans the same bytes with neither (a reader has only the generic shapes and
the kit's allow list). Both use :class:`LeakScanner`, a pure function of (data, binary, its
settings), so a build the gate lets through is a kit verify finds clean.

What it finds, by code:

- KB501 a path under a home or cluster mount (``/home/x``, ``/scratch/x``, ``C:\\Users\\x``, a
  ``file://`` URL), KB502 an e-mail address, KB503 a private IPv4 address: generic shapes, which
  an allow entry may pass;
- KB901 a private string the config names, KB903 an original digest the kit withholds: never
  passed by an allow entry.

Where: the raw bytes (ASCII, UTF-8), the text under JSON ``\\uXXXX`` and ``\\/`` escapes, under
percent-encoding, and UTF-16 and UTF-32 in either byte order at any alignment. A finding is
placed at the raw byte where its (encoded) text starts. Its ``what`` says what kind of thing it is,
never the text: a CI log of the report publishes nothing.

Speed, in CPU time on one core of a shared 2-core development VM (Python 3.11, ahocorasick_rs
1.0.3), 200 MB streamed in 4 MiB windows (``python -m bench.leaks_speed``; about 10% apart
from run to run):

=====================================================  ===========  ============
settings                                               records      random bytes
                                                       (text)       (binary)
=====================================================  ===========  ============
none: verify's generic shapes                          668 MB/s     282 MB/s
10 private strings, 200 withheld digests               258 MB/s     161 MB/s
1,000 private strings, 200 withheld digests            204 MB/s     144 MB/s
=====================================================  ===========  ============

The records are JSON lines with relative paths, two sha256 digests, numbers and a 'recall@10'
key each, and no finding. Many literals are searched with one ahocorasick_rs automaton, not
one ``re`` alternation (longest first): over 50 MB of the same records, 13,900 against
181 MB/s with 10 literals, 598 against 1 MB/s with 1,000.
"""

from __future__ import annotations

import json
import re
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable, Mapping, Sequence

import ahocorasick_rs

__all__ = ["Leak", "LeakScanner"]


@dataclass(frozen=True, slots=True)
class Leak:
    """Private text at ``offset`` of the scanned data: ``code`` and ``what`` kind of thing, never the text."""

    code: str
    offset: int
    what: str


# -- shapes ------------------------------------------------------------------------------------
#
# Every shape regex is tried only where one of its anchors (a literal every match contains) was
# found: on clean records the anchors' search runs at gigabytes a second, a regex tried at every
# byte at tens of megabytes. Each regex matches the shape plus the first name after its mount,
# so an allow entry can pass one folder and no more.

# A path shape starts where a path starts: not inside a word, a relative path ('a/data/x',
# './data/x'), a URL's path ('s3://bucket/data/x') or a non-ASCII name. A colon does not stop
# it, except a drive letter's ('C:/data'): 'gpu07:/scratch/u7' (scp, rsync, NFS) and
# 'PATH=/usr/bin:/home/ada/bin' are exactly the leaks this gate is for. A JSON escape before it
# ('\n/home/ada' in a log line) starts it too: the escape's letter is not part of the path.
_AFTER_ESCAPE = rb"(?<=\\[nrtbf])"
_PATH_CHAR = rb"A-Za-z0-9_.~/\x80-\xff-"
_PATH_START = rb"(?:" + _AFTER_ESCAPE + rb"|(?<![" + _PATH_CHAR + rb"])(?<!(?<![" + _PATH_CHAR + rb"])[A-Za-z]:))"
# One name after the mount: the characters file names use in practice (any non-ASCII byte
# included, so '/home/josé' is found whole), at most 255 bytes (the longest name most file
# systems allow; a longer run still fires on its first 255), never ending in '.', which closes
# a sentence far more often than it ends a folder's name ('see /data/runs.').
_NAME = rb"[A-Za-z0-9_.~+@%!$\x80-\xff-]{0,254}[A-Za-z0-9_~+@%!$\x80-\xff-]"
_MOUNTS = ("home", "Users", "root", "mnt", "scratch", "data", "srv", "work", "nfs", "gpfs", "lustre", "net")
# '/tmp' is left out on purpose: it names no person or machine, and records print it often.

_EMAIL_LOCAL = rb"A-Za-z0-9._%+-"
_EMAIL_DOMAIN = rb"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,63}(?![A-Za-z0-9-])"
_OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"


@dataclass(frozen=True, slots=True)
class _Shape:
    code: str
    what: str
    pattern: re.Pattern[bytes]
    # Not looked for in binary data. An e-mail shape turns up by chance in compressed or random
    # bytes (2 in 30 MB of random bytes, measured), and a build must not fail on chance with
    # only an allow entry for a way out; and neither shape is text a reader's tool shows there.
    # Private strings, withheld digests and paths under a private mount are specific enough
    # that a match in binary data is no accident, and a binary file (a SQLite index, a pickle)
    # carries them as readable bytes: those are looked for everywhere.
    text_only: bool = False


def _mount(mount: str) -> _Shape:
    pattern = _PATH_START + b"/" + mount.encode() + b"/" + _NAME
    return _Shape("KB501", f"a private path (/{mount}/…)", re.compile(pattern))


_SHAPES_BY_MOUNT = {mount: _mount(mount) for mount in _MOUNTS}
_WINDOWS = _Shape(
    "KB501",
    "a private path (C:\\Users\\…)",
    # A JSON encoder doubles each backslash; forward slashes are a Windows path too.
    re.compile(_PATH_START + rb"[A-Za-z]:(?:\\\\|\\|/)(?:Users|users|USERS)(?:\\\\|\\|/)" + _NAME),
)
_FILE_URL = _Shape("KB501", "a file:// URL", re.compile(rb"(?<![A-Za-z0-9_.~+-])(?:file|FILE)://" + rb"/?" + _NAME))
_EMAIL = _Shape(
    "KB502",
    "an e-mail address",
    re.compile(rb"(?:" + _AFTER_ESCAPE + rb"|(?<![" + _EMAIL_LOCAL + rb"]))[" + _EMAIL_LOCAL + rb"]{1,64}" + _EMAIL_DOMAIN),
    text_only=True,
)
_IPV4 = _Shape(
    "KB503",
    "a private IPv4 address",
    # Not part of a longer dotted number: '1.10.0.0.5' is a version, not an address.
    re.compile(
        rb"(?<![0-9.])(?:10(?:\." + _OCTET + rb"){3}|172\.(?:1[6-9]|2[0-9]|3[01])(?:\." + _OCTET + rb"){2}"
        rb"|192\.168(?:\." + _OCTET + rb"){2})(?![0-9]|\.[0-9])"
    ),
    text_only=True,
)
# An e-mail address is found from its domain ('@' and a dotted name ending in letters), one `re`
# pass in C: records print '@' in every line ('recall@10'), and an anchor for each would cost a
# Python call per line. Its local part is then read back from the '@'.
_EMAIL_AT = re.compile(_EMAIL_DOMAIN)
_MAX_LOCAL = 64

# Anchor -> (shape, how many characters before the anchor the shape's match starts); None: an
# e-mail's local part, read back from the '@'. No two anchors overlap where both could fire (a
# mount's anchor after another's, as in '/data/home/', is preceded by a letter, which the shape
# refuses), so the automaton's non-overlapping matches miss no shape.
_Anchors = dict[bytes, tuple[tuple[_Shape, int | None], ...]]
_ANCHORS: _Anchors = {
    **{f"/{mount}/".encode(): ((shape, 0),) for mount, shape in _SHAPES_BY_MOUNT.items() if mount != "Users"},
    b"/Users/": ((_SHAPES_BY_MOUNT["Users"], 0), (_WINDOWS, 2)),
    b"/users/": ((_WINDOWS, 2),),
    b"/USERS/": ((_WINDOWS, 2),),
    **{b":" + sep + users + sep: ((_WINDOWS, 1),) for sep in (b"\\", b"\\\\") for users in (b"Users", b"users", b"USERS")},
    b"file://": ((_FILE_URL, 0),),
    b"FILE://": ((_FILE_URL, 0),),
    b"10.": ((_IPV4, 0),),
    b"172.": ((_IPV4, 0),),
    b"192.168.": ((_IPV4, 0),),
}
# In UTF-16 and UTF-32 an e-mail has no domain regex to find it by: its '@' is an anchor there.
_ENCODED_ANCHORS: _Anchors = {**_ANCHORS, b"@": ((_EMAIL, None),)}


# -- encodings ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Encoding:
    name: str
    unit: int  # bytes per code unit
    big: bool  # byte order
    mirror: int  # how far a big-endian reading of little-endian text is shifted: see _settle

    def code_units(self, data: bytes) -> array[int]:
        units = array("H" if self.unit == 2 else _UINT32, data[: len(data) - len(data) % self.unit])
        if self.big != (sys.byteorder == "big"):
            units.byteswap()
        return units


_UINT32 = "I" if array("I").itemsize == 4 else "L"
_UTF8 = _Encoding("utf-8", 1, False, 0)
_WIDE = (
    _Encoding("utf-16-le", 2, False, 1),
    _Encoding("utf-16-be", 2, True, 1),
    _Encoding("utf-32-le", 4, False, 3),
    _Encoding("utf-32-be", 4, True, 3),
)
# A UTF-16 or UTF-32 anchor is searched by its little-endian form with the trailing NULs cut:
# those bytes occur in little-endian text where the text is, and in big-endian text one (three)
# bytes later, so one pattern finds both and both readings are tried at each hit.
_WIDE_LE = {2: _WIDE[0], 4: _WIDE[2]}
_WIDE_BE = {2: _WIDE[1], 4: _WIDE[3]}
# How much text around a UTF-16/32 anchor is read to try its shapes: an e-mail's local part
# before, its domain after (the longest match any shape allows, plus a character each side).
_FOLD_BEFORE = _MAX_LOCAL + 8
_FOLD_AFTER = 700


# -- decoded views -----------------------------------------------------------------------------

# Half of MAX_MATCH: the farthest a finding's decision reaches from its start, either way (an
# e-mail address of 640 characters, each \u-escaped; an allow string of _MAX_LITERAL bytes so).
_REACH = 4096
# The longest finding in a UTF-8 view, in bytes, and more: an e-mail address (640), a private
# string's JSON spelling (2 x _MAX_LITERAL, each backslash doubled) and a character either side.
_SPAN = 1100


class _View:
    """The text of raw[first:last] with its escapes decoded, and where each of its bytes came from."""

    __slots__ = ("text", "_at", "_raw", "_length", "_raw_length", "_first")

    def __init__(self, data: bytes, first: int, last: int, escapes: re.Pattern[bytes], decode: Callable[[re.Match[bytes]], bytes]) -> None:
        pieces: list[bytes] = []
        self._first = first
        self._at: list[int] = []  # where a decoded escape starts in the view
        self._raw: list[int] = []  # and in the raw data
        self._length: list[int] = []
        self._raw_length: list[int] = []
        done, at = first, 0
        for m in escapes.finditer(data, first, last):
            start, end = m.span()
            decoded = decode(m)
            pieces.append(data[done:start])
            at += start - done
            self._at.append(at)
            self._raw.append(start)
            self._length.append(len(decoded))
            self._raw_length.append(end - start)
            pieces.append(decoded)
            at += len(decoded)
            done = end
        pieces.append(data[done:last])
        self.text = b"".join(pieces)

    def near_escapes(self) -> list[tuple[int, int]]:
        """The stretches of the view where a finding can differ from the raw text's: those
        within _SPAN of a decoded escape. Only these are searched; the rest of the view is
        there as context, for the lookbehinds, boundaries and allow strings."""
        stretches: list[list[int]] = []
        for at, length in zip(self._at, self._length):
            first, last = max(0, at - _SPAN), min(len(self.text), at + length + _SPAN)
            if stretches and first <= stretches[-1][1]:
                stretches[-1][1] = last
            else:
                stretches.append([first, last])
        return [(first, last) for first, last in stretches]

    def raw(self, at: int) -> int:
        """The raw offset of view byte ``at``: a decoded character maps to its escape's start."""
        i = bisect_right(self._at, at) - 1
        if i < 0:
            return self._first + at
        if at < self._at[i] + self._length[i]:
            return self._raw[i]
        return self._raw[i] + self._raw_length[i] + at - self._at[i] - self._length[i]


def _views(data: bytes, escapes: re.Pattern[bytes], decode: Callable[[re.Match[bytes]], bytes]) -> Iterable[_View]:
    """Views of the stretches of ``data`` around its escapes.

    Away from escapes a view is the raw text and finds what the raw text does, so only the
    text near escapes is searched (_View.near_escapes): each finding there starts within
    _SPAN raw bytes of an escape (the view bytes between are raw bytes, or escapes themselves),
    and the view reaches 2 * _REACH raw bytes past the escapes, more context than any finding
    needs. Random bytes hold a '%4F' or '\\/' every few tens of kilobytes; decoding whole
    windows for them halved the speed of a binary scan (86 against 182 MB/s, 200 digests).
    """
    stretches: list[list[int]] = []
    for m in escapes.finditer(data):
        first, last = max(0, m.start() - 2 * _REACH), min(len(data), m.end() + 2 * _REACH)
        if stretches and first <= stretches[-1][1]:
            stretches[-1][1] = last
        else:
            stretches.append([first, last])
    for first, last in stretches:
        yield _View(data, first, last, escapes, decode)


# JSON: only \uXXXX (a surrogate pair as one character) and \/ are decoded. \n, \t and the like
# stay as they are in every view (the shapes and names treat them as the boundary they are), so
# a view and the raw text agree away from the escapes it decodes. A backslash before an escape's
# backslash is not looked at: the text '\u0062' printed by a tool that escapes once more is
# decoded too, which can only add a finding, and keeps each escape's decoding independent of how
# far back a window starts.
_JSON_ESCAPE = re.compile(rb"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\/")


def _json_decode(m: re.Match[bytes]) -> bytes:
    high, low, single = m.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00).encode()
    if single is not None:
        code = int(single, 16)
        return "\ufffd".encode() if 0xD800 <= code < 0xE000 else chr(code).encode()  # a lone surrogate
    return b"/"


_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


def _percent_decode(m: re.Match[bytes]) -> bytes:
    return bytes((int(m.group(1), 16),))


# -- literals ----------------------------------------------------------------------------------

# A private string with no '/' or '\\' is a name (a host, a user): it fires only as a whole name,
# so 'gpu07' is not found in 'gpu070' or 'xgpu07' (nor in 'x.gpu07', another host), and is
# found in 'gpu07.lab.example.org' (its short form is private either way) and at a sentence's
# end ('gpu07.'). A path fires anywhere, as plain text.
_NAME_BEFORE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_AFTER = _NAME_BEFORE - {ord(".")}
_ESCAPE_LETTERS = frozenset(b"nrtbf")
# The longest private or allow string, in UTF-8 bytes: fully \u-escaped (6 bytes a byte) it
# still fits in _REACH, so a window sees it whole.
_MAX_LITERAL = 512
# A withheld digest is searched by its first 16 hex digits and compared whole where they are:
# the automaton of 2 x 200 prefixes runs at twice the speed of one of the whole digests (485
# against 228 MB/s over hex-heavy records), and 64 bits of a sha256 do not turn up by chance.
_DIGEST_PREFIX = 16


@dataclass(frozen=True, slots=True)
class _Literal:
    code: str
    what: str
    whole: bytes  # the text found (its pattern in the automaton may be a prefix of it)
    length: int  # characters of the private text, to keep the longest of two at one offset
    name: bool
    encoding: _Encoding


@dataclass(frozen=True, slots=True)
class _Tables:
    """The patterns searched in one kind of data (text or binary, with or without NUL bytes)."""

    literals: list[list[_Literal]]  # per pattern
    literal_search: ahocorasick_rs.BytesAhoCorasick | None  # leftmost-longest: the fast pass
    literal_overlaps: ahocorasick_rs.BytesAhoCorasick | None  # every occurrence, near a hit
    longest: int
    anchors: list[list[tuple[_Shape, int | None, _Encoding]]]
    anchor_search: ahocorasick_rs.BytesAhoCorasick | None


# (code, raw offset, length, what, encoding, allowed) of a finding before it is settled: an
# allowed one is kept until then, for the mirror rule (see _settle)
_Found = tuple[str, int, int, str, _Encoding, bool]


class LeakScanner:
    """Finds private text in bytes: the same function for ``build`` and for ``verify``.

    ``private``: private string -> what it is (printed, so it must hold no private string or
    digest: ValueError); ``allow``: strings inside which a generic shape (KB501-KB503) is
    passed, never a private string or digest; ``digests``: sha256 hex -> what it is, withheld
    from the kit (KB903), found in lower or upper case, alone or inside a longer run of hex.
    A private or allow string may be at most 512 bytes long in UTF-8 (ValueError).
    """

    # The longest stretch of data one finding depends on: nothing decides a finding at offset s
    # but data[s - MAX_MATCH // 2 : s + MAX_MATCH // 2]. A caller streaming a file scans windows
    # that overlap by MAX_MATCH bytes and keeps from each the findings from MAX_MATCH // 2 after
    # its start (0 in the first window) to MAX_MATCH // 2 before its end (its end in the last):
    # each finding then comes once, and as one scan of the whole file finds it.
    MAX_MATCH: ClassVar[int] = 2 * _REACH

    def __init__(self, private: Mapping[str, str] = {}, allow: Sequence[str] = (), digests: Mapping[str, str] = {}) -> None:
        literals: dict[bytes, list[_Literal]] = {}
        # Raised once the descriptions they print are known to hold no private string.
        errors: list[str] = []

        def add(pattern: bytes, literal: _Literal) -> None:
            if literal not in literals.setdefault(pattern, []):
                literals[pattern].append(literal)

        for text, what in private.items():
            if not text:
                continue
            if len(text.encode()) > _MAX_LITERAL:
                errors.append(f"a private string is longer than {_MAX_LITERAL} bytes: {what}")
                continue
            name = "/" not in text and "\\" not in text
            # Host names are case-blind, and Windows prints its computer's name in capitals.
            for spelling in dict.fromkeys([text, text.lower(), text.upper()] if name else [text]):
                for form, encoding in _forms(spelling):
                    add(form, _Literal("KB901", what, form, len(text), name, encoding))
        for digest, what in digests.items():
            if not re.fullmatch(r"[0-9a-fA-F]{64}", digest):
                errors.append(f"a withheld digest is not 64 hex digits: {what}")
                continue
            for spelling in (digest.lower(), digest.upper()):
                for encoding in (_UTF8, *_WIDE):
                    add(spelling[:_DIGEST_PREFIX].encode(encoding.name), _Literal("KB903", what, spelling.encode(encoding.name), 64, False, encoding))
        self._literals = literals
        self._tables: dict[tuple[bool, bool], _Tables] = {}
        self._check_descriptions([*private.values(), *digests.values()])
        if errors:
            raise ValueError(errors[0])

        forms: dict[_Encoding, list[bytes]] = {}
        for text in allow:
            if not text:
                continue
            if len(text.encode()) > _MAX_LITERAL:
                raise ValueError(f"an allow entry is longer than {_MAX_LITERAL} bytes")
            for form, encoding in _forms(text, ascii_json=True):
                forms.setdefault(encoding, []).append(form)
        self._allow = {encoding: tuple(dict.fromkeys(found)) for encoding, found in forms.items()}

    def __getstate__(self) -> dict[str, object]:
        # The automata do not pickle: a worker process builds its own on first use.
        return {**self.__dict__, "_tables": {}}

    # -- settings ------------------------------------------------------------------------------

    def _check_descriptions(self, descriptions: list[str]) -> None:
        # A description is printed: one that holds a private string or digest would publish it
        # in every report. One search over all of them, for names inside words too (a
        # description 'xgpu07y' prints 'gpu07' all the same).
        text = "\n".join(descriptions).encode()
        tables = self._table(binary=False, nul=b"\0" in text)
        if self._literal_matches(text, tables, alone=False):
            raise ValueError("the description of a private string or digest contains a private string or digest")

    def _table(self, *, binary: bool, nul: bool) -> _Tables:
        key = (binary, nul)
        if key not in self._tables:
            self._tables[key] = self._build_table(binary, nul)
        return self._tables[key]

    def _build_table(self, binary: bool, nul: bool) -> _Tables:
        # Patterns with a NUL byte (most UTF-16/32 forms) can only occur in data with one, so
        # data without NULs is searched without them: the same findings, a smaller automaton.
        literal_patterns = [p for p in self._literals if nul or b"\0" not in p]
        anchors: dict[bytes, list[tuple[_Shape, int | None, _Encoding]]] = {}
        for anchor, shapes in _ANCHORS.items():
            for shape, back in shapes:
                if not (binary and shape.text_only):
                    anchors.setdefault(anchor, []).append((shape, back, _UTF8))
        if nul:
            for anchor, shapes in _ENCODED_ANCHORS.items():
                for encoding in _WIDE_LE.values():
                    form = anchor.decode().encode(encoding.name)
                    core = form.rstrip(b"\0")
                    pattern = core if len(core) > 1 else form
                    for shape, back in shapes:
                        if not (binary and shape.text_only):
                            anchors.setdefault(pattern, []).append((shape, back, encoding))
        anchor_patterns = list(anchors)
        return _Tables(
            literals=[self._literals[p] for p in literal_patterns],
            literal_search=_automaton(literal_patterns, ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST),
            literal_overlaps=_automaton(literal_patterns, ahocorasick_rs.MATCHKIND_STANDARD),
            longest=max(map(len, literal_patterns), default=0),
            anchors=[anchors[p] for p in anchor_patterns],
            anchor_search=_automaton(anchor_patterns, ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST),
        )

    # -- the scan ------------------------------------------------------------------------------

    def scan(self, data: bytes, *, binary: bool, lo: int = 0, hi: int | None = None) -> list[Leak]:
        """Every finding that starts in ``data[lo:hi]``, sorted by offset, then code.

        The data around ``lo:hi`` is context only (see ``MAX_MATCH``); ``binary``: the caller's
        verdict on the whole file (a NUL byte in its first 8 KiB), which leaves out the e-mail
        and IPv4 shapes."""
        data = bytes(data)
        hi = len(data) if hi is None else min(hi, len(data))
        if lo >= hi:
            return []
        found: list[_Found] = []
        self._scan_text(data, 0, len(data), None, binary, found)
        for escapes, decode in ((_JSON_ESCAPE, _json_decode), (_PERCENT, _percent_decode)):
            for view in _views(data, escapes, decode):
                for start, end in view.near_escapes():
                    self._scan_text(view.text, start, end, view, binary, found)
        return _settle(found, lo, hi)

    def _scan_text(self, text: bytes, first: int, last: int, view: _View | None, binary: bool, found: list[_Found]) -> None:
        """Findings that lie in text[first:last], of the raw data (``view`` None) or of a
        decoded view's text, into ``found``; the text around is their context."""
        raw: Callable[[int], int] = (lambda at: at) if view is None else view.raw
        # UTF-16 and UTF-32 are read from the raw data only, where their NULs are.
        tables = self._table(binary=binary, nul=view is None and b"\0" in text)
        for literal, start, end in self._literal_matches(text, tables, first, last):
            found.append((literal.code, raw(start), literal.length, literal.what, literal.encoding, False))
        if tables.anchor_search is not None:
            for index, start, _ in tables.anchor_search.find_matches_as_indexes(memoryview(text)[first:last]):
                for shape, back, encoding in tables.anchors[index]:
                    if encoding is _UTF8:
                        self._try(shape, text, first + start, back, raw, found)
                    else:
                        self._try_wide(shape, text, first + start, back, _WIDE_LE[encoding.unit], found)
                        self._try_wide(shape, text, first + start - encoding.mirror, back, _WIDE_BE[encoding.unit], found)
        if not binary:
            # A domain cut short at ``last`` is tried whole all the same (_try reads the whole
            # text), and one that an escape changes ends well before it (see _SPAN).
            for m in _EMAIL_AT.finditer(text, first, last):
                self._try(_EMAIL, text, m.start(), None, raw, found)

    def _literal_matches(self, text: bytes, tables: _Tables, first: int = 0, last: int | None = None, *, alone: bool = True) -> list[tuple[_Literal, int, int]]:
        """(literal, start, end) of every occurrence of every literal in text[first:last],
        overlapping ones too, names only where they stand ``alone`` (see _NAME_BEFORE).

        The leftmost-longest search is the fast one (it skips ahead on a prefilter; the
        overlapping search does not: 340 against 14,000 MB/s for ten literals in clean records),
        and every occurrence overlaps one of its matches: so only the stretches around its
        matches are searched again for all occurrences."""
        if tables.literal_search is None or tables.literal_overlaps is None:
            return []
        hits = tables.literal_search.find_matches_as_indexes(memoryview(text)[first:last])
        if not hits:
            return []
        reach = tables.longest - 1
        stretches: list[list[int]] = []
        for _, start, end in hits:
            a, b = max(0, first + start - reach), min(len(text), first + end + reach)
            if stretches and a <= stretches[-1][1]:
                stretches[-1][1] = b
            else:
                stretches.append([a, b])
        every: set[tuple[int, int]] = set()
        for a, b in stretches:
            for index, start, _ in tables.literal_overlaps.find_matches_as_indexes(memoryview(text)[a:b], overlapping=True):
                every.add((index, a + start))
        matches = []
        for index, start in sorted(every):
            for literal in tables.literals[index]:
                end = start + len(literal.whole)
                if text.startswith(literal.whole, start) and (not (alone and literal.name) or _name_bounded(text, start, end, literal.encoding)):
                    matches.append((literal, start, end))
        return matches

    def _try(self, shape: _Shape, text: bytes, anchor: int, back: int | None, raw: Callable[[int], int], found: list[_Found]) -> None:
        """The shape's match at an anchor in UTF-8 text, if any, into ``found``, marked allowed or not."""
        if back is None:
            start = _local_part_start(text, anchor)
            if start is None:
                return
        else:
            start = anchor - back
            if start < 0:
                return
        m = shape.pattern.match(text, start)
        if m is not None:
            allowed = self._allowed(text, m.start(), m.end(), _UTF8)
            found.append((shape.code, raw(m.start()), m.end() - m.start(), shape.what, _UTF8, allowed))

    def _try_wide(self, shape: _Shape, data: bytes, anchor: int, back: int | None, encoding: _Encoding, found: list[_Found]) -> None:
        """The same in UTF-16 or UTF-32 read at ``anchor``: the code units around it are folded
        to one byte each (ASCII as is, anything else as 0x80, which the shapes treat as any
        non-ASCII byte), so the same shape regexes run on them, at a fixed width back to raw."""
        unit = encoding.unit
        if anchor < 0:
            return
        first = anchor - unit * min(_FOLD_BEFORE, anchor // unit)
        units = encoding.code_units(data[first : anchor + unit * _FOLD_AFTER])
        folded = bytes(c if c < 0x80 else 0x80 for c in units)
        at = (anchor - first) // unit
        if back is None:
            start = _local_part_start(folded, at)
            if start is None:
                return
        else:
            start = at - back
            if start < 0:
                return
        m = shape.pattern.match(folded, start)
        if m is None:
            return
        raw_start, raw_end = first + unit * m.start(), first + unit * m.end()
        allowed = self._allowed(data, raw_start, raw_end, encoding)
        found.append((shape.code, raw_start, m.end() - m.start(), shape.what, encoding, allowed))

    def _allowed(self, text: bytes, start: int, end: int, encoding: _Encoding) -> bool:
        """Whether an allow string, in this encoding, covers text[start:end]."""
        for allow in self._allow.get(encoding, ()):
            # An occurrence at q covers the match when end - len(allow) <= q <= start.
            if len(allow) >= end - start and text.find(allow, max(0, end - len(allow)), start + len(allow)) >= 0:
                return True
        return False


def _automaton(patterns: list[bytes], kind: ahocorasick_rs.MatchKind) -> ahocorasick_rs.BytesAhoCorasick | None:
    if not patterns:
        return None
    # The DFA: with a thousand patterns it searches at 275 MB/s, the NFAs at 90-100.
    return ahocorasick_rs.BytesAhoCorasick(patterns, matchkind=kind, implementation=ahocorasick_rs.Implementation.DFA)


def _forms(text: str, *, ascii_json: bool = False) -> Iterable[tuple[bytes, _Encoding]]:
    """The spellings of a literal searched in the raw data, with their encodings.

    A JSON encoder's spelling is searched as a literal (doubled backslashes, escaped quotes):
    the JSON view decodes only \\u and \\/. Allow strings also keep the spellings with every
    non-ASCII character and every '/' escaped, because a shape is allowed only by an allow
    string in the view it was found in, and the raw view holds them so.
    """
    yield text.encode(), _UTF8
    spellings = [json.dumps(text, ensure_ascii=False)[1:-1]]
    if ascii_json:
        spellings.append(json.dumps(text)[1:-1])
        spellings += [s.replace("/", "\\/") for s in spellings]
    for spelling in spellings:
        if spelling != text:
            yield spelling.encode(), _UTF8
    for encoding in _WIDE:
        yield text.encode(encoding.name), encoding


def _name_bounded(text: bytes, start: int, end: int, encoding: _Encoding) -> bool:
    """Whether a name found at text[start:end] stands alone (see _NAME_BEFORE)."""
    unit = encoding.unit
    before, escape, after = _char(text, start - unit, encoding), _char(text, start - 2 * unit, encoding), _char(text, end, encoding)
    # A JSON escape's letter ('\\ngpu07') is no part of the name.
    if before in _ESCAPE_LETTERS and escape == 0x5C:
        before = None
    return before not in _NAME_BEFORE and after not in _NAME_AFTER


def _char(text: bytes, at: int, encoding: _Encoding) -> int | None:
    """The code unit at text[at:at + unit]; where the data cuts it, what its bytes at hand
    say if they are its low-order ones (a big-endian unit cut at the data's start, a
    little-endian one at its end: a 'x' before the big-endian reading of little-endian
    'xgpu07' is seen), else None."""
    unit = encoding.unit
    if at >= 0 and at + unit <= len(text):
        return encoding.code_units(text[at : at + unit])[0] if unit > 1 else text[at]
    if encoding.big and at < 0 < at + unit:
        return int.from_bytes(text[: at + unit], "big")
    if not encoding.big and unit > 1 and at < len(text) < at + unit:
        return int.from_bytes(text[at:], "little")
    return None


def _local_part_start(text: bytes, at: int) -> int | None:
    """Where the local part before the '@' at ``at`` starts, or None when it is empty or longer than an e-mail's."""
    start = at
    while start > 0 and at - start <= _MAX_LOCAL and text[start - 1] in _LOCAL_CHARS:
        start -= 1
    if start < at - _MAX_LOCAL or start == at:
        return None
    # '\tada@...' in JSON is a tab and 'ada@...'.
    if start > 0 and text[start - 1] == 0x5C and text[start] in _ESCAPE_LETTERS and start + 1 < at:
        start += 1
    return start


_LOCAL_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")


def _settle(found: list[_Found], lo: int, hi: int) -> list[Leak]:
    """One finding per code and raw offset, those starting in [lo, hi), in order.

    UTF-16 (UTF-32) text of characters below U+0100 reads as the same text in the other byte
    order one (three) bytes earlier, and nothing near it tells which is meant. Little-endian is
    what nearly every tool writes (Windows, PowerShell, .NET), so where both readings find the
    same thing the big-endian one is dropped: little-endian text gets its exact offset, and
    big-endian text that can be read both ways one a byte (three bytes) late. An allowed
    little-endian reading still drops its big-endian twin, whose allow string may not read
    the same way round (a character above U+00FF before it).
    """
    little = {(code, offset, what, encoding.unit) for code, offset, _, what, encoding, _ in found if encoding.mirror and not encoding.big}
    best: dict[tuple[str, int], tuple[int, str]] = {}
    for code, offset, length, what, encoding, allowed in found:
        if allowed or not lo <= offset < hi:
            continue
        if encoding.big and (code, offset + encoding.mirror, what, encoding.unit) in little:
            continue
        # Two findings of one code at one offset: the longest says most ('gpu07.lab.example.org'
        # rather than 'gpu07'), then the first description, so the choice is the same every time.
        key = (code, offset)
        if key not in best or (-length, what) < (-best[key][0], best[key][1]):
            best[key] = (length, what)
    return [Leak(code, offset, what) for (code, offset), (_, what) in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
