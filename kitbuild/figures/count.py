"""``count``: the rows of an NDJSON or TSV file whose fields equal given values."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kitbuild.figures.context import DEFAULT_KEY, Context
from kitbuild.figures.recount import Recount
from kitbuild.figures.value import FigureValue


def _text(value: Any) -> str:
    # A TSV cell is text: compare it with the value as kit.yaml's author would have typed it.
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def same(cell: Any, wanted: Any, tsv: bool) -> bool:
    """Whether a field equals a ``where`` value; True is not 1 and "1" is not 1 outside a TSV."""
    if tsv:
        # A TSV cell is text; anything else equals no text.
        return isinstance(cell, str) and cell == _text(wanted)
    if isinstance(cell, bool) or isinstance(wanted, bool):
        return isinstance(cell, bool) and isinstance(wanted, bool) and cell == wanted
    if isinstance(cell, (int, float)) and isinstance(wanted, (int, float)):
        return cell == wanted
    return type(cell) is type(wanted) and cell == wanted


class Count(Recount):
    name = "count"
    summary = "The rows of an NDJSON or TSV file whose fields all equal given values; of: the rows looked at."
    rows_from = "rows"

    def parts(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return ()

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        rows, keyed = ctx.keyed(spec["rows"], spec.get("key", DEFAULT_KEY), spec.get("skip"))
        tsv = rows.format == "tsv"
        outcomes = {}
        for entry in keyed:
            outcomes[entry.key] = all(same(ctx.field(rows, entry.row, p), v, tsv) for p, v in spec["where"].items())
        return FigureValue(value=sum(outcomes.values()), of=len(outcomes), outcomes=outcomes)
