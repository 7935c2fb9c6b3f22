"""Applying rules to the text of one file, a chunk of whole lines at a time.

A chunk always ends at a line end (or at the end of the file), so no match, field or TSV row is
ever split. Rules run in config order on each chunk. Each firing is counted; when asked, each is
also kept as an event (line, column, before, after) for ``build --dry-run``. A build and a dry
run rewrite through the same code: only the keeping of events differs.

Replacements are made safe for the file's format: in JSON a replacement is written as a JSON
string body (quotes and backslashes escaped); in YAML and TSV, a replacement that would change
the structure (a tab in a TSV cell, ': ' in a YAML value, ...) cannot be made safe and stops the
build with ``kit-path:line:col``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Sequence

import orjson

from kitbuild.errors import RuleError, UnsafeRewriteError
from kitbuild.fileformat import format_of
from kitbuild.matchers import Hit, Matcher, PatternTimeout

_JSON_STRING = rb'"(?:[^"\\\n]|\\.)*"'
_TSV_UNSAFE = re.compile(rb"[\t\r\n]")
_YAML_UNSAFE = re.compile(rb"[\r\n\t#&*!|>'\"%@`{}\[\],\\]|: |^[-?:]")


@dataclass(frozen=True)
class Event:
    """One firing, for the researcher's dry run (it may show private text)."""

    rule: int
    line: int
    col: int
    before: str
    after: str


def _position(chunk: bytes, pos: int, first_line: int) -> tuple[int, int]:
    line = first_line + chunk.count(b"\n", 0, pos)
    col = pos - (chunk.rfind(b"\n", 0, pos) + 1) + 1
    return line, col


