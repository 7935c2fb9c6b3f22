"""What a recount sees while it computes one figure: the kit's files and the figures before it.

Every way a recount can fail goes through :meth:`Context.fail`, so each error names the figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, NoReturn, Sequence

from kitbuild.figures.errors import FigureError
from kitbuild.figures.files import KitReader, Row, Rows, Unreadable, field, value_at
from kitbuild.figures.pointer import a_kind
from kitbuild.figures.value import FigureValue

DEFAULT_KEY = "/qid"
_TRUE_TEXT = {"true": True, "false": False, "1": True, "0": False, "True": True, "False": False}


@dataclass(frozen=True)
class KeyedRow:
    """A row with its key (the text of its ``key`` field), as the row recounts see it."""

    key: str
    row: Row


class Context:
    """The kit and the figures computed so far, for the figure named ``name``."""

    def __init__(self, name: str, spec: Mapping[str, Any], reader: KitReader, figures: Mapping[str, FigureValue]) -> None:
        self.name = name
        self.spec = spec
        self.reader = reader
        self._figures = figures

    def fail(self, reason: str) -> NoReturn:
        """Stop: this figure cannot be computed, for ``reason``."""
        raise FigureError(self.name, reason)

    def figure(self, name: str) -> FigureValue:
        """A figure computed earlier (evaluation order follows the references)."""
        return self._figures[name]

    def json(self, path: str) -> Any:
        try:
            return self.reader.json(path)
        except Unreadable as exc:
            self.fail(str(exc))

    def value(self, path: str, document: Any, pointer: str) -> Any:
        try:
            return value_at(path, document, pointer)
        except Unreadable as exc:
            self.fail(str(exc))

    def rows(self, path: str) -> Rows:
        try:
            return self.reader.rows(path)
        except Unreadable as exc:
            self.fail(str(exc))

    def field(self, rows: Rows, row: Row, pointer: str) -> Any:
        try:
            return field(rows, row, pointer)
        except Unreadable as exc:
            self.fail(str(exc))

    def keyed(self, path: str, key: str = DEFAULT_KEY, skip: str | None = None) -> tuple[Rows, list[KeyedRow]]:
        """The rows of ``path`` with their keys, in file order, leaving out rows where ``skip`` is true.

        A key must be a string or an integer and name one row only: rows are joined across files
        and figures by key, and a duplicate would make the join ambiguous.
        """
        rows = self.rows(path)
        seen: dict[str, int] = {}
        out = []
        for row in rows.rows:
            raw = self.field(rows, row, key)
            if isinstance(raw, bool) or not isinstance(raw, (str, int)):
                self.fail(f"{path}:{row.line}: the row key {key} is {a_kind(raw)}, not a string or an integer")
            text = str(raw)
            if text in seen:
                self.fail(f"{path}:{row.line}: the row key {key} is {text!r}, as on line {seen[text]}; each row needs its own key")
            seen[text] = row.line
            if skip is not None and self.flag(rows, row, skip):
                continue
            out.append(KeyedRow(text, row))
        return rows, out

    def flag(self, rows: Rows, row: Row, pointer: str) -> bool:
        """A true/false field (JSON booleans or 0/1; in a TSV, true/false/1/0)."""
        raw = self.field(rows, row, pointer)
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str) and rows.format == "tsv" and raw in _TRUE_TEXT:
            return _TRUE_TEXT[raw]
        shown = repr(raw) if rows.format == "tsv" else a_kind(raw)
        self.fail(f"{rows.path}:{row.line}: {pointer} is {shown}, not true or false")

    def list_of_names(self, rows: Rows, row: Row, pointer: str, item: str | None = None) -> list[str]:
        """A ranked or gold list: strings, or objects whose ``item`` pointer gives the string."""
        raw = self.field(rows, row, pointer)
        if not isinstance(raw, list):
            self.fail(f"{rows.path}:{row.line}: {pointer} is {a_kind(raw)}, not a list")
        names = []
        for position, entry in enumerate(raw):
            if item is not None:
                entry = self.field(rows, Row(row.line, entry), item) if isinstance(entry, dict) else entry
            if isinstance(entry, bool) or not isinstance(entry, (str, int)):
                self.fail(f"{rows.path}:{row.line}: {pointer}/{position} is {a_kind(entry)}, not a name")
            names.append(str(entry))
        return names

    def references(self, names: Sequence[str]) -> Iterator[FigureValue]:
        for name in names:
            yield self.figure(name)
