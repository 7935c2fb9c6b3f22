"""Applying rules to the text of one file, a chunk of whole lines at a time.

A chunk always ends at a line end (or at the end of the file), so no match, field or TSV row is
ever split. Rules run in config order on each chunk. Each firing is counted; when asked, each is
also kept as an event (line, column, before, after) for ``build --dry-run``.

Replacements are made safe for the file's format: in JSON a replacement is written as a JSON
string body (quotes and backslashes escaped); in YAML and TSV, a replacement that would change
the structure (a tab in a TSV cell, ': ' in a YAML value, ...) cannot be made safe and stops the
build with ``kit-path:line:col``.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import Mapping, Sequence

import orjson

from kitbuild.digests import DIGEST_LENGTH, PREFIX
from kitbuild.errors import UnsafeRewriteError
from kitbuild.fileformat import format_of
from kitbuild.matchers import FEW_LITERALS, Matcher, Substitution
from kitbuild.speedups import BOUNDARY_NONE, contains, count_starts, replace_bounded, replace_values

_JSON_STRING = rb'"(?:[^"\\\n]|\\.)*"'
_NEWLINE = (b"\n",)
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


_COLON = re.compile(rb"\s*:\s*")


@dataclass(frozen=True, slots=True)
class _Whole:
    """A JSON field's value that is exactly one name, replaced as a whole.

    ``pattern`` allows white space around the colon; ``re`` calls back into Python for every
    firing to expand its template. The form without white space, ``"field":"name"``, is far
    more common and is replaced first by a plain replace (in C). That gives the pattern's result
    when no two firings overlap and no replacement makes a new firing. Both come down to the
    quotes: ``name`` and ``field`` hold none, so a firing's quotes are its four; two firings
    can then only overlap by sharing a quote (``name"field"``, checked per chunk) or where
    ``field == name`` or one of them is a colon with white space; and a replaced value ``safe``
    (no quote either) is a run between two quotes, so a new firing would need ``safe`` to be
    the field, the name, or a colon with white space. Any of those keeps ``literal`` None.
    """

    pattern: re.Pattern[bytes]
    template: bytes
    name: bytes
    literal: bytes | None  # '"field":"name"', or None where only the pattern is exact
    literal_rep: bytes  # '"field":"safe"'
    shared_quote: bytes  # 'name"field"': two firings that share a quote
    keeps_gone: bool  # no replacement writes a name: one found absent stays absent

    @classmethod
    def make(cls, field: bytes, name: bytes, safe: bytes, keeps_gone: bool) -> "_Whole":
        key = b'"' + re.escape(field) + rb'"\s*:\s*"'
        pattern = re.compile(b"(" + key + b")" + re.escape(name) + b'"')
        template = b"\\g<1>" + safe.replace(b"\\", b"\\\\") + b'"'
        exact = (
            all(part and b'"' not in part and not _COLON.fullmatch(part) for part in (field, name, safe))
            and len({field, name, safe}) == 3
        )
        literal = b'"' + field + b'":"' + name + b'"' if exact else None
        return cls(pattern, template, name, literal, b'"' + field + b'":"' + safe + b'"', name + b'"' + field + b'"', keeps_gone)

    def apply(self, chunk: bytes, gone: set[bytes]) -> tuple[bytes, int]:
        """``chunk`` with every firing replaced, and how many fired; adds the name to ``gone``
        when it is known to be nowhere in the result."""
        literal = self.literal
        if literal is None or contains(chunk, self.shared_quote):
            return self.pattern.subn(self.template, chunk)
        out, fired = replace_bounded(chunk, literal, self.literal_rep, BOUNDARY_NONE)
        if contains(out, self.name):
            out, more = self.pattern.subn(self.template, out)
            fired += more
        elif self.keeps_gone:
            gone.add(self.name)
        return out, fired


# Each matcher's steps for whole JSON values (see Rewriter._whole_values), made once per process.
# (Held in a 1-tuple: None is an answer too, "too many names for steps".)
_WHOLE_STEPS: "weakref.WeakKeyDictionary[Matcher, tuple[list[_Whole] | None]]" = weakref.WeakKeyDictionary()
# Each many-name matcher's JSON-escaped replacements, or None where one of them holds a name (see
# Rewriter._compact_values), made once per process.
_COMPACT_SAFES: "weakref.WeakKeyDictionary[Matcher, tuple[dict[bytes, bytes] | None]]" = weakref.WeakKeyDictionary()


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
        self._safe_cache: dict[bytes, bytes] = {}

    # -- one region --------------------------------------------------------------------------

    def _safe(self, replacement: bytes, chunk: bytes, pos: int) -> bytes:
        fmt = self.format
        if fmt in ("json", "ndjson"):
            try:
                text = replacement.decode("utf-8")
            except UnicodeDecodeError:
                return self._unsafe(chunk, pos, "the replacement is not UTF-8, which JSON requires")
            return orjson.dumps(text)[1:-1]
        if fmt == "tsv" and re.search(rb"[\t\r\n]", replacement):
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

    def _rewrite(self, index: int, chunk: bytes, hits: list[tuple[int, int, bytes]]) -> tuple[bytes, int]:
        """``chunk`` with ``hits`` (sorted, not overlapping) replaced; and how many fired."""
        out: list[bytes] = []
        last = fired = 0
        cache = self._safe_cache
        for start, end, replacement in hits:
            if end - start == len(replacement) and chunk[start:end] == replacement:
                continue
            safe = cache.get(replacement)
            if safe is None:
                # Unsafe replacements raise here, at their first position; safe ones are cached
                # because safety depends only on the replacement and the file's format.
                safe = cache[replacement] = self._safe(replacement, chunk, start)
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
            return chunk, 0
        out.append(chunk[last:])
        return b"".join(out), fired

    def _substitute(self, index: int, chunk: bytes, substitutions: list[Substitution]) -> bytes:
        """The fast path of a few literals: one C-level substitution per literal."""
        for sub in substitutions:
            safe = self._safe_cache.get(sub.replacement)
            if safe is None:
                # Unsafe replacements raise at their first firing: found once per file, by regex.
                m = sub.pattern().search(chunk)
                if m is None:
                    continue
                safe = self._safe_cache[sub.replacement] = self._safe(sub.replacement, chunk, m.start())
            chunk, fired = replace_bounded(chunk, sub.literal, safe, sub.boundary)
            self.counts[index] += fired
        return chunk

    def _withhold(self, index: int, matcher: Matcher, chunk: bytes) -> bytes:
        """The digest rule in a build: every firing writes the one placeholder, so the pieces
        between firings are joined with it once rather than rebuilt firing by firing."""
        spans = matcher.digest_spans(chunk)
        if not spans:
            return chunk
        assert matcher.placeholder is not None
        placeholder = matcher.placeholder.encode("utf-8")
        if len(placeholder) in (DIGEST_LENGTH, DIGEST_LENGTH + len(PREFIX)):
            # It could be a printed digest's own text, which _rewrite leaves and does not count.
            chunk, fired = self._rewrite(index, chunk, [(start, end, placeholder) for start, end in spans])
            self.counts[index] += fired
            return chunk
        safe = self._safe_cache.get(placeholder)
        if safe is None:
            safe = self._safe_cache[placeholder] = self._safe(placeholder, chunk, spans[0][0])
        pieces = []
        last = 0
        for start, end in spans:
            pieces.append(chunk[last:start])
            last = end
        pieces.append(chunk[last:])
        self.counts[index] += len(spans)
        return safe.join(pieces)

    def _hits(self, index: int, matcher: Matcher, chunk: bytes) -> list[tuple[int, int, bytes]]:
        """Where ``matcher`` fires in ``chunk``, limited to its fields' values when it has fields."""
        if matcher.fields is None:
            return matcher.find(chunk)
        spans = self._field_spans(index, matcher.fields, chunk)
        if not spans:
            return []
        if matcher.primitive == "regex":
            # A user's pattern may match across a value's edge; search each value on its own.
            return [hit for lo, hi in spans for hit in matcher.find(chunk, lo, hi)]
        # Literal matchers search the chunk once and keep the hits inside a value: one pass,
        # however many fields a chunk holds.
        kept: list[tuple[int, int, bytes]] = []
        spans_iter = iter(spans)
        lo, hi = next(spans_iter)
        for hit in matcher.find(chunk):
            while hi <= hit[0]:
                nxt = next(spans_iter, None)
                if nxt is None:
                    return kept
                lo, hi = nxt
            if lo <= hit[0] and hit[1] <= hi:
                kept.append(hit)
        return kept

    # -- field scoping -----------------------------------------------------------------------

    def _json_field_values(self, index: int, matcher: Matcher, chunk: bytes) -> bytes:
        """A field-scoped literal rule in JSON: each field value found once and rewritten in place.

        Field values are short and most are exactly one name, which a dict lookup settles; only
        a value that is not searches it for names. One substitution over the chunk, with no
        automaton pass over the rest of it.
        """
        assert matcher.fields is not None
        table = matcher.table()
        whole = self._whole_values(matcher, chunk)
        if whole is not None:
            # A value that is exactly one name is replaced in C, one field and name at a time;
            # only if a name is still in the chunk after that is each value searched.
            gone: set[bytes] = set()
            for step in whole:
                chunk, n = step.apply(chunk, gone)
                self.counts[index] += n
            if not any(contains(chunk, name) for name in table if name not in gone):
                return chunk
        else:
            safes = self._compact_safes(matcher, chunk)
            if safes is not None:
                chunk, settled = self._compact_values(index, matcher, safes, chunk)
                if settled:
                    return chunk
        self._field_spans(index, matcher.fields, b"")  # compiles the field pattern once
        regex = self._field_res[index]
        fired = 0

        def value(m: re.Match[bytes]) -> bytes:
            nonlocal fired
            text = m.group(1)
            rep = table.get(text[1:-1]) if text[:1] == b'"' else None
            if rep is not None:
                safe = self._safe_cache.get(rep)
                if safe is None:
                    safe = self._safe_cache[rep] = self._safe(rep, chunk, m.start(1))
                fired += 1
                new = b'"' + safe + b'"'
            else:
                hits = matcher.find(text)
                if not hits:
                    return m.group(0)
                new, n = self._rewrite(index, text, hits)
                fired += n
            return m.group(0)[: m.start(1) - m.start(0)] + new

        chunk = regex.sub(value, chunk)
        self.counts[index] += fired
        return chunk

    def _json_safe(self, replacement: bytes, chunk: bytes) -> bytes:
        """``replacement`` as JSON writes it, cached. JSON needs no check beyond escaping, which
        holds at any position, so where it is written does not matter."""
        safe = self._safe_cache.get(replacement)
        if safe is None:
            safe = self._safe_cache[replacement] = self._safe(replacement, chunk, 0)
        return safe

    def _compact_safes(self, matcher: Matcher, chunk: bytes) -> dict[bytes, bytes] | None:
        """Each name -> its replacement as JSON writes it, for :meth:`_compact_values`; None where a
        replacement holds a name, which the search for names left after it would find again."""
        made = _COMPACT_SAFES.get(matcher)
        if made is None:
            table = matcher.table()
            safes: dict[bytes, bytes] | None = {}
            by_rep = {rep: self._json_safe(rep, chunk) for rep in set(table.values())}
            finder = matcher.find
            # A name with a quote could be split across a value's edge; rare enough to leave to
            # the field pattern.
            if any(finder(safe) for safe in by_rep.values()) or any(b'"' in name for name in table):
                safes = None
            else:
                safes = {name: by_rep[rep] for name, rep in table.items()}
            made = _COMPACT_SAFES[matcher] = (safes,)
        return made[0]

    def _compact_values(self, index: int, matcher: Matcher, safes: dict[bytes, bytes], chunk: bytes) -> tuple[bytes, bool]:
        """Values written ``"field":"name"`` (no space, no escape: what JSON writers emit) that
        are exactly one name, looked up whole in one compiled pass per field (``replace_values``):
        a dict lookup per value instead of a regex match and a callback.

        A field's key cannot occur inside a JSON string (its quotes would be escaped there), so each
        ``"field":"`` starts a value of that field, as the field pattern's matches do. Also whether
        that settles the chunk: every key of the fields was written so, and no value left holds a
        name; else the field pattern must run after (it finds nothing in the values done here).
        """
        assert matcher.fields is not None
        settled = True
        for field in matcher.fields:
            key = b'"' + field.encode("utf-8") + b'"'
            before = chunk
            chunk, found, fired, unread, unmatched = replace_values(chunk, key + b':"', safes)
            if unread or count_starts(before, (key,), 0, len(before))[0] != found:
                settled = False  # an escape, or a key written otherwise ("field": "x", an array, a number)
            elif settled and any(matcher.find(value) for value in unmatched):
                settled = False  # a name inside a longer value
            self.counts[index] += fired
        return chunk, settled

    def _whole_values(self, matcher: Matcher, chunk: bytes) -> list[_Whole] | None:
        """One step per field and name for JSON values that are exactly one name, or None for too many.

        The steps depend on the matcher alone (JSON escapes any replacement the same way), so a
        process makes them once for all its files: a kit of 100,000 small records spent a
        quarter of its build compiling them file by file.
        """
        made = _WHOLE_STEPS.get(matcher)
        if made is not None:
            return made[0]
        assert matcher.fields is not None
        table = matcher.table()
        result: list[_Whole] | None = None
        if len(table) * len(matcher.fields) <= FEW_LITERALS:
            result = []
            ordered = sorted(table.items(), key=lambda kv: (-len(kv[0]), kv[0]))
            safes = {rep: self._json_safe(rep, chunk) for _, rep in ordered}
            # A name found gone stays gone if no replacement can write one: a name without a
            # quote could only be written inside a replaced value, which is bounded by quotes.
            keeps_gone = not any(b'"' in name or any(name in safe for safe in safes.values()) for name, _ in ordered)
            for field in matcher.fields:
                key = field.encode("utf-8")
                for name, rep in ordered:
                    result.append(_Whole.make(key, name, safes[rep], keeps_gone))
        _WHOLE_STEPS[matcher] = (result,)
        return result

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
        if fmt == "tsv":
            return self._tsv_spans(fields, chunk)
        return []  # a plain text file has no fields: a field-scoped rule never fires there

    def _tsv_spans(self, fields: Sequence[str], chunk: bytes) -> list[tuple[int, int]]:
        spans = []
        pos = 0
        line_no = self.line
        wanted = {f.encode("utf-8") for f in fields}
        while pos < len(chunk):
            nl = chunk.find(b"\n", pos)
            line_end = len(chunk) if nl < 0 else nl
            body_end = line_end - 1 if line_end > pos and chunk[line_end - 1 : line_end] == b"\r" else line_end
            cells = chunk[pos:body_end].split(b"\t")
            if line_no == 1:
                if self._tsv_header is None:
                    self._tsv_header = cells
            else:
                header = self._tsv_header or []
                cell_start = pos
                for i, cell in enumerate(cells):
                    if i < len(header) and header[i] in wanted:
                        spans.append((cell_start, cell_start + len(cell)))
                    cell_start += len(cell) + 1
            line_no += 1
            pos = line_end + 1
        return spans

    # -- a chunk -----------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> bytes:
        """The rewritten ``chunk`` (whole lines); counts and events are updated."""
        for index, matcher in enumerate(self.matchers):
            if matcher is None or not matcher.active:
                continue
            fast = matcher.literal_substitutions() if self.events is None else []
            if fast:
                chunk = self._substitute(index, chunk, fast)
                continue
            if (
                self.events is None
                and matcher.fields is not None
                and matcher.primitive == "literal_names"
                and self.format in ("json", "ndjson")
            ):
                chunk = self._json_field_values(index, matcher, chunk)
                continue
            if self.events is None and matcher.primitive == "digest":
                chunk = self._withhold(index, matcher, chunk)
                continue
            hits = self._hits(index, matcher, chunk)
            if hits:
                chunk, fired = self._rewrite(index, chunk, hits)
                self.counts[index] += fired
        if self.format == "tsv" and self._tsv_header is None and chunk:
            # The header is read even when no field-scoped rule ran on the first chunk.
            first = chunk.split(b"\n", 1)[0].rstrip(b"\r")
            self._tsv_header = first.split(b"\t")
        self.line += count_starts(chunk, _NEWLINE, 0, len(chunk))[0]
        return chunk