class Rewriter:
    """Rewrites one file's chunks in order with a list of matchers (None = rule off here)."""

    def __init__(self, kit_path: str, matchers: Sequence[Matcher | None], collect: bool = False) -> None:
        self.kit_path = kit_path
        self.format = format_of(kit_path)
        self.matchers = list(matchers)
        self.counts = [0] * len(self.matchers)
        self.events: list[Event] | None = [] if collect else None
        self.line = 1  # line number of the first byte of the next chunk
        self._tsv_header: list[bytes] | None = None
        self._field_res: dict[int, re.Pattern[bytes]] = {}
        # Whether a replacement is safe depends only on it and the file's format: each distinct
        # replacement is checked (and escaped) once per file.
        self._safe_cache: dict[bytes, bytes] = {}

    def feed(self, chunk: bytes) -> bytes:
        """The rewritten ``chunk`` (whole lines); counts and events are updated."""
        for index, matcher in enumerate(self.matchers):
            if matcher is None or not matcher.active:
                continue
            try:
                hits = self._hits(index, matcher, chunk)
            except PatternTimeout as timeout:
                raise RuleError(
                    f"rules[{index}]: its pattern searched {self.kit_path} from line {self.line} for more than {timeout.args[0]:g} s without "
                    "finishing: a pattern whose repeats can match the same text in more than one way (such as (a|aa)+c) takes time "
                    "exponential in the text's length. Make each repeat match one way only."
                ) from None
            if hits:
                chunk = self._rewrite(index, chunk, hits)
        self.line += chunk.count(b"\n")
        return chunk

    # -- what fires ----------------------------------------------------------------------------

    def _hits(self, index: int, matcher: Matcher, chunk: bytes) -> list[Hit]:
        """Where ``matcher`` fires in ``chunk``, limited to its fields' values when it has fields."""
        if matcher.fields is None:
            return matcher.find(chunk)
        if self.format == "text":
            return []  # a plain text file has no fields: a field-scoped rule never fires there
        if self.format == "tsv" and self._tsv_header is None and self.line == 1 and chunk:
            # The columns are named by the header as the first field-scoped rule sees it,
            # whether or not it fires in this chunk.
            self._tsv_header = _tsv_cells(chunk.split(b"\n", 1)[0])
        if matcher.primitive == "regex":
            # A user's pattern may match across a value's edge; search each value on its own.
            return [hit for lo, hi in self._field_spans(index, matcher.fields, chunk) for hit in matcher.find(chunk, lo, hi)]
        # Literals are searched in the whole chunk, once, and kept where they lie inside a value:
        # most chunks hold no name at all, and then no value need be found.
        hits = matcher.find(chunk)
        if not hits:
            return []
        spans = self._field_spans(index, matcher.fields, chunk)
        starts = [lo for lo, _ in spans]
        kept = []
        for hit in hits:
            k = bisect.bisect_right(starts, hit[0]) - 1  # the last value that starts at or before the hit
            if k >= 0 and hit[1] <= spans[k][1]:
                kept.append(hit)
        return kept

    def _field_spans(self, index: int, fields: Sequence[str], chunk: bytes) -> list[tuple[int, int]]:
        """Byte spans of the values of ``fields`` in ``chunk``, in order."""
        fmt = self.format
        if fmt in ("json", "ndjson", "yaml"):
            regex = self._field_res.get(index)
            if regex is None:
                names = b"|".join(re.escape(f.encode("utf-8")) for f in fields)
                if fmt == "yaml":
                    regex = re.compile(
                        rb"(?m)^[ \t]*(?:-[ \t]+)?(?:" + names + rb"|\"(?:" + names + rb")\"|'(?:" + names + rb")')"
                        rb"[ \t]*:[ \t]*([^\r\n]*)"
                    )
                else:
                    regex = re.compile(
                        rb'"(?:' + names + rb')"\s*:\s*(' + _JSON_STRING
                        + rb"|\[\s*(?:" + _JSON_STRING + rb"\s*,?\s*)*\])"
                    )
                self._field_res[index] = regex
            return [m.span(1) for m in regex.finditer(chunk)]
        return self._tsv_spans(fields, chunk)

    def _tsv_spans(self, fields: Sequence[str], chunk: bytes) -> list[tuple[int, int]]:
        """The cells of the columns ``fields`` names, below the header."""
        header = self._tsv_header or []
        wanted = {i for i, name in enumerate(header) if name in {f.encode("utf-8") for f in fields}}
        spans = []
        pos = 0
        line_no = self.line
        while pos < len(chunk):
            nl = chunk.find(b"\n", pos)
            line_end = len(chunk) if nl < 0 else nl
            if line_no > 1:
                cell_start = pos
                for i, cell in enumerate(_tsv_cells(chunk[pos:line_end])):
                    if i in wanted:
                        spans.append((cell_start, cell_start + len(cell)))
                    cell_start += len(cell) + 1
            line_no += 1
            pos = line_end + 1
        return spans

    # -- writing -------------------------------------------------------------------------------

    def _rewrite(self, index: int, chunk: bytes, hits: list[Hit]) -> bytes:
        """``chunk`` with ``hits`` (sorted, not overlapping) replaced; each that changes something
        is counted (a replacement equal to the text it replaces did not fire)."""
        out: list[bytes] = []
        last = fired = 0
        for start, end, replacement in hits:
            if end - start == len(replacement) and chunk[start:end] == replacement:
                continue
            safe = self._safe_cache.get(replacement)
            if safe is None:
                # An unsafe replacement stops the file at its first firing.
                safe = self._safe_cache[replacement] = self._safe(replacement, chunk, start)
            out.append(chunk[last:start])
            out.append(safe)
            last = end
            fired += 1
            if self.events is not None:
                line, col = _position(chunk, start, self.line)
                self.events.append(
                    Event(index, line, col, chunk[start:end].decode("utf-8", "replace"), safe.decode("utf-8", "replace"))
                )
        if not fired:
            return chunk
        self.counts[index] += fired
        out.append(chunk[last:])
        return b"".join(out)

    def _safe(self, replacement: bytes, chunk: bytes, pos: int) -> bytes:
        fmt = self.format
        if fmt in ("json", "ndjson"):
            try:
                text = replacement.decode("utf-8")
            except UnicodeDecodeError:
                return self._unsafe(chunk, pos, "the replacement is not UTF-8, which JSON requires")
            return orjson.dumps(text)[1:-1]
        if fmt == "tsv" and _TSV_UNSAFE.search(replacement):
            return self._unsafe(chunk, pos, "the replacement holds a tab or a line break, which would split a TSV cell")
        if fmt == "yaml" and _YAML_UNSAFE.search(replacement):
            return self._unsafe(chunk, pos, "the replacement holds a character that YAML would read as syntax")
        return replacement

    def _unsafe(self, chunk: bytes, pos: int, why: str) -> bytes:
        line, col = _position(chunk, pos, self.line)
        raise UnsafeRewriteError(
            f"{self.kit_path}:{line}:{col}: a rule's replacement cannot be written safely here: {why}. "
            "Change the rule's replacement so it needs no escaping in this format.",
            self.kit_path,
            line,
            col,
        )


def _tsv_cells(line: bytes) -> list[bytes]:
    """A TSV line's cells, a CRLF line end left out."""
    return (line[:-1] if line.endswith(b"\r") else line).split(b"\t")
