"""The matcher primitives rules configure.

A rule file names one primitive and gives it options; the user's ``with:`` values fill in the
rest. The primitives are the only code that decides what a rule matches:

``path_prefix``
    absolute path prefixes, matched only at a path boundary, longest first, in every spelling a
    record gives them (:func:`path_spellings`), each replaced by a kit path (record-path-to-kit-path).
``literal_names``
    whole names, leftmost and longest first, each replaced by a word (box-name-to-role), optionally
    only inside the values of named fields.
``digest``
    sha256 digests (64 hex digits, either case, optional ``sha256:`` prefix) that are in a given
    set, replaced by a placeholder (digest-withheld).
``regex``
    a user's regular expression and its replacement template, run by the ``regex`` library: the
    syntax of Python's ``re``, and a bound on time, which ``re`` has not (a pattern such as
    ``(a|aa)+c`` takes time exponential in the text's length, and would hang a build).

Matchers work on bytes, so a file that is not UTF-8 is rewritten without being decoded.
"""

from __future__ import annotations

import json
import re
import unicodedata
from operator import itemgetter
from typing import Any, Mapping
from urllib.parse import quote

import ahocorasick_rs
import regex

from kitbuild.digests import printed_digests
from kitbuild.errors import RuleError
from kitbuild.shapes import escaped_before

# The boundaries a literal rule's match must stand at. The byte before a match must not be in the
# BEFORE class (nothing before it is fine), and the END lookahead must hold after it.
# Before a path: anything that would make the match the tail of a longer path.
PATH_BEFORE = rb"[A-Za-z0-9_.~/-]"
# After a path prefix: a '/', the end, or a character that cannot continue a file name in a
# record (white space, quotes, separators), or that ends a path in a URL ('?path=/scratch/u7&n=1')
# or starts a percent escape ('%2Fscratch%2Fu7%2Fa', the path's percent-encoded spelling).
PATH_END = rb"(?=[/\s\"'`,;:()\[\]{}<>|\\?#&%]|\Z)"
# Before and after a name: what the leak gate counts as part of it too (shapes.name_bounded), so
# that a rule rewrites every place the gate would find the name it names. '_' is no part of a host
# name (RFC 1123): 'host_gpu-b17_rank0' names gpu-b17.
NAME_BEFORE = rb"[A-Za-z0-9.-]"
# A host name ends where no further label follows: 'gpu-b17' must not fire inside 'gpu-b170',
# nor in 'gpu-b17.other.net', but does fire before a full stop that ends a sentence.
NAME_END = rb"(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
_BOUNDARIES = {
    "path_prefix": (re.compile(PATH_BEFORE), re.compile(PATH_END)),
    "literal_names": (re.compile(NAME_BEFORE), re.compile(NAME_END)),
}
# The hex digits of a '\\uXXXX' escape and of a '%XX', in either case.
_HEX = frozenset(b"0123456789abcdefABCDEF")
_UPPER_HEX = re.compile(r"%[0-9A-F]{2}")


def path_spellings(path: str) -> list[str]:
    """How a record may spell ``path``, the path itself first: as JSON writes it with ASCII
    escapes ('/home/jos\\u00e9' for '/home/josé') or with each '/' escaped ('\\/home\\/ada', as
    PHP does), and percent-encoded, as a URL's query holds it, in either case of hex; a Windows
    path as JSON writes it and with '/' for each '\\'. The leak
    gate reads each (kitbuild.leakviews), so the path rule rewrites each, and build's warning of a
    map entry no file holds (KB905) looks for each."""
    forms = [path]
    if "\\" in path:  # a Windows path ('C:\\Users\\ada')
        return list(dict.fromkeys([path, json.dumps(path)[1:-1], path.replace("\\", "/")]))
    escaped = json.dumps(path)[1:-1]
    if not path.isascii() and "\\" not in escaped.replace("\\u", ""):
        forms.append(escaped)
    encoded = quote(path, safe="")
    forms += [path.replace("/", "\\/"), encoded, _UPPER_HEX.sub(lambda m: m.group(0).lower(), encoded)]
    return list(dict.fromkeys(forms))


# How a path's escaped-'/' and percent-encoded spellings start: the automaton that holds them
# reads only data that holds one of these (see Matcher._literal_hits).
_SPELT_STARTS = ("\\/", "%")
# A Windows map key ('C:\\Users\\ada'), as the config's schema takes one.
_DRIVE = re.compile(r"[A-Za-z]:\\")


