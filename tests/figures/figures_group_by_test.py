"""group_by: a table per value of a field, with hit counts and, for a McNemar pairing, net gains."""

from __future__ import annotations

import pytest

from kitbuild.figures import FigureError, evaluate

ROWS = [
    {"qid": "q1", "type": "multi", "abs": False, "a": True, "b": False},
    {"qid": "q2", "type": "multi", "abs": False, "a": True, "b": True},
    {"qid": "q3", "type": "single", "abs": False, "a": False, "b": True},
    {"qid": "q4", "type": "single", "abs": True, "a": False, "b": False},
    {"qid": "q5", "type": "update", "abs": False, "a": True, "b": False},
]
SPEC = {
    "a_hits": {"recount": "count", "rows": "r.ndjson", "where": {"/a": True}, "skip": "/abs"},
    "b_hits": {"recount": "count", "rows": "r.ndjson", "where": {"/b": True}, "skip": "/abs"},
    "a_vs_b": {"recount": "mcnemar_exact", "a": "a_hits", "b": "b_hits"},
    "by_type": {"recount": "group_by", "figures": ["a_hits", "b_hits", "a_vs_b"], "by": "/type", "order": ["single"]},
}


def _table(value):
    return {group: {name: (cell.text(), cell.of) for name, cell in part.parts.items()} for group, part in value.parts.items()}


def test_groups_in_order_then_sorted_with_counts_and_net_gain(kit):
    by_type = evaluate(SPEC, kit({"r.ndjson": ROWS}))["by_type"]
    assert by_type.value == 3
    assert list(by_type.parts) == ["single", "multi", "update"]
    assert _table(by_type) == {
        # q4 is skipped: the single group has two rows but each figure counts one of them.
        "single": {"a_hits": ("0", 1), "b_hits": ("1", 1), "a_vs_b": ("-1", 1)},
        "multi": {"a_hits": ("2", 2), "b_hits": ("1", 2), "a_vs_b": ("+1", 2)},
        "update": {"a_hits": ("1", 1), "b_hits": ("0", 1), "a_vs_b": ("+1", 1)},
    }
    assert by_type.parts["single"].value == 2


def test_group_field_from_another_file_joined_on_key(kit):
    types = "qid\tquestion_type\n" + "".join(f"{r['qid']}\t{'odd' if int(r['qid'][1]) % 2 else 'even'}\n" for r in ROWS)
    spec = {**SPEC, "by_type": {"recount": "group_by", "figures": ["a_hits"], "by": "/question_type", "rows": "types.tsv"}}
    by = evaluate(spec, kit({"r.ndjson": ROWS, "types.tsv": types}))["by_type"]
    assert _table(by) == {"even": {"a_hits": ("1", 1)}, "odd": {"a_hits": ("2", 3)}}


def test_a_row_without_a_group_is_an_error(kit):
    spec = {**SPEC, "by_type": {"recount": "group_by", "figures": ["a_hits"], "by": "/t", "rows": "t.tsv"}}
    with pytest.raises(FigureError) as caught:
        evaluate(spec, kit({"r.ndjson": ROWS, "t.tsv": "qid\tt\nq1\tx\n"}))
    assert str(caught.value) == "figure 'by_type' cannot be computed: row 'q2' of 'a_hits' has no row in t.tsv"


def test_a_figure_without_outcomes_cannot_be_split(kit):
    spec = {"n": {"recount": "read", "file": "f.json", "pointer": "/n"}, "g": {"recount": "group_by", "figures": ["n"], "by": "/type"}}
    with pytest.raises(FigureError, match="'n' has no per-row outcomes to split"):
        evaluate(spec, kit({"f.json": {"n": 1}}))
