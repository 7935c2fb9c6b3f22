"""``read``: one value by JSON pointer, from a JSON file or from the NDJSON/TSV row with a given key.

This is how a page quotes a stored figure (a recount file's ``counts.answerable.all@5``), usually
beside an ``equals`` that ties it to the figure recounted from the rows.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kitbuild.figures.context import DEFAULT_KEY, Context
from kitbuild.figures.pointer import a_kind
from kitbuild.figures.recount import Recount
from kitbuild.figures.value import FigureValue


class Read(Recount):
    name = "read"
    summary = "A value by JSON pointer from a JSON file, or from the row of an NDJSON or TSV file with a given key."

    def parts(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return ()

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        path, pointer = spec["file"], spec["pointer"]
        if "row" in spec:
            where, document = self._row(spec, ctx)
        else:
            where, document = path, ctx.json(path)
        value = ctx.value(where, document, pointer)
        if value is None or isinstance(value, (dict, list)):
            ctx.fail(f"{where}: {pointer} is {a_kind(value)}; a figure is a number, a string or true/false")
        of = spec.get("of")
        if isinstance(of, str):
            of = ctx.value(where, document, of)
            if isinstance(of, bool) or not isinstance(of, int) or of < 0:
                ctx.fail(f"{where}: {spec['of']} (the 'of') is {a_kind(of)}, not a whole number")
        fmt = "count" if isinstance(value, (int, float)) and not isinstance(value, bool) else "text"
        return FigureValue(value=value, format=fmt, of=of)

    def _row(self, spec: Mapping[str, Any], ctx: Context) -> tuple[str, Any]:
        wanted = str(spec["row"])
        rows, keyed = ctx.keyed(spec["file"], spec.get("key", DEFAULT_KEY))
        for entry in keyed:
            if entry.key == wanted:
                return f"{rows.path}:{entry.row.line}", entry.row.data
        ctx.fail(f"{rows.path}: no row has {spec.get('key', DEFAULT_KEY)} = {wanted!r}")
