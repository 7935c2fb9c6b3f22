"""rrf: exact points, ties to the list named first, rebuilt top n against a stored list, ties across a rank."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from kitbuild.figures import FigureError, evaluate
from kitbuild.figures.rrf import exact, fuse

ONE, HALF, K = F(1), F(1, 2), F(60)


def test_points_are_weight_over_k_plus_rank():
    fused = fuse([["a", "b"], ["b"]], [ONE, HALF], K)
    assert fused == [("b", F(1, 62) + F(1, 2) / 61), ("a", F(1, 61))]


def test_exact_tie_goes_to_the_list_named_first():
    # x and y each get 1/61 + 1/62: a tie; the first list ranks x higher, so x wins.
    assert [n for n, _ in fuse([["x", "y"], ["y", "x"]], [ONE, ONE], K)] == ["x", "y"]
    assert [n for n, _ in fuse([["y", "x"], ["x", "y"]], [ONE, ONE], K)] == ["y", "x"]


def test_absent_from_the_first_list_ranks_after_present():
    # p only in the first list, q only in the second, same weight: 1/61 each; p is in the first list.
    assert [n for n, _ in fuse([["p"], ["q"]], [ONE, ONE], K)] == ["p", "q"]
    assert [n for n, _ in fuse([["q"], ["p"]], [ONE, ONE], K)] == ["q", "p"]


def test_a_three_way_tie_float_sums_could_split_stays_a_tie():
    # Each of x, y, z gets 1/61 + 1/62 + 1/63, added in a different order; exactly equal.
    fused = fuse([["x", "y", "z"], ["y", "z", "x"], ["z", "x", "y"]], [ONE, ONE, ONE], K)
    assert [n for n, _ in fused] == ["x", "y", "z"]
    assert fused[0][1] == fused[1][1] == fused[2][1]


def test_weights_read_as_written_decimals():
    assert exact(0.5) == F(1, 2) and exact(0.1) == F(1, 10) and exact(60) == F(60)


def _legs():
    return {
        "A/a1.ndjson": [
            {"qid": "q1", "leg50": ["s1", "s2", "s3"]},
            {"qid": "q2", "leg50": ["s4", "s5", "s6"]},
        ],
        "A/a0.ndjson": [
            {"qid": "q2", "ranked": [{"name": "s6"}, {"name": "s4"}]},
            {"qid": "q1", "ranked": [{"name": "s3"}, {"name": "s2"}]},
        ],
    }


LISTS = [
    {"rows": "A/a1.ndjson", "ranked": "/leg50", "weight": 1.0},
    {"rows": "A/a0.ndjson", "ranked": "/ranked", "item": "/name", "weight": 0.5},
]


def test_counts_rows_whose_rebuilt_top_n_equals_the_stored_one(kit):
    files = _legs()
    # q1: s1 1/61; s2 1/62 + .5/62; s3 1/63 + .5/61 -> s2 (0.02419), s3 (0.02407), s1 (0.01639).
    # q2: s4 1/61 + .5/62; s5 1/62; s6 1/63 + .5/61 -> s4, s6, s5. The stored q2 list is wrong.
    files["A/a2.ndjson"] = [{"qid": "q1", "top10": ["s2", "s3", "s1"]}, {"qid": "q2", "top10": ["s4", "s5", "s6"]}]
    spec = {"ctrl": {"recount": "rrf", "rows": "A/a2.ndjson", "stored": "/top10", "lists": LISTS, "k": 60, "n": 3}}
    value = evaluate(spec, kit(files))["ctrl"]
    assert (value.value, value.of) == (1, 2)
    assert value.outcomes == {"q1": True, "q2": False}
    spec["ctrl"]["n"] = 1
    assert evaluate(spec, kit(files))["ctrl"].value == 2


def test_depth_cuts_a_list_before_fusing(kit):
    files = _legs()
    files["A/a2.ndjson"] = [{"qid": "q1", "top10": ["s3", "s2"]}, {"qid": "q2", "top10": ["s4", "s6"]}]
    lists = [{**LISTS[0], "depth": 1, "weight": 0.5}, {**LISTS[1], "weight": 1}]
    spec = {"ctrl": {"recount": "rrf", "rows": "A/a2.ndjson", "stored": "/top10", "lists": lists, "n": 2}}
    value = evaluate(spec, kit(files))["ctrl"]
    # Depth 1 keeps only the head of leg50. q1: s3 1/61, s2 1/62, s1 .5/61 -> s3, s2.
    # q2: s4 .5/61 + 1/62, s6 1/61 -> s4, s6.
    assert value.outcomes == {"q1": True, "q2": True}


def test_tie_across_counts_rows_where_a_tie_spans_the_rank(kit):
    files = {
        "x.ndjson": [{"qid": "q1", "r": ["a", "b"]}, {"qid": "q2", "r": ["c", "d"]}],
        "y.ndjson": [{"qid": "q1", "r": ["b", "a"]}, {"qid": "q2", "r": ["c", "d"]}],
    }
    lists = [{"rows": "x.ndjson", "ranked": "/r", "weight": 1}, {"rows": "y.ndjson", "ranked": "/r", "weight": 1}]
    spec = {"ties": {"recount": "rrf", "rows": "x.ndjson", "lists": lists, "count": "tie_across", "at": 1}}
    value = evaluate(spec, kit(files))["ties"]
    assert value.outcomes == {"q1": True, "q2": False}


def test_a_row_missing_from_an_input_list_is_an_error(kit):
    files = _legs()
    files["A/a0.ndjson"] = files["A/a0.ndjson"][:1]
    files["A/a2.ndjson"] = [{"qid": "q1", "top10": []}]
    spec = {"ctrl": {"recount": "rrf", "rows": "A/a2.ndjson", "stored": "/top10", "lists": LISTS}}
    with pytest.raises(FigureError) as caught:
        evaluate(spec, kit(files))
    assert str(caught.value) == "figure 'ctrl' cannot be computed: row 'q1' of A/a2.ndjson has no row in lists[1] (A/a0.ndjson)"
