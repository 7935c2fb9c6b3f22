"""``every_at_k`` and ``any_at_k``: does a ranked list's top k hold all, or any, of a row's gold names.

every@k with an empty gold list holds (nothing is missing) and any@k does not (nothing is found):
the plain reading of 'every' and 'any'. Skip such rows with ``skip`` if the page counts otherwise.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kitbuild.figures.context import DEFAULT_KEY, Context
from kitbuild.figures.recount import Recount
from kitbuild.figures.value import FigureValue


class _AtK(Recount):
    rows_from = "rows"
    quantifier = all

    @property
    def schema(self) -> Mapping[str, Any]:
        return {**super().schema, "$ref": "#/$defs/at_k"}

    def parts(self, spec: Mapping[str, Any]) -> Sequence[str]:
        return ()

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        rows, keyed = ctx.keyed(spec["rows"], spec.get("key", DEFAULT_KEY), spec.get("skip"))
        k = spec["k"]
        outcomes = {}
        for entry in keyed:
            top = set(ctx.list_of_names(rows, entry.row, spec["ranked"], spec.get("item"))[:k])
            gold = ctx.list_of_names(rows, entry.row, spec["gold"])
            outcomes[entry.key] = type(self).quantifier(name in top for name in gold)
        return FigureValue(value=sum(outcomes.values()), of=len(outcomes), outcomes=outcomes)


class EveryAtK(_AtK):
    name = "every_at_k"
    summary = "Rows whose every gold name is in the ranked list's top k; of: the rows counted."
    quantifier = all


class AnyAtK(_AtK):
    name = "any_at_k"
    summary = "Rows with at least one gold name in the ranked list's top k; of: the rows counted."
    quantifier = any
