"""What the leak gate reads data as: its encodings, and the views of it a reader's tool decodes.

Raw bytes are read as UTF-8 and as UTF-16 and UTF-32 in either byte order (:class:`Encoding`);
a :class:`View` is the text of a stretch of the data with its JSON ``\\uXXXX`` and ``\\/``
escapes, its percent-encoding or its HTML character references decoded, or the line breaks of
base64 wrapped over lines left out, and maps each of its bytes back to the raw offset a finding
is placed at; :func:`wide_stretches` gives the UTF-16 and UTF-32 text around escapes, folded, for
views of their own. :func:`forms` spells a literal the ways it is searched in the raw data.
"""

from __future__ import annotations

import html.entities
import json
import re
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Callable, Iterable

__all__ = ["ESCAPE_FINDS", "ESCAPES", "slashes_near", "LONGEST_ESCAPE", "REACH", "WIDE_ESCAPE_FINDS", "end_escape", "wide_stretches", "UTF8", "WIDE", "WIDE_BE", "WIDE_LE", "Encoding", "View", "char", "forms", "same", "stretches", "through", "views"]


# -- encodings ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Encoding:
    name: str
    unit: int  # bytes per code unit
    big: bool  # byte order
    mirror: int  # how far a big-endian reading of little-endian text is shifted: see leaks._settle

    def code_units(self, data: bytes) -> array[int]:
        units = array("H" if self.unit == 2 else _UINT32, data[: len(data) - len(data) % self.unit])
        if self.big != (sys.byteorder == "big"):
            units.byteswap()
        return units

    def fold(self, data: bytes) -> bytes:
        """Each whole code unit of ``data`` as one byte: an ASCII character as it is, a
        byte-order mark (U+FEFF) as a space, anything else as 0x80. Done a byte lane at a time
        with translate and one integer OR, not a code unit at a time: a text dense with anchors
        is folded once, in C."""
        unit = self.unit
        n = len(data) // unit
        low = (unit - 1) if self.big else 0
        folded = data[low : n * unit : unit].translate(_ASCII_OR_80)
        mask = 0
        for lane in range(unit):
            if lane != low:
                mask |= int.from_bytes(data[lane : n * unit : unit].translate(_ZERO_OR_80), "little")
        if mask:  # a unit with a high byte set is not ASCII, whatever its low byte
            folded = (int.from_bytes(folded, "little") | mask).to_bytes(n, "little").translate(_ASCII_OR_80)
        mark = "\ufeff".encode(self.name)
        at = data.find(mark, 0, n * unit)
        if at >= 0:
            spaced = bytearray(folded)
            while at >= 0:
                if at % unit == 0:
                    spaced[at // unit] = 0x20
                at = data.find(mark, at + 1, n * unit)
            folded = bytes(spaced)
        return folded


_ASCII_OR_80 = bytes(range(128)) + b"\x80" * 128
_ZERO_OR_80 = b"\0" + b"\x80" * 255


_UINT32 = "I" if array("I").itemsize == 4 else "L"
UTF8 = Encoding("utf-8", 1, False, 0)
WIDE = (
    Encoding("utf-16-le", 2, False, 1),
    Encoding("utf-16-be", 2, True, 1),
    Encoding("utf-32-le", 4, False, 3),
    Encoding("utf-32-be", 4, True, 3),
)
# A UTF-16 or UTF-32 anchor is searched by its little-endian form with the trailing NULs cut:
# those bytes occur in little-endian text where the text is, and in big-endian text one (three)
# bytes later, so one pattern finds both and both readings are tried at each hit.
WIDE_LE = {2: WIDE[0], 4: WIDE[2]}
WIDE_BE = {2: WIDE[1], 4: WIDE[3]}


def forms(text: str, *, ascii_json: bool = False) -> Iterable[tuple[bytes, Encoding]]:
    """The spellings of a literal searched in the raw data, with their encodings.

    A JSON encoder's spelling is searched as a literal (doubled backslashes, escaped quotes):
    the JSON view decodes only \\u and \\/. Allow strings also keep the spellings with every
    non-ASCII character and every '/' escaped, because a shape is allowed only by an allow
    string in the view it was found in, and the raw view holds them so.
    """
    yield text.encode(), UTF8
    spellings = [json.dumps(text, ensure_ascii=False)[1:-1]]
    if ascii_json:
        spellings.append(json.dumps(text)[1:-1])
        spellings += [s.replace("/", "\\/") for s in spellings]
    for spelling in spellings:
        if spelling != text:
            yield spelling.encode(), UTF8
    for encoding in WIDE:
        yield text.encode(encoding.name), encoding


def char(text: bytes, at: int, encoding: Encoding) -> int | None:
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


# -- decoded views -----------------------------------------------------------------------------

# Half of LeakScanner.MAX_MATCH: the farthest a finding's decision reaches from its start, either
# way (an e-mail address of 640 characters, each \u-escaped; an allow string of
# leaks._MAX_LITERAL bytes so). Escaped text can be longer than that: a private string of more
# than about 170 characters with every one \u-escaped inside UTF-32 text, or of more than 400
# with each an HTML reference padded with zeros. Such text is found, except where it lies across
# the edge of two of the windows a file is read in (one MiB each).
REACH = 4096
# The longest finding in a UTF-8 view, in bytes, and more: an e-mail address (640), a
# private string's JSON spelling (2 x leaks._MAX_LITERAL, each backslash doubled) and a
# character either side.
_SPAN = 1100


class View:
    """The text of raw[first:last] with its escapes decoded, and where each of its bytes came from."""

    __slots__ = ("text", "_at", "_raw", "_length", "_raw_length", "_first")

    def __init__(self, data: bytes, first: int, last: int, escapes: re.Pattern[bytes], decode: Callable[[re.Match[bytes]], bytes], spans: Iterable[tuple[int, int]] | None = None) -> None:
        """``spans``: where the escapes are (see leaks._Pass); without them the whole
        stretch is searched."""
        pieces: list[bytes] = []
        self._first = first
        self._at: list[int] = []  # where a decoded escape starts in the view
        self._raw: list[int] = []  # and in the raw data
        self._length: list[int] = []
        self._raw_length: list[int] = []
        # (Bound once: text with an escape every few bytes, as json.dumps writes Chinese, makes
        # this loop the scan's hot spot; an escape's decoding is looked up once a view.)
        piece, at_, raw_, length_, raw_length_ = pieces.append, self._at.append, self._raw.append, self._length.append, self._raw_length.append
        decoded_as: dict[bytes, bytes] = {}
        done, at = first, 0
        for m in escapes.finditer(data, first, last) if spans is None else _at_spans(data, spans, escapes, last):
            start, end = m.span()
            key = m.group()
            decoded = decoded_as.get(key)
            if decoded is None:
                decoded = decoded_as[key] = decode(m)
            piece(data[done:start])
            at += start - done
            at_(at)
            raw_(start)
            length_(len(decoded))
            raw_length_(end - start)
            piece(decoded)
            at += len(decoded)
            done = end
        piece(data[done:last])
        self.text = b"".join(pieces)

    def near_escapes(self) -> list[tuple[int, int]]:
        """The stretches of the view where a finding can differ from the raw text's: those
        within _SPAN of a decoded escape. Only these are searched; the rest of the view is
        there as context, for the lookbehinds, boundaries and allow strings."""
        found: list[tuple[int, int]] = []
        size, first, last = len(self.text), 0, -1
        for at, length in zip(self._at, self._length):
            if last < 0 or at - _SPAN > last:  # (neither max nor min: a call each, for every escape)
                if last >= 0:
                    found.append((first, last))
                first = at - _SPAN if at > _SPAN else 0
            last = at + length + _SPAN
            if last > size:
                last = size
        if last >= 0:
            found.append((first, last))
        return found

    def raw(self, at: int) -> int:
        """The raw offset of view byte ``at``: a decoded character maps to its escape's start."""
        i = bisect_right(self._at, at) - 1
        if i < 0:
            return self._first + at
        if at < self._at[i] + self._length[i]:
            return self._raw[i]
        return self._raw[i] + self._raw_length[i] + at - self._at[i] - self._length[i]


def views(data: bytes, spans: Iterable[tuple[int, int]], escapes: re.Pattern[bytes], decode: Callable[[re.Match[bytes]], bytes]) -> Iterable[View]:
    """Views of the stretches of ``data`` around its escapes, given as ``spans`` (in order, a
    span at least the escape; see leaks._Pass).

    Away from escapes a view is the raw text and finds what the raw text does, so only the
    text near escapes is searched (View.near_escapes): each finding there starts within
    _SPAN raw bytes of an escape (the view bytes between are raw bytes, or escapes themselves),
    and the view reaches 2 * REACH raw bytes past the escapes, more context than any finding
    needs. Random bytes hold a '%4F' or '\\/' every few tens of kilobytes; decoding whole
    windows for them halved the speed of a binary scan (86 against 182 MB/s, 200 digests).
    """
    for first, last, inside in stretches(data, spans):
        yield View(data, first, last, escapes, decode, inside)


def stretches(data: bytes, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """(first, last, its spans) of the stretch of ``data`` each view of :func:`views` reads."""
    found: list[list[Any]] = []
    size, reach = len(data), 2 * REACH
    current: list[Any] | None = None
    for span in spans:
        start, end = span
        last = end + reach
        if last > size:
            last = size
        if current is not None and start - reach <= current[1]:
            if last > current[1]:
                current[1] = last
            current[2].append(span)
        else:
            current = [start - reach if start > reach else 0, last, [span]]
            found.append(current)
    return [(first, last, inside) for first, last, inside in found]


def same(at: int) -> int:
    """The raw data's own places: its text is the raw data."""
    return at


def through(view: View, raw: Callable[[int], int]) -> Callable[[int], int]:
    """Where a byte of ``view`` lies in the raw data, when ``raw`` places the view's own text there."""
    if raw is same:
        return view.raw
    return lambda at: raw(view.raw(at))


def _at_spans(data: bytes, spans: Iterable[tuple[int, int]], escapes: re.Pattern[bytes], last: int) -> Iterable[re.Match[bytes]]:
    """The escapes ``escapes.finditer`` finds, searched for only where hyperscan saw one: each
    match of the regex starts inside a span. A span's search takes only a match that starts in
    it (a later one is its own span's) and reaches far enough past it for the longest escape,
    a surrogate pair. (Searching a whole stretch of 16 KiB with ``re`` for the one escape in it
    took half the time of a scan of random bytes.)"""
    done, search = 0, escapes.search
    for start, end in spans:
        m = search(data, start if start > done else done, end + LONGEST_ESCAPE if end + LONGEST_ESCAPE < last else last)
        if m is not None and m.start() < end:
            done = m.end()
            yield m


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


# A character percent-encoded again is '%25' and its code ('%252F' is '/' encoded twice, as a URL
# in a query string prints it): up to five rounds are decoded as one, what as many rounds of a
# reader's decoder give. Its longest, '%2525252541', is within LONGEST_ESCAPE.
_PERCENT = re.compile(rb"%(?:25){0,4}([0-9A-Fa-f]{2})")


def _byte(m: re.Match[bytes]) -> bytes:
    return bytes((int(m.group(1), 16),))


# '\xHH', as C, Python, JavaScript and a YAML double-quoted string spell a byte: '/home' written
# '\x2fhome' is '/home' to each of them. And the other ways source code spells a character:
# '\u{2f}' (JavaScript, Rust, Swift), '\U0000002f' (Python, C, YAML) and octal '\057' (C, a
# shell's printf, git's quoted file names).
_HEX_ESCAPE = re.compile(rb"\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|U([0-9a-fA-F]{8})|([0-3][0-7]{2}))")


def _code_point(m: re.Match[bytes]) -> bytes:
    hexa, braced, long, octal = m.groups()
    if hexa or octal:
        return bytes((int(hexa, 16) if hexa else int(octal, 8),))
    code = int(braced or long, 16)
    return chr(code).encode("utf-8", "replace") if code < 0x110000 else m.group()


# HTML and XML character references: a page or report that escapes '/' as '&#x2F;' (as some
# escaping rules ask) or a name as '&#103;pu07' shows the text as it is to every browser.
# Numeric ones, and the 45 named ones of HTML5 that stand for an ASCII character ('&sol;',
# '&period;', '&commat;'...), ending in ';'. (Any name at all, as a regex class, slowed the pass
# over random bytes from 0.35 to 0.89 ms a MB; these, to 0.41.)
_ASCII_NAMES = sorted(name[:-1] for name, text in html.entities.html5.items() if name.endswith(";") and len(text) == 1 and ord(text) < 128)
_NAMED = b"|".join(name.encode() for name in _ASCII_NAMES)
# (A numeric one without its ';' too: a browser reads '&#47home' as '/home'.)
_HTML_REFERENCE = re.compile(rb"&(?:#[0-9]{1,7};?|#[xX][0-9a-fA-F]{1,6};?|(?:" + _NAMED + rb");)")


def _html_decode(m: re.Match[bytes]) -> bytes:
    return html.unescape(m.group().decode("ascii")).encode("utf-8", "replace")


# Base64 wrapped over lines (GNU base64 and MIME at 76 letters, PEM and openssl at 64, a YAML
# block's indented lines, a JSON string's '\n'): a line break between a line that ends in 40
# letters of base64 and one that starts with another is no part of it. The view leaves such
# breaks out, so the base64 in it (kitbuild.leakbase64) is read across them. ('=' ends base64:
# a line that ends in it is not wrapped.)
_B64_LETTER = rb"[A-Za-z0-9+/_-]"
_LINE_END = rb"(?:\n|\r\n|\\n|\\r\\n)"
_WRAP = re.compile(rb"(?<=" + _B64_LETTER + rb"{40})" + _LINE_END + rb"[ \t]{0,8}(?=" + _B64_LETTER + rb")")


def _unwrap(m: re.Match[bytes]) -> bytes:
    return b""


# A path with an extra '/' or a '/./' inside it ('$ROOT/' joined to '/lme' prints
# '/opt/bench//lme') is the same path to the system: a view leaves the extra out, so a private
# path the config names is found whatever slashes join its parts. Only after a path's character:
# not a URL's '//' (after ':'), nor a '// comment' (after a space).
_SLASHES = re.compile(rb"(?<=[A-Za-z0-9_.~-])/+(?=/)|/\.(?=/)")


def slashes_near(view: View, kind: re.Pattern[bytes]) -> list[list[tuple[int, int]]] | None:
    """Where a view of another ``kind`` holds a path's extra slashes near what it decoded, as spans
    per kind of ESCAPES (those of the slashes' own kind): '\\/\\/' decoded is '//', and a path
    may hold both ('//home/jos\\u00e9'). None where it holds none."""
    if kind is _SLASHES or (b"//" not in view.text and b"/./" not in view.text):
        return None
    near = view.near_escapes()
    spans = [m.span() for m in _SLASHES.finditer(view.text) if any(a <= m.start() < b for a, b in near)]
    return [spans if pattern is _SLASHES else [] for pattern, _ in ESCAPES] if spans else None


# A PDF page draws a string a few characters at a time, each piece moved by a kerning number:
# matplotlib writes a title '[ (s) 0.16 (/) -0.33 (r) ] TJ', with a line end here and there.
# Between two pieces of one array a view leaves the ') number (' out, so a path drawn so reads
# whole in what a PDF stream holds (a font's glyph numbers, '<0056>', are not read).
_PDF_KERNING = re.compile(rb"\)[ \r\n]{0,2}-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[ \r\n]{0,2}\(")

# A backslash before ASCII punctuation: Markdown shows 'gpu\-b17', 'ada\@example.org' and
# '192\.168\.1\.7' without it, and a regex (a log of patterns, a config) matches the text so
# spelled. '\/' too, which the JSON view also reads: a path spelled '\/tmp\/run\_1' is decoded
# whole only by a view that reads both. Not '\"' and '\\', which are in every other JSON string
# and mean there what the raw text says (a private string is searched in its JSON spelling).
_PUNCTUATION_ESCAPE = re.compile(rb"\\([!#$%&'()*+,\-./:;<=>?@\[\]^_`{|}~])")


def _punctuation(m: re.Match[bytes]) -> bytes:
    return m.group(1)


# The escapes a view decodes, each with its decoding.
ESCAPES = ((_JSON_ESCAPE, _json_decode), (_PERCENT, _byte), (_HTML_REFERENCE, _html_decode), (_HEX_ESCAPE, _code_point), (_WRAP, _unwrap), (_SLASHES, _unwrap), (_PDF_KERNING, _unwrap), (_PUNCTUATION_ESCAPE, _punctuation))
# Each kind of escape as hyperscan finds it (any \\u escape, \\/, a %XX, a character
# reference's start or a named one, a \\x escape, a line end after 40 letters of base64, an
# extra slash in a path, a PDF piece's kerning, a backslash before punctuation; the last five
# only in text, see leakpass.Pass), with its longest
# length: hyperscan gives where a match ends, and a span from that far back holds the escape (the
# rest of a numeric reference, and a wrapped line's indentation, are within LONGEST_ESCAPE after it).
# The search runs in the leak scanner's one pass over the data (kitbuild.leakpass).
ESCAPE_FINDS = (
    (rb"\\u[0-9a-fA-F]{4}|\\/", 6),
    (rb"%[0-9A-Fa-f]{2}", 3),
    (rb"&(?:#[0-9xX]|(?:" + _NAMED + rb");)", 2 + max(map(len, _ASCII_NAMES))),
    (rb"\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]|U[0-9a-fA-F]{8}|[0-3][0-7]{2})", 10),
    # (where the line ends: hyperscan's search for what may follow, indentation and a letter,
    # ran at a fifth of the speed; the view's regex checks it, within LONGEST_ESCAPE after the end)
    (_B64_LETTER + rb"{40}" + _LINE_END, 40 + 4),
    (rb"[A-Za-z0-9_.~-]//|/\./", 3),
    (rb"\)[ \r\n]{0,2}-?[0-9.]{1,14}[ \r\n]{0,2}\(", 21),
    (_PUNCTUATION_ESCAPE.pattern, 2),
)
LONGEST_ESCAPE = 12  # the longest escape: a surrogate pair


def end_escape(data: bytes, first: int, last: int, spans: list[list[tuple[int, int]]]) -> None:
    """Add to ``spans`` (found by hyperscan in data[first:last]) the '\\/' that ends it, if
    hyperscan missed it: hyperscan 0.9.1 misses a '\\/' that ends 17 to 34 bytes of data (a
    small file, a window's last piece). A property test found it."""
    if data.endswith(b"\\/", first, last) and not (spans[0] and spans[0][-1][1] == last):
        spans[0].append((max(first, last - ESCAPE_FINDS[0][1]), last))


# Where UTF-16 or UTF-32 text holds an escape: a backslash then 'u', 'x' or '/', a '%' then two hex
# digits, or '&#' (a numeric character reference), each of its units little-endian with the last
# one's high NULs cut, so that big-endian text matches too, one (three) bytes later (as the
# anchors are found: see leaks._build_table). Named references in such text are decoded where
# another escape is near.
WIDE_ESCAPE_FINDS = tuple(
    (unit, rb"\\" + zeros + rb"[u/x]|%" + zeros + rb"[0-9A-Fa-f]" + zeros + rb"[0-9A-Fa-f]|&" + zeros + rb"#")
    for unit, zeros in ((2, rb"\x00"), (4, rb"\x00\x00\x00"))
)


def wide_stretches(data: bytes, ends: list[tuple[int, int]]) -> Iterable[tuple[Encoding, int, bytes]]:
    """The UTF-16 or UTF-32 text around escapes found in ``data`` ((unit, end) of each, where
    WIDE_ESCAPE_FINDS matched), folded (Encoding.fold): (reading, its first raw byte, the
    folded text), each escape read both ways round. A view of the folded text decodes what
    UTF-16 of JSON or of percent-encoding hides (a Windows tool's log of a URL, a .NET
    serializer's '\\/'); REACH // 2 bytes either side of each escape are read, so that what is
    found depends on nothing farther than a streamed window's context keeps (LeakScanner.MAX_MATCH:
    REACH bytes either side of a finding) in UTF-32 as in UTF-16."""
    starts: dict[tuple[Encoding, int], list[int]] = {}
    for unit, end in ends:
        # The match's last character is the unit at end - 1 read little-endian, at end - unit big-endian.
        for reading, at in ((WIDE_LE[unit], end - 1), (WIDE_BE[unit], end - unit)):
            if at >= 0:
                starts.setdefault((reading, at % unit), []).append(at)
    for (reading, _), ats in starts.items():
        unit = reading.unit
        reach = REACH // 2 // unit * unit
        ats.sort()
        i = 0
        while i < len(ats):
            first = ats[i] - unit * min(reach // unit, ats[i] // unit)
            last, i = ats[i] + reach, i + 1
            while i < len(ats) and ats[i] - reach <= last:
                last, i = ats[i] + reach, i + 1
            yield reading, first, reading.fold(data[first:last])
