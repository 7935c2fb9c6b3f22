"""The matcher primitives rules configure.

A rule file names one primitive and gives it options; the user's ``with:`` values fill in the
rest. The primitives are the only code that decides what a rule matches:

``path_prefix``
    absolute path prefixes, matched only at a path boundary, longest first, each replaced by a kit
    path (record-path-to-kit-path).
``literal_names``
    whole names, leftmost and longest first, each replaced by a word (box-name-to-role), optionally
    only inside the values of named fields.
``digest``
    sha256 digests (64 hex digits, either case, optional ``sha256:`` prefix) that are in a given
    set, replaced by a placeholder (digest-withheld).
``regex``
    a user's regular expression and its replacement template.

Matchers work on bytes, so a file that is not UTF-8 is rewritten without being decoded.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, NamedTuple

from kitbuild.literals import LiteralFinder
from kitbuild.speedups import (
    BOUNDARY_NAME,
    BOUNDARY_PATH,
    NAME_BEFORE,
    NAME_END,
    PATH_BEFORE,
    PATH_END,
    bounded_pattern,
    withheld_spans,
)

# The boundaries themselves are in kitbuild.speedups, which the compiled search shares.
_PATH_START = b"(?<!" + PATH_BEFORE + b")"
_NAME_START = b"(?<!" + NAME_BEFORE + b")"
_ALL_BYTES = frozenset(range(256))


def _bytes_matching(pattern: bytes, before: bytes = b"") -> frozenset[int]:
    """The bytes ``c`` at which ``pattern`` matches ``before + c``: a boundary's class as a set."""
    return frozenset(c for c in range(256) if re.match(pattern, before + bytes([c])))


_PATH_START_FORBIDDEN = _bytes_matching(PATH_BEFORE)
_PATH_END_ALLOWED = _bytes_matching(PATH_END)
_NAME_START_FORBIDDEN = _bytes_matching(NAME_BEFORE)
_NAME_CHARS = _ALL_BYTES - _bytes_matching(NAME_END)  # bytes that continue a name
_ALNUM = _ALL_BYTES - _bytes_matching(NAME_END, b".")  # bytes that start a further label after a '.'


def path_boundary(data: bytes, start: int, end: int, lo: int, hi: int) -> bool:
    """The same test as ``_PATH_START`` and ``_PATH_END``, for one literal match."""
    if start > lo and data[start - 1] in _PATH_START_FORBIDDEN:
        return False
    return end >= hi or data[end] in _PATH_END_ALLOWED


def name_boundary(data: bytes, start: int, end: int, lo: int, hi: int) -> bool:
    """The same test as ``_NAME_START`` and ``_NAME_END``, for one literal match."""
    if start > lo and data[start - 1] in _NAME_START_FORBIDDEN:
        return False
    if end >= hi:
        return True
    after = data[end]
    if after in _NAME_CHARS:
        return False
    return not (after == 0x2E and end + 1 < hi and data[end + 1] in _ALNUM)


DIGEST_RE = re.compile(rb"(?<![0-9A-Fa-f])(?:sha256:)?([0-9A-Fa-f]{64})(?![0-9A-Fa-f])")

PRIMITIVES = ("path_prefix", "literal_names", "digest", "regex")

# Up to this many literals, a rule runs as one substitution per literal, longest first: a C
# search (memmem) jumps between a literal's occurrences and tests each one's boundary, without a
# Python call per match (several times faster than the automaton on dense records).
# Past it, one Aho–Corasick pass costs the same however many names a rule has.
FEW_LITERALS = 16


