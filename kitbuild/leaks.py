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

Where: the raw bytes (ASCII, UTF-8), the text under JSON ``\\uXXXX`` and ``\\/`` escapes,
``\\xHH``, percent-encoding (up to five rounds of it), HTML character references and a backslash
before punctuation (Markdown), UTF-16 and UTF-32 in either byte order at any alignment, the escapes
inside UTF-16 and UTF-32 text, base64 and hex (UTF-16 in base64 too). A finding is
placed at the raw byte where its (encoded) text starts, and its ``what`` says what kind of thing it
is, never the text: a CI log of the report publishes nothing. Private strings and digests are found
in any case of their ASCII letters.

The generic shapes and their anchors live in :mod:`kitbuild.shapes`; the encodings and the
decoded views in :mod:`kitbuild.leakviews`, base64 in :mod:`kitbuild.leakbase64`, the one
hyperscan pass in :mod:`kitbuild.leakpass`, which escapes in binary data need a view in
:mod:`kitbuild.leaksieve`, what a scan found in :mod:`kitbuild.leakfound`. This module holds the
scanner that runs them. Why each library:
docs/performance.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, ClassVar, Mapping, Sequence

import ahocorasick_rs

from kitbuild.allowlist import AllowForms
from kitbuild.leakbase64 import COMPRESSED_STARTS, CONTAINED, DOCUMENT_STARTS, MAGICS, cores, decoded_hex_run, decoded_run, hex_forms, percent_forms, starts_run, wide_cores
from kitbuild.leakpass import Pass, automaton, compiled
from kitbuild.leaksieve import sieve
from kitbuild.leakfound import Found as _Found, Leak, settle as _settle
from kitbuild.leakviews import ESCAPES, REACH, slashes_near, wide_stretches, UTF8, WIDE, WIDE_BE, WIDE_LE, Encoding, char, forms, same, through, views
from kitbuild.shapes import ANCHORS, EMAIL, EMAIL_AT, ENCODED_ANCHORS, FOLD_AFTER, FOLD_BEFORE, LOCAL_CHARS, Shape, absolute_through_dots, after_length_byte, after_terminal_code, length_before, letter_before, match_start, name_bounded

__all__ = ["Leak", "LeakScanner"]


# -- literals ----------------------------------------------------------------------------------

# The longest private or allow string, in UTF-8 bytes: fully \u-escaped (6 bytes a byte) it
# still fits in REACH, so a window sees it whole.
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
    encoding: Encoding


@dataclass(frozen=True, slots=True)
class _Tables:
    """The patterns searched in one kind of data (text or binary, with or without NUL bytes)."""

    literals: list[list[_Literal]]  # per pattern
    search: Pass  # where the anchors, the escapes and (most often) the literals are
    literal_automaton: ahocorasick_rs.BytesAhoCorasick | None  # where the literals are, past _HYPERSCAN_LITERALS
    literal_overlaps: ahocorasick_rs.BytesAhoCorasick | None  # every occurrence, near a hit
    longest: int
    anchors: list[list[tuple[Shape, int | None, Encoding]]]
    # Per base64 core (kitbuild.leakbase64): the finding it is on its own (a withheld digest's
    # bytes), None where the run around it is decoded and searched, _DOCUMENT where that is so
    # only if the run starts there, _COMPRESSED and _STREAM (base64 and binary data read by
    # kitbuild.embedded), or _HEX (hex).
    base64: list[_Literal | str | None]
    base64_automaton: ahocorasick_rs.BytesAhoCorasick | None  # the cores, past _HYPERSCAN_LITERALS


