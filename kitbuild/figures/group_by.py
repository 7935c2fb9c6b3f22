"""``group_by``: row figures split by the value of a field, such as question type: a table.

Each group is a part (in ``order``, then the rest sorted), and inside it each listed figure is a
part holding the sum of that figure's outcomes over the group's rows (a count of hits, or for a
McNemar figure the net gain) out of the group's rows that figure counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from kitbuild.figures.context import DEFAULT_KEY, Context
from kitbuild.figures.pointer import a_kind
from kitbuild.figures.recount import Recount
from kitbuild.figures.value import FigureValue


class GroupBy(Recount):
    name = "group_by"
    summary = "Row figures split by a field's value: a part per group, in it a part per figure; value: the number of groups."

    def references(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return tuple(spec["figures"])

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        figures = [ctx.figure(name) for name in spec["figures"]]
        for name, figure in zip(spec["figures"], figures):
            if figure.outcomes is None:
                ctx.fail(f"{name!r} has no per-row outcomes to split")
        path = spec.get("rows") or next((f.rows for f in figures if f.rows), None)
        if path is None:
            ctx.fail("none of its figures reads a row file; give 'rows', the file to read 'by' from")
        key = spec.get("key") or next((f.key for f in figures if f.rows == path and f.key), DEFAULT_KEY)
        rows, keyed = ctx.keyed(path, key)
        group_of: dict[str, str] = {}
        for entry in keyed:
            raw = ctx.field(rows, entry.row, spec["by"])
            if raw is None or isinstance(raw, (dict, list)):
                ctx.fail(f"{rows.path}:{entry.row.line}: {spec['by']} is {a_kind(raw)}; a group is named by a string, a number or true/false")
            group_of[entry.key] = ("true" if raw else "false") if isinstance(raw, bool) else str(raw)
        seen = sorted(set(group_of.values()))
        # (A set: a provenance.json's 'order' may list a million groups, each looked for in it.)
        found, listed = set(seen), set(spec.get("order", []))
        first = [g for g in spec.get("order", []) if g in found]
        order = first + [g for g in seen if g not in listed]

        cells: dict[str, dict[str, list[Any]]] = {group: {name: [] for name in spec["figures"]} for group in order}
        for name, figure in zip(spec["figures"], figures):
            for row_key, outcome in (figure.outcomes or {}).items():
                if row_key not in group_of:
                    ctx.fail(f"row {row_key!r} of {name!r} has no row in {rows.path}")
                cells[group_of[row_key]][name].append(outcome)
        counts = Counter(group_of.values())  # (one pass: a kit's rows may fall in 100,000 groups)
        members = {group: counts[group] for group in order}

        # Hit-or-miss outcomes sum to a count; -1/0/+1 outcomes (a McNemar pairing) to a net gain.
        signed_figures = {n: any(not isinstance(o, bool) for o in (f.outcomes or {}).values()) for n, f in zip(spec["figures"], figures)}
        parts = {}
        for group in order:
            columns = {}
            for name in spec["figures"]:
                outcomes = cells[group][name]
                signed = signed_figures[name]
                columns[name] = FigureValue(sum(int(o) for o in outcomes), format="signed" if signed else "count", of=len(outcomes))
            parts[group] = FigureValue(members[group], parts=columns)
        return FigureValue(value=len(order), parts=parts)