def _escape_ends(data: bytes, start: int, before: frozenset[int]) -> bool:
    """Whether a JSON '\\uXXXX' escape or a URL's '%XX' ends right before ``start`` and stands for
    a character a match may follow, as the leak gate's views read it: one past ASCII (Python's
    json writes '“/scratch/u7' as '\\u201c/scratch/u7'), or one outside ``before`` ('%20gpu-b17'
    in a query, 'ran on gpu-b17' percent-encoded)."""
    if start >= 6 and data[start - 6 : start - 4] == b"\\u" and all(c in _HEX for c in data[start - 4 : start]):
        code = int(data[start - 4 : start], 16)
    elif start >= 3 and data[start - 3] == 0x25 and data[start - 2] in _HEX and data[start - 1] in _HEX:
        code = int(data[start - 2 : start], 16)
    else:
        return False
    return code >= 0x80 or code not in before


def _ends_file_name(data: bytes, at: int) -> bool:
    """Whether the character at ``at`` (UTF-8, past ASCII) is a space, a punctuation mark or a
    symbol, which no file name a record prints goes on with: a typographic quote after a path
    ('“/scratch/u7”'), a no-break space, an arrow. A letter goes on with it ('lme-é')."""
    char = data[at : at + 4].decode("utf-8", "replace")[0]
    return char != "\ufffd" and unicodedata.category(char)[0] in "ZPS"


class _Bounds:
    """A primitive's boundaries as byte sets, read from its regexes (a regex call for each
    occurrence cost a rewrite of records that name a path on every line a third of its time):
    ``before``, the bytes that may not come before a match; ``ends`` and ``not_ends``, the bytes
    after it that decide END alone either way. Past the data's end, or before another byte (a
    '.', which END reads with the byte after it), the regex ``end`` is asked."""

    def __init__(self, before: re.Pattern[bytes], end: re.Pattern[bytes]) -> None:
        self.before = frozenset(c for c in range(256) if before.match(bytes([c])))
        # What can follow: every byte class the patterns tell apart, and the end of the data.
        nexts = [b""] + [bytes([c]) for c in (*range(128), 0x80, 0xFF)]
        verdicts = {c: {end.match(bytes([c]) + n) is not None for n in nexts} for c in range(256)}
        self.ends = frozenset(c for c, v in verdicts.items() if v == {True})
        self.not_ends = frozenset(c for c, v in verdicts.items() if v == {False})
        self.end = end


_bounds: dict[str, _Bounds] = {}


def _bounds_of(primitive: str) -> _Bounds:
    if primitive not in _bounds:
        _bounds[primitive] = _Bounds(*_BOUNDARIES[primitive])
    return _bounds[primitive]

DIGEST_RE = re.compile(rb"(?<![0-9A-Fa-f])(?:sha256:)?([0-9A-Fa-f]{64})(?![0-9A-Fa-f])")

PRIMITIVES = ("path_prefix", "literal_names", "digest", "regex")
# How long a user's pattern may search one chunk of a file (a few lines, or 1 MiB of one line):
# a pattern that does not finish in this time is one that backtracks without end.
PATTERN_SECONDS = 10.0


class PatternTimeout(Exception):
    """A user's pattern ran past PATTERN_SECONDS on one chunk (kitbuild.rewrite says where)."""

Hit = tuple[int, int, bytes]  # (start, end, replacement)