_NESTED = 2  # layers of base64 inside base64 (see _scan_base64)
_DOCUMENT = "a JSON document's start"
_COMPRESSED = "compressed data's start"
_STREAM = "a compressed stream's start"
_HEX = "hex digits"


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
    MAX_MATCH: ClassVar[int] = 2 * REACH

    def __init__(self, private: Mapping[str, str] = {}, allow: Sequence[str] = (), digests: Mapping[str, str] = {}) -> None:
        literals: dict[bytes, list[_Literal]] = {}
        encoded: dict[bytes, _Literal | str | None] = {}  # base64 cores and hex forms: see _Tables.base64
        # Raised once the descriptions they print are known to hold no private string.
        errors: list[str] = []

        def add(pattern: bytes, literal: _Literal) -> None:
            if literal not in literals.setdefault(pattern, []):
                literals[pattern].append(literal)

        for text, what in filter(lambda item: item[0], private.items()):
            if len(text.encode()) > _MAX_LITERAL:
                errors.append(f"a private string is longer than {_MAX_LITERAL} bytes: {what}")
                continue
            name = "/" not in text and "\\" not in text
            # Looked for in any case (see _literal_matches): host names are case-blind, Windows
            # prints its computer's name in capitals, and macOS and Windows paths are case-blind.
            for form, encoding in forms(text):
                add(form.lower(), _Literal("KB901", what, form.lower(), len(text), name, encoding))
            # In base64 (of UTF-8 and UTF-16) and hex as written and in lower case: they keep no
            # case to ignore. Not a name under 5 bytes: 'ada' is 24 bits, which turn up by chance in
            # random base64 or hex every few MB (an embedded image, a file of digests) and would
            # stop a build for nothing.
            for spelling in dict.fromkeys((text.encode(), text.lower().encode())) if len(text.encode()) >= 5 else ():
                encoded.update(dict.fromkeys(wide_cores(spelling)))
                encoded.update(dict.fromkeys(hex_forms(spelling), _HEX))
            # And in capitals, in base64 of UTF-8 (a Windows log base64'd). Not of UTF-16 nor in
            # hex: with those too, the tables' memory grew by a fifth and build C's peak by 2 MiB.
            if len(text.encode()) >= 5 and text.upper() != text:
                encoded.update(dict.fromkeys(cores(text.upper().encode()[:24])))
            # Percent-encoded, then base64'd (a URL in a JWT or a cookie): the base64 of '%2Fopt'
            # shows nothing of '/opt'. (A host name has nothing to encode: no more patterns.) Of
            # these two kinds, only the first 24 bytes: a core makes the run around it decoded and
            # searched whole, and hyperscan's compile took 1 MiB more with the whole needles.
            for spelling in dict.fromkeys(percent_forms(text)) if len(text.encode()) >= 5 else ():
                encoded.update(dict.fromkeys(cores(spelling[:24])))
        for digest, what in digests.items():
            if not re.fullmatch(r"[0-9a-fA-F]{64}", digest):
                errors.append(f"a withheld digest is not 64 hex digits: {what}")
                continue
            for encoding in (UTF8, *WIDE):
                spelling = digest.lower().encode(encoding.name)
                add(spelling[: _DIGEST_PREFIX * encoding.unit], _Literal("KB903", what, spelling, 64, False, encoding))
            # Its 32 bytes in base64 (sha256-… as Subresource Integrity and npm print it), and its
            # hex digits so: 30 bytes of either are the digest.
            for core in cores(bytes.fromhex(digest)):
                encoded[core] = _Literal("KB903", f"{what}, base64-encoded", core, 64, False, UTF8)
            encoded.update(dict.fromkeys(cores(digest.lower().encode())))
        self._literals = literals
        self._encoded = encoded
        self._tables: dict[tuple[bool, bool], _Tables] = {}
        self._check_descriptions([*private.values(), *digests.values()])
        if errors:
            raise ValueError(errors[0])

        allow_forms: dict[Encoding, list[bytes]] = {}
        for text in filter(None, allow):
            if len(text.encode()) > _MAX_LITERAL:
                raise ValueError(f"an allow entry is longer than {_MAX_LITERAL} bytes")
            for form, encoding in forms(text, ascii_json=True):
                allow_forms.setdefault(encoding, []).append(form)
        self._allow = {encoding: AllowForms(tuple(dict.fromkeys(found))) for encoding, found in allow_forms.items()}

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_tables": {}}  # automata do not pickle: a worker builds its own

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
        if (binary, nul) not in self._tables:
            self._tables[binary, nul] = self._build_table(binary, nul)
        return self._tables[binary, nul]

    def _build_table(self, binary: bool, nul: bool) -> _Tables:
        # Patterns with a NUL byte (most UTF-16/32 forms) can only occur in data with one, so
        # data without NULs is searched without them: the same findings, a smaller automaton.
        literal_patterns = [p for p in self._literals if nul or b"\0" not in p]
        anchors: dict[bytes, list[tuple[Shape, int | None, Encoding]]] = {}
        for anchor, shapes in ANCHORS.items():
            for shape, back in shapes:
                if not (binary and shape.text_only):
                    anchors.setdefault(anchor, []).append((shape, back, UTF8))
        if nul:
            for anchor, shapes in ENCODED_ANCHORS.items():
                for encoding in WIDE_LE.values():
                    form = anchor.decode().encode(encoding.name)
                    core = form.rstrip(b"\0")
                    pattern = core if len(core) > 1 else form
                    for shape, back in shapes:  # text-only shapes too: a NUL a character is no chance
                        anchors.setdefault(pattern, []).append((shape, back, encoding))
        anchor_patterns = list(anchors)
        # The anchors of the shapes in base64 too (a 5-byte anchor still fills a group however it
        # lies), in the spellings a program writes (in text, UTF-16 too: in random binary data
        # its cores cost 13 % of the scan's speed), not upper-case or JSON-escaped.
        encoded: dict[bytes, _Literal | str | None] = {
            core: None
            for anchor, shapes in ANCHORS.items()
            if len(anchor) >= 5 and not anchor.isupper() and b"\\\\" not in anchor and not (binary and all(s.text_only for s, _ in shapes))
            for core in (cores(anchor) if binary else wide_cores(anchor))
        }
        encoded.update((form, _HEX) for anchor in ANCHORS if len(anchor) >= 5 and not anchor.isupper() and b"\\\\" not in anchor and not binary for form in hex_forms(anchor))
        encoded.update(self._encoded)
        encoded.update((start, _DOCUMENT) for start in DOCUMENT_STARTS if not binary)
        encoded.update((start, _COMPRESSED) for start in COMPRESSED_STARTS if not binary)
        encoded.update((magic, _STREAM) for magic in (MAGICS + CONTAINED if binary else ()) if magic not in encoded)
        hyperscanned = len(literal_patterns) <= _HYPERSCAN_LITERALS
        # Cores are plain bytes, found as they are: hyperscan compiles 2,000 of them in 0.04 s
        # and 20,000 in 1 s, and searches them at 4,500 MB/s where a DFA of them manages 440.
        encoded_hyperscanned = len(encoded) <= 4 * _HYPERSCAN_LITERALS
        return _Tables(
            literals=[self._literals[p] for p in literal_patterns],
            search=compiled(tuple(anchor_patterns), tuple(literal_patterns) if hyperscanned else (), nul, tuple(encoded) if encoded_hyperscanned else (), not binary),
            literal_automaton=None if hyperscanned else automaton(literal_patterns, ahocorasick_rs.MATCHKIND_LEFTMOST_LONGEST),
            literal_overlaps=automaton(literal_patterns, ahocorasick_rs.MATCHKIND_STANDARD),
            longest=max(map(len, literal_patterns), default=0),
            anchors=[anchors[p] for p in anchor_patterns],
            base64=list(encoded.values()),
            base64_automaton=None if encoded_hyperscanned else automaton(list(encoded), ahocorasick_rs.MATCHKIND_STANDARD),
        )

    # -- the scan ------------------------------------------------------------------------------

    def scan(self, data: bytes, *, binary: bool, lo: int = 0, hi: int | None = None, compressed: list[int] | None = None, records: bool = False) -> list[Leak]:
        """Every finding that starts in ``data[lo:hi]``, sorted by offset, then code.

        The data around ``lo:hi`` is context only (see ``MAX_MATCH``); ``binary``: the caller's
        verdict on the whole file (a NUL byte in its first 8 KiB), which leaves out the e-mail
        and IPv4 shapes. ``compressed`` gets the starts in ``data[lo:hi]`` of compressed data
        (kitbuild.embedded): of base64 runs that hold it in text, of its magic bytes in binary data.
        ``records``: the data is a file of records, whose cells may lie end to end (shapes.name_bounded)."""
        data = bytes(data)
        hi = len(data) if hi is None else min(hi, len(data))
        if lo >= hi:
            return []
        found: list[_Found] = []
        hits: list[int] | None = [] if binary else None
        escapes, wide, encoded = self._scan_text(data, 0, len(data), None, binary, found, hits, records=records)
        viewed = self._table(binary=binary, nul=False)  # the views' tables
        if hits is not None and not (self._table(binary=binary, nul=b"\0" in data).literal_automaton or viewed.literal_automaton or viewed.base64_automaton):
            escapes = sieve(data, escapes, viewed.search, hits, lambda index: viewed.base64[index] is _STREAM)
        self._scan_views(data, escapes, same, binary, found)
        starts: list[int] = []
        self._scan_base64(data, encoded, binary, found, starts=starts)
        if compressed is not None:
            compressed += [start for start in starts if lo <= start < hi]
        for reading, first, folded in wide_stretches(data, wide):
            # UTF-16 (UTF-32) text of escapes: its views, placed in the raw data and read as it is (its escapes found as text's are, though a file of it is
            # binary by its NULs). No base64: a stretch spans farther than a window's context, so base64 read here would hang on where a read block ended.
            tables = self._table(binary=False, nul=False)
            here: list[_Found] = []
            self._scan_views(folded, tables.search.find(folded, 0, len(folded))[2], lambda at: first + reading.unit * at, binary, here, base64=False)
            found += [(code, offset, length, what, reading, allowed) for code, offset, length, what, _, allowed in here]
        return _settle(found, lo, hi)

    def _scan_views(self, text: bytes, escapes: list[list[tuple[int, int]]], raw: Callable[[int], int], binary: bool, found: list[_Found], base64: bool = True) -> None:
        """Findings of the views of ``text`` around its ``escapes``, placed in the raw data by
        ``raw``; with ``base64``, in the base64 a view shows too (a JSON encoder writes each '/'
        of it as '\\/', a URL percent-encodes its '+', '/' and '=')."""
        for (pattern, decode), spans in zip(ESCAPES, escapes):
            if not spans:
                continue  # most kinds, in most data: not even a generator made for them
            for view in views(text, spans, pattern, decode):
                place = through(view, raw)
                for start, end in view.near_escapes():
                    encoded = self._scan_text(view.text, start, end, place, binary, found)[2]
                    if encoded and base64:
                        self._scan_base64(view.text, encoded, binary, found, place)
                if (slashes := slashes_near(view, pattern)) is not None:  # (its extra slashes, read too)
                    self._scan_views(view.text, slashes, place, binary, found, base64=False)

    def _scan_base64(self, data: bytes, hits: list[tuple[int, int]], binary: bool, found: list[_Found], raw: Callable[[int], int] | None = None, starts: list[int] | None = None, depth: int = 0) -> None:
        """Findings in base64 and hex (kitbuild.leakbase64): each core found is one on its own, or
        the run around it is decoded, aligned on it, and searched as a view; a finding there is
        placed (by ``raw``, from ``data``) at the letters that hold its first byte. ``starts``
        gets the start of each run of compressed data. A run may hold base64 in its turn (a JWT
        in a Kubernetes secret): read so down to _NESTED layers, each of at most REACH letters."""
        raw = raw or same
        tables = self._table(binary=binary, nul=False)
        runs: dict[tuple[int, int, int], bytes] = {}  # (first, length, letters a group: 4, or 2 in hex)
        # The letters of the run decoded last (base64, hex): a core inside it, at its alignment and
        # not near its end, lies in text already decoded. (Decoding around each core on its own
        # took 38 s for a MiB of base64 that names a path on every line.)
        decoded, decoded_hex = (0, 0), (0, 0)
        for index, start in sorted(hits, key=lambda hit: hit[1]):
            literal = tables.base64[index]
            if literal is _HEX:
                if not (decoded_hex[0] <= start < decoded_hex[1] - REACH // 2 and (start - decoded_hex[0]) % 2 == 0):
                    first, text = decoded_hex_run(data, start, REACH)
                    decoded_hex = (first, first + 2 * len(text))
                    runs.setdefault((first, len(text), 2), text)
                continue
            if literal is _DOCUMENT or literal is _COMPRESSED or literal is _STREAM:
                if literal is not _STREAM and not starts_run(data, start):
                    continue
                if literal is not _DOCUMENT:
                    if starts is not None:
                        starts.append(start)
                    continue
            elif isinstance(literal, _Literal):
                found.append((literal.code, raw(start), literal.length, literal.what, UTF8, False))
                continue
            if decoded[0] <= start < decoded[1] - REACH // 2 and (start - decoded[0]) % 4 == 0:
                continue
            first, text = decoded_run(data, start, REACH)
            decoded = (first, first + len(text) // 3 * 4)
            runs.setdefault((first, len(text), 4), text)
        for (first, _, group), text in runs.items():
            here: list[_Found] = []
            place = lambda at, first=first, raw=raw, group=group: raw(first + at // (group - 1) * group)  # noqa: E731
            escapes, _, inner = self._scan_text(text, 0, len(text), place, binary, here, read_wide=True)
            self._scan_views(text, escapes, place, binary, here, base64=False)
            if inner and depth < _NESTED:
                self._scan_base64(text, inner, binary, here, place, depth=depth + 1)
            found += [(code, offset, length, f"{what}, {'base64' if group == 4 else 'hex'}-encoded", encoding, allowed) for code, offset, length, what, encoding, allowed in here]

    def _scan_text(self, text: bytes, first: int, last: int, raw: Callable[[int], int] | None, binary: bool, found: list[_Found], hits: list[int] | None = None, read_wide: bool = False, records: bool = False) -> tuple[list[list[tuple[int, int]]], list[tuple[int, int]], list[tuple[int, int]]]:
        """Findings that lie in text[first:last], of the raw data (``raw`` None) or of a
        decoded view's text (``raw`` places its bytes in the raw data), into ``found``; the text
        around is their context. Returns where the text's escapes are (see Pass.find); ``hits``
        gets the start of each anchor, literal and base64 core found (but compressed streams').
        UTF-16 and UTF-32 are read in the raw data, where their NULs are, and with ``read_wide`` in a
        view's text (decoded base64: PowerShell's -EncodedCommand is base64 of UTF-16)."""
        tables = self._table(binary=binary, nul=(raw is None or read_wide) and b"\0" in text)
        if raw is None:
            raw = same
        anchor_hits, literal_hits, escapes, wide_escapes, encoded = tables.search.find(text, first, last)
        if tables.base64_automaton is not None:
            encoded = sorted(encoded + [(index, first + start) for index, start, _ in tables.base64_automaton.find_matches_as_indexes(text[first:last], overlapping=True)])
        if hits is not None:
            # (Not the UTF-16 and UTF-32 anchors, which views are not searched for: 18 '@\0' a MiB of random bytes.)
            hits += [s for i, s in anchor_hits if tables.anchors[i][0][2] is UTF8] + [s for s, _ in literal_hits] + [s for i, s in encoded if tables.base64[i] is not _STREAM]
        for literal, start, end in self._literal_matches(text, tables, first, last, hits=literal_hits, binary=binary, records=records):
            found.append((literal.code, raw(start), literal.length, literal.what, literal.encoding, False))
        wide: dict[tuple[Encoding, int], list[tuple[int, Shape, int | None]]] = {}
        for index, start in anchor_hits:
            for shape, back, encoding in tables.anchors[index]:
                if encoding is UTF8:
                    self._try(shape, text, start, back, raw, found, binary)
                else:
                    for reading, at in ((WIDE_LE[encoding.unit], start), (WIDE_BE[encoding.unit], start - encoding.mirror)):
                        # In binary data an '@' is tried only after a character an address may hold (one in 64 KiB of random bytes is '@\0').
                        if at >= 0 and (back is not None or not binary or char(text, at - reading.unit, reading) in LOCAL_CHARS):
                            wide.setdefault((reading, at % reading.unit), []).append((at, shape, back))
        for (reading, _), tries in wide.items():
            self._try_wide(text, sorted(tries, key=lambda t: t[0]), reading, found, raw)
        if not binary:
            # A domain cut short at ``last`` is tried whole all the same (_try reads the whole
            # text), and one that an escape changes ends well before it (see leakviews._SPAN).
            for m in EMAIL_AT.finditer(text, first, last):
                self._try(EMAIL, text, m.start(), None, raw, found)
        return escapes, wide_escapes, encoded

    def _literal_matches(
        self, text: bytes, tables: _Tables, first: int = 0, last: int | None = None, *, alone: bool = True, hits: list[tuple[int, int]] | None = None, binary: bool = False, records: bool = False
    ) -> list[tuple[_Literal, int, int]]:
        """(literal, start, end) of every occurrence of every literal in text[first:last], in
        any case, overlapping ones too, names only where they stand ``alone`` (see
        shapes.name_bounded); ``hits``: the (start, end) tables.search found there, if it has searched.

        Every literal is held in lower case and looked for in any case of its ASCII letters
        (hyperscan's caseless mode; near its hits, the text lowered): 'Gpu07', 'GPU07' and a
        digest printed in upper case are what they are in lower case.

        The leftmost-longest search is the fast one (it skips ahead on a prefilter; the
        overlapping search does not: 340 against 14,000 MB/s for ten literals in clean records),
        and every occurrence overlaps one of its matches: so only the stretches around its
        matches are searched again for all occurrences."""
        if tables.literal_overlaps is None:
            return []
        last = len(text) if last is None else last
        if tables.literal_automaton is not None:
            found = [(first + start, first + end) for _, start, end in tables.literal_automaton.find_matches_as_indexes(text[first:last].lower())]
        else:
            found = tables.search.find(text, first, last)[1] if hits is None else hits
        if not found:
            return []
        reach = tables.longest - 1
        stretches: list[list[int]] = []
        for start, end in found:
            a, b = max(0, start - reach), min(len(text), end + reach)
            if stretches and a <= stretches[-1][1]:
                stretches[-1][1] = b
            else:
                stretches.append([a, b])
        every: set[tuple[int, int]] = set()
        for a, b in stretches:
            lowered = text[a:b].lower()  # ASCII letters only, so every offset stays
            for index, start, _ in tables.literal_overlaps.find_matches_as_indexes(lowered, overlapping=True):
                every.add((a + start, index))
        matches = []
        for start, index in sorted(every):
            for literal in tables.literals[index]:
                end = start + len(literal.whole)
                if text[start:end].lower() == literal.whole and (not (alone and literal.name) or _alone(text, start, end, literal, binary, records)):
                    matches.append((literal, start, end))
        return matches

    def _try(self, shape: Shape, text: bytes, anchor: int, back: int | None, raw: Callable[[int], int], found: list[_Found], binary: bool = False) -> None:
        """The shape's match at an anchor in UTF-8 text, if any, into ``found``, marked allowed or not."""
        start = match_start(text, anchor, back)
        if start is None:
            return
        m = shape.pattern.match(text, start)
        span = m.span() if m is not None and not (shape.path and letter_before(text, m.start(), binary) and not length_before(text, m.start(), binary)) else None
        if m is None and shape.path and (after_terminal_code(text, start) or after_length_byte(text, start, binary) or shape.home and absolute_through_dots(text, start)):  # as if it began the text
            span = (start, start + m.end()) if (m := shape.pattern.match(text[start : start + 2 * _MAX_LITERAL])) else None
        if span is not None:
            found.append((shape.code, raw(span[0]), span[1] - span[0], shape.what, UTF8, self._allowed(text, *span, UTF8)))

    def _try_wide(self, data: bytes, tries: list[tuple[int, Shape, int | None]], encoding: Encoding, found: list[_Found], raw: Callable[[int], int] = same) -> None:
        """The same in UTF-16 or UTF-32, each (anchor, shape, back) of ``tries`` (in order, at
        one alignment) read at its anchor: the code units around it (FOLD_BEFORE before,
        FOLD_AFTER from it) are folded to one byte each (Encoding.fold: ASCII as is, anything
        else as 0x80, which the shapes treat as any non-ASCII byte), so the same shape regexes
        run on them, at a fixed width back to raw. Anchors whose stretches touch are folded
        together, once: folding each anchor's own stretch made a file of UTF-16 '@' signs take
        30 s a MiB."""
        unit, i = encoding.unit, 0
        while i < len(tries):
            anchor = tries[i][0]
            first = anchor - unit * min(FOLD_BEFORE, anchor // unit)
            end, j = anchor + unit * FOLD_AFTER, i + 1
            while j < len(tries) and tries[j][0] - unit * FOLD_BEFORE <= end:
                end, j = tries[j][0] + unit * FOLD_AFTER, j + 1
            folded = encoding.fold(data[first:end])
            for anchor, shape, back in tries[i:j]:
                at = (anchor - first) // unit
                start = match_start(folded, at, back)
                if start is None:
                    continue
                # The anchor's own stretch ends FOLD_AFTER code units on: so does the match.
                m = shape.pattern.match(folded, start, at + FOLD_AFTER)
                if m is None:
                    continue
                raw_start, raw_end = first + unit * m.start(), first + unit * m.end()
                before = data[max(first, raw_start - 2 * unit) : raw_start].decode(encoding.name, "replace").encode()
                if shape.path and letter_before(before, len(before)):
                    continue
                allowed = self._allowed(data, raw_start, raw_end, encoding)
                found.append((shape.code, raw(raw_start), m.end() - m.start(), shape.what, encoding, allowed))
            i = j

    def _allowed(self, text: bytes, start: int, end: int, encoding: Encoding) -> bool:
        """Whether an allow string, in this encoding, covers text[start:end]."""
        forms = self._allow.get(encoding)
        return forms is not None and forms.covers(text, start, end)


def _alone(text: bytes, start: int, end: int, literal: _Literal, binary: bool, records: bool) -> bool:
    """Whether a name found at text[start:end] stands alone (shapes.name_bounded). A big-endian
    reading of text that reads as little-endian too, a byte (three) later, is decided by that
    reading: the little-endian one's neighbours are the text's ('dgpu07' in a NumPy array of
    UTF-32 strings), the other's a unit made of two characters' bytes."""
    encoding = literal.encoding
    if encoding.big and encoding.mirror:
        little, at = WIDE_LE[encoding.unit], start + encoding.mirror
        if text[at : end + encoding.mirror].lower() == literal.whole[encoding.mirror :] + b"\0" * encoding.mirror:
            encoding, start, end = little, at, end + encoding.mirror
    return name_bounded(text, start, end, encoding, b"." in literal.whole, binary, records)


# Up to this many literals, the fast pass is hyperscan's (4,400 MB/s over random bytes against
# 183 for the DFA); past them its compile time (2.4 s for 20,000) is not (docs/performance.md).
_HYPERSCAN_LITERALS = 5000
