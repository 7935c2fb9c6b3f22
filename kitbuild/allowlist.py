"""Whether an allow string covers a finding, for any number of allow strings.

A finding is allowed where an occurrence of an allow string (in the finding's encoding) covers
it. With a handful of strings each is looked for around the finding; a kit's provenance.json
may list thousands (and, being scanned itself, holds a finding for each of them), so past
``_FEW`` one automaton of them all is searched around the finding instead: a verify of a kit
that lists 100,000 allow entries took minutes, one string after another for every finding.
"""

from __future__ import annotations

from typing import Any

import ahocorasick_rs

__all__ = ["AllowForms"]

_FEW = 32


class AllowForms:
    """The allow strings in one encoding."""

    def __init__(self, forms: tuple[bytes, ...]) -> None:
        self.forms = forms
        self.longest = max(map(len, forms), default=0)
        self._automaton: ahocorasick_rs.BytesAhoCorasick | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_automaton": None}  # (automata do not pickle: a worker builds its own)

    def covers(self, text: bytes, start: int, end: int) -> bool:
        """Whether an occurrence at q covers text[start:end]: end - len(allow) <= q <= start."""
        if len(self.forms) <= _FEW:
            return any(len(allow) >= end - start and text.find(allow, max(0, end - len(allow)), start + len(allow)) >= 0 for allow in self.forms)
        if self._automaton is None:
            self._automaton = ahocorasick_rs.BytesAhoCorasick(list(self.forms), matchkind=ahocorasick_rs.MATCHKIND_STANDARD)
        lo = max(0, end - self.longest)
        around = text[lo : start + self.longest]
        return any(lo + first <= start and lo + last >= end for _, first, last in self._automaton.find_matches_as_indexes(around, overlapping=True))