class Matcher:
    """One configured primitive: what it matches, what it writes, and what it knows is private."""

    def __init__(
        self,
        primitive: str,
        *,
        pairs: Mapping[str, str] | None = None,
        fields: list[str] | None = None,
        placeholder: str | None = None,
        withheld: frozenset[str] = frozenset(),
        pattern: str | None = None,
        replace: str | None = None,
    ) -> None:
        if primitive not in PRIMITIVES:
            raise ValueError(f"unknown matcher primitive {primitive!r}")
        self.primitive = primitive
        self.pairs = dict(pairs or {})
        self.fields = tuple(fields) if fields else None
        self.placeholder = placeholder
        self.withheld = withheld
        self.pattern = pattern
        self.replace = replace
        self._regex: regex.Pattern[bytes] | None = None
        self._forget()
        if primitive == "regex":
            self._compiled()  # a pattern or template that cannot work is refused before any file is read

    def _compiled(self) -> regex.Pattern[bytes]:
        if self._regex is None:
            assert self.pattern is not None and self.replace is not None
            what = "pattern"
            try:
                compiled = regex.compile(self.pattern.encode("utf-8"))
                # The template is read only against a match: one of a pattern with the same groups.
                what, names = "replace", {index: name for name, index in compiled.groupindex.items()}
                probe = regex.compile(b"".join(b"(?P<%s>)" % names[i].encode() if i in names else b"()" for i in range(1, compiled.groups + 1)))
                probe.fullmatch(b"").expand(self.replace.encode("utf-8"))  # type: ignore[union-attr]
            except (regex.error, IndexError) as exc:
                raise RuleError(f"its {what} cannot be used: {exc}; see docs/rules.md") from None
            self._regex = compiled
        return self._regex

    def _forget(self) -> None:
        """Drop what is built on first use: compiled patterns and automatons are rebuilt in each
        worker process, not pickled."""
        self._regex = None
        self._automaton: ahocorasick_rs.BytesAhoCorasick | None = None
        self._spelt: ahocorasick_rs.BytesAhoCorasick | None = None  # every spelling (path_spellings)
        self._replacements: list[bytes] = []
        self._dotted: list[bool] = []
        self._drive: list[bool] = []

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_regex", "_automaton", "_spelt", "_replacements", "_dotted", "_drive")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._forget()

    def with_withheld(self, withheld: frozenset[str]) -> "Matcher":
        """A copy of a digest matcher that withholds ``withheld`` (lower-case hex)."""
        return Matcher(self.primitive, placeholder=self.placeholder, withheld=withheld)

    @property
    def active(self) -> bool:
        """False when the matcher cannot fire (no pairs, no digests to withhold)."""
        if self.primitive == "digest":
            return bool(self.withheld)
        if self.primitive == "regex":
            return True
        return bool(self.pairs)

    def find(self, data: bytes, lo: int = 0, hi: int | None = None) -> list[Hit]:
        """Every firing in ``data[lo:hi]``: (start, end, replacement), leftmost first, none
        overlapping. The region's edges are edges for the boundaries too."""
        if hi is None:
            hi = len(data)
        if self.primitive == "regex":
            template = self.replace.encode("utf-8")  # type: ignore[union-attr]
            try:
                return [(m.start(), m.end(), m.expand(template)) for m in self._compiled().finditer(data, lo, hi, timeout=PATTERN_SECONDS)]
            except TimeoutError:
                raise PatternTimeout(PATTERN_SECONDS) from None
        region = data if (lo == 0 and hi == len(data)) else data[lo:hi]
        if self.primitive == "digest":
            hits = self._withheld_hits(region)
        else:
            hits = self._literal_hits(region)
        return [(lo + s, lo + e, rep) for s, e, rep in hits] if lo else hits

    def _literal_hits(self, data: bytes) -> list[Hit]:
        """Leftmost, then longest at one position, of the literals whose boundaries hold: what
        one regex ``(?<!BEFORE)(?:longest|...|shortest)END`` finds.

        One Aho–Corasick automaton gives every occurrence of every literal (overlapping ones
        too: a literal failing its boundary may hide a shorter one at the same place, or one
        starting inside it), and the boundaries are tested per occurrence. Measured on records
        (docs/performance.md, "Rewriting: which matcher"): the one regex was 1.5 to 6 times
        slower at 3 and 30 names and over 40 at 1,000, and at one name ahead only where every
        line held it; a chain of bytes.replace tests no boundary and was far slower from 30
        names on. No number of names has another winner, so every literal rule searches so.
        """
        if not self.pairs:
            return []
        if self._automaton is None:
            # Each key in the spellings a record gives it; those that start '\\/' or '%' last: the
            # automaton of the others numbers them as the one of all spellings does.
            forms = path_spellings if self.primitive == "path_prefix" else (lambda key: [key])
            spellings = sorted(((form, key, word) for key, word in self.pairs.items() for form in forms(key)), key=lambda s: s[0].startswith(_SPELT_STARTS))
            plain = [form.encode("utf-8") for form, _, _ in spellings if not form.startswith(_SPELT_STARTS)]
            self._automaton = ahocorasick_rs.BytesAhoCorasick(plain)
            if len(spellings) > len(plain):
                self._spelt = ahocorasick_rs.BytesAhoCorasick([form.encode("utf-8") for form, _, _ in spellings])
            # A spelling's replacement is the word as it is: JSON and a URL read it so, and verify
            # counts the word as written (kitdocs.word_forms).
            self._replacements = [word.encode("utf-8") for _, _, word in spellings]
            self._dotted = [self.primitive == "literal_names" and "." in key for _, key, _ in spellings]
            # A Windows path starts at its drive letter after anything, as the leak gate reads it
            # (kitbuild.shapes): no word runs on into 'C:\\Users\\'.
            self._drive = [self.primitive == "path_prefix" and _DRIVE.match(key) is not None for _, key, _ in spellings]
        bounds, replacements, dotted, drive = _bounds_of(self.primitive), self._replacements, self._dotted, self._drive
        before, ends, not_ends, end, size = bounds.before, bounds.ends, bounds.not_ends, bounds.end, len(data)
        paths = self.primitive == "path_prefix"
        # A path's other spellings start '\\/' or '%2' (its first '/'): the automaton that holds them
        # is a third as fast, so it reads only data that may hold one. (A search for one byte is a
        # memchr, many times faster than one for two: records rarely hold either byte.)
        automaton = self._automaton
        if self._spelt is not None and (b"\\" in data and b"\\/" in data or b"%" in data and b"%2" in data):
            automaton = self._spelt
        found = automaton.find_matches_as_indexes(data, overlapping=True)
        # By start, the longest first at one start: two stable sorts with keys made in C, by end
        # (last first), then by start (a sort by a key made in Python took a fifth of a rewrite).
        found.sort(key=itemgetter(2), reverse=True)
        found.sort(key=itemgetter(1))
        hits: list[Hit] = []
        taken = 0  # the end of the last hit: a later one may not start before it
        for i, start, stop in found:
            # The boundaries (see _Bounds), tested inline: this runs once for every occurrence.
            # A letter that ends an escape starts a name or a path after it, as the leak gate reads
            # it ('\\ngpu-b17' in a JSON string); and a full host name may follow a '.' (a host in
            # its domain: 'x.gpu-b17.cluster.example.net').
            first = start
            if start and data[start - 1] in before and not (drive[i] or escaped_before(data, start) or data[start - 1] == 0x2E and dotted[i] or _escape_ends(data, start, before)):
                # A path in a file URL names that path: 'file:///scratch/u7/a' becomes the kit path.
                if not (paths and data[max(0, start - 7) : start].lower() == b"file://"):
                    continue
                first = start - 7
            if first < taken:
                continue
            after = data[stop] if stop < size else None
            if after in ends or (after not in not_ends and end.match(data, stop)) or (paths and after is not None and after >= 0x80 and _ends_file_name(data, stop)):
                hits.append((first, stop, replacements[i]))
                taken = stop
        return hits

    def _withheld_hits(self, data: bytes) -> list[Hit]:
        if not self.withheld:
            return []
        assert self.placeholder is not None
        placeholder = self.placeholder.encode("utf-8")
        return [(start, end, placeholder) for start, end in self.digest_spans(data)]

    def digest_spans(self, data: bytes) -> list[tuple[int, int]]:
        """(start, end) of each withheld digest printed in ``data``, ``start`` before a ``sha256:``
        prefix: what :func:`kitbuild.digests.printed_digests` finds, kept where withheld."""
        return [(start, end) for start, end, digest in printed_digests(data) if digest in self.withheld]

    def private_strings(self) -> dict[str, str]:
        """The strings this matcher removes, each with a description safe to print in a log."""
        if self.primitive == "path_prefix":
            # (A path's spellings past ASCII escapes are the gate's views to decode.)
            return {form: f"a private path that {v!r} stands for" for k, v in self.pairs.items() for form in path_spellings(k) if not form.startswith(_SPELT_STARTS)}
        if self.primitive == "literal_names":
            return {k: f"a name that {v!r} stands for" for k, v in self.pairs.items()}
        return {}

    def writes(self) -> list[str]:
        """The public words this matcher writes, for provenance.json and verify."""
        if self.primitive == "digest":
            return [self.placeholder or ""]
        if self.primitive == "regex":
            return [self.replace or ""]
        return sorted(set(self.pairs.values()))