class Substitution(NamedTuple):
    """One literal of a rule with few, replaced wherever it stands at the rule's boundary."""

    literal: bytes
    replacement: bytes
    boundary: int  # kitbuild.speedups.BOUNDARY_PATH or BOUNDARY_NAME

    def pattern(self) -> re.Pattern[bytes]:
        """The regex that matches where this substitution fires."""
        return bounded_pattern(self.literal, self.boundary)


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
        self._compiled: re.Pattern[bytes] | None = None
        self._table: dict[bytes, bytes] = {}
        self._finder: LiteralFinder | None = None
        self._replacements: list[bytes] = []
        self._substitutions: list[Substitution] | None = None
        self._withheld_bytes: frozenset[bytes] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Compiled patterns and automatons are rebuilt in each worker process, not pickled.
        state = dict(self.__dict__)
        state["_compiled"] = None
        state["_table"] = {}
        state["_finder"] = None
        state["_replacements"] = []
        state["_substitutions"] = None
        state["_withheld_bytes"] = None
        return state

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

    def compiled(self) -> re.Pattern[bytes]:
        if self._compiled is None:
            self._compiled = self._compile()
        return self._compiled

    def _compile(self) -> re.Pattern[bytes]:
        if self.primitive == "digest":
            return DIGEST_RE
        if self.primitive == "regex":
            assert self.pattern is not None
            return re.compile(self.pattern.encode("utf-8"))
        # Longest first: Python's alternation takes the first alternative that matches at the
        # leftmost position, so this makes the longest prefix or name win.
        keys = sorted(self.table(), key=lambda k: (-len(k), k))
        alternation = b"|".join(re.escape(k) for k in keys) or b"(?!)"
        if self.primitive == "path_prefix":
            return re.compile(_PATH_START + b"(?:" + alternation + b")" + PATH_END)
        return re.compile(_NAME_START + b"(?:" + alternation + b")" + NAME_END)

    def table(self) -> dict[bytes, bytes]:
        """Each literal -> its replacement, as bytes."""
        if not self._table:
            self._table = {k.encode("utf-8"): v.encode("utf-8") for k, v in self.pairs.items()}
        return self._table

    def literal_substitutions(self) -> list[Substitution]:
        """One substitution per literal, longest first, when replacing them one after another
        gives the same result as :meth:`find`; an empty list when it would not (many literals, a
        replacement that holds another literal, a field-scoped rule)."""
        if self._substitutions is None:
            self._substitutions = self._make_substitutions()
        return self._substitutions

    def substitutions(self) -> list[tuple[re.Pattern[bytes], bytes]]:
        """:meth:`literal_substitutions` as (regex, replacement) pairs: what each means, in ``re``."""
        return [(sub.pattern(), sub.replacement) for sub in self.literal_substitutions()]

    def _make_substitutions(self) -> list[Substitution]:
        if self.primitive not in ("path_prefix", "literal_names") or self.fields is not None:
            return []
        if not self.pairs or len(self.pairs) > FEW_LITERALS:
            return []
        keys = sorted(self.pairs, key=lambda k: (-len(k), k))
        # Replacing one literal after another equals one leftmost-longest pass only if no
        # replacement can be matched again by a later literal.
        if any(k in v for k in keys for v in self.pairs.values()):
            return []
        boundary = BOUNDARY_PATH if self.primitive == "path_prefix" else BOUNDARY_NAME
        return [Substitution(key.encode("utf-8"), self.pairs[key].encode("utf-8"), boundary) for key in keys]

    def find(self, data: bytes, lo: int = 0, hi: int | None = None) -> list[tuple[int, int, bytes]]:
        """Every firing in ``data[lo:hi]``: (start, end, replacement), leftmost first.

        Literal primitives search with one Aho–Corasick pass (see :mod:`kitbuild.literals`);
        digests with :meth:`digest_spans`; a user's regex with ``re``.
        """
        if hi is None:
            hi = len(data)
        if self.primitive in ("path_prefix", "literal_names"):
            if not self.pairs:
                return []
            if self._finder is None:
                keys = sorted(self.pairs, key=lambda k: (-len(k), k))
                boundary = path_boundary if self.primitive == "path_prefix" else name_boundary
                self._finder = LiteralFinder([k.encode("utf-8") for k in keys], boundary)
                self._replacements = [self.pairs[k].encode("utf-8") for k in keys]
            reps = self._replacements
            return [(s, e, reps[i]) for s, e, i in self._finder.find(data, lo, hi)]
        if self.primitive == "digest":
            if not self.withheld:
                return []
            assert self.placeholder is not None
            placeholder = self.placeholder.encode("utf-8")
            region = data if (lo == 0 and hi == len(data)) else data[lo:hi]
            return [(lo + s, lo + e, placeholder) for s, e in self.digest_spans(region)]
        out = []
        for m in self.compiled().finditer(data, lo, hi):
            rep = self.replacement(m)
            if rep is not None:
                out.append((m.start(), m.end(), rep))
        return out

    def digest_spans(self, data: bytes) -> list[tuple[int, int]]:
        """(start, end) of each withheld digest printed in ``data``, ``start`` before a ``sha256:``
        prefix: what :func:`kitbuild.digests.printed_digests` finds, kept where withheld.

        Records print a digest on nearly every line: each is compared as bytes, lower-cased,
        against the withheld set encoded once, rather than decoded to a string first.
        """
        withheld = self._withheld_bytes
        if withheld is None:
            withheld = self._withheld_bytes = frozenset(w.encode("ascii") for w in self.withheld)
        return withheld_spans(data, withheld)

    def replacement(self, match: re.Match[bytes]) -> bytes | None:
        """What ``match`` becomes, or None when it stays (a digest not withheld)."""
        if self.primitive == "digest":
            if match.group(1).lower().decode("ascii") in self.withheld:
                assert self.placeholder is not None
                return self.placeholder.encode("utf-8")
            return None
        if self.primitive == "regex":
            assert self.replace is not None
            return match.expand(self.replace.encode("utf-8"))
        return self.table()[match.group(0)]

    def private_strings(self) -> dict[str, str]:
        """The strings this matcher removes, each with a description safe to print in a log."""
        if self.primitive == "path_prefix":
            return {k: f"a private path that {v!r} stands for" for k, v in self.pairs.items()}
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
