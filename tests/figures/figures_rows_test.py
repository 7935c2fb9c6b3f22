"""every_at_k, any_at_k, count and read: hand-worked rows, skip, agrees_with, equals, and the errors."""

from __future__ import annotations

import pytest

from kitbuild.figures import FigureError, evaluate, failed_checks, require_checks
from kitbuild.figures.errors import FigureCheckError

ROWS = [
    # every@2: q1 yes (both gold in top 2); q2 no (s9 at rank 3); q3 skipped; q4 yes (empty gold).
    # any@2: q1 yes; q2 yes (s4); q3 no; q4 no (nothing to find).
    {"qid": "q1", "search": ["s1", "s2", "s3"], "gold": ["s2", "s1"], "abstention": False, "type": "multi", "score": {"all@2": True}},
    {"qid": "q2", "search": ["s4", "s5", "s9"], "gold": ["s4", "s9"], "abstention": False, "type": "multi", "score": {"all@2": True}},
    {"qid": "q3", "search": ["s7", "s8"], "gold": ["s1"], "abstention": True, "type": "single", "score": {"all@2": None}},
    {"qid": "q4", "search": ["s1"], "gold": [], "abstention": False, "type": "single", "score": {"all@2": True}},
]


def every(**extra):
    return {"recount": "every_at_k", "rows": "L/rows.ndjson", "ranked": "/search", "gold": "/gold", "k": 2, **extra}


def test_every_and_any_with_skip(kit):
    spec = {
        "every2": every(skip="/abstention"),
        "any2": {**every(), "recount": "any_at_k"},
    }
    values = evaluate(spec, kit({"L/rows.ndjson": ROWS}))
    assert (values["every2"].value, values["every2"].of) == (2, 3)
    assert values["every2"].outcomes == {"q1": True, "q2": False, "q4": True}
    assert (values["any2"].value, values["any2"].of) == (2, 4)
    assert values["any2"].outcomes == {"q1": True, "q2": True, "q3": False, "q4": False}


def test_k_is_the_depth_looked_at(kit):
    values = evaluate({"every3": every(k=3, skip="/abstention")}, kit({"L/rows.ndjson": ROWS}))
    assert values["every3"].value == 3


def test_ranked_entries_that_are_objects_use_item(kit):
    rows = [{"qid": 7, "search": [{"session": "a"}, {"session": "b"}], "gold": ["b"]}]
    values = evaluate({"e": every(item="/session", k=2)}, kit({"L/rows.ndjson": rows}))
    assert values["e"].outcomes == {"7": True}


def test_agrees_with_holds_on_skipped_rows_left_out(kit):
    rows = [dict(r) for r in ROWS]
    rows[1]["score"] = {"all@2": False}
    values = evaluate({"e": every(skip="/abstention", agrees_with="/score/all@2")}, kit({"L/rows.ndjson": rows}))
    assert failed_checks(values) == []
    require_checks(values)


def test_agrees_with_names_the_first_rows_that_differ(kit):
    # The stored outcome says q2 hit; the recount says it did not.
    values = evaluate({"e": every(skip="/abstention", agrees_with="/score/all@2")}, kit({"L/rows.ndjson": ROWS}))
    [check] = failed_checks(values)
    assert check.message() == "e: agrees_with /score/all@2 does not hold: 1 row differs: q2 (recount false, stored true)"
    with pytest.raises(FigureCheckError) as caught:
        require_checks(values)
    assert caught.value.exit_code == 1
    assert str(caught.value) == "1 figure check did not hold:\n  e: agrees_with /score/all@2 does not hold: 1 row differs: q2 (recount false, stored true)"


def test_agrees_with_lists_five_rows_then_how_many_more(kit):
    rows = [{"qid": f"q{i}", "r": ["a"], "g": ["b"], "stored": 1} for i in range(8)]
    spec = {"e": {"recount": "every_at_k", "rows": "r.ndjson", "ranked": "/r", "gold": "/g", "k": 1, "agrees_with": "/stored"}}
    [check] = failed_checks(evaluate(spec, kit({"r.ndjson": rows})))
    assert check.message() == (
        "e: agrees_with /stored does not hold: 8 rows differ: q0 (recount false, stored true); q1 (recount false, stored true); "
        "q2 (recount false, stored true); q3 (recount false, stored true); q4 (recount false, stored true); and 3 more"
    )


def test_count_matches_fields_in_ndjson_and_tsv(kit):
    tsv = "qid\ttype\tA2:all@5\n" "q1\tmulti\t1\n" "q2\tmulti\t0\n" "q3\tsingle\t1\n"
    spec = {
        "multi": {"recount": "count", "rows": "L/rows.ndjson", "where": {"/type": "multi"}},
        "multi_hits": {"recount": "count", "rows": "L/pq.tsv", "where": {"/type": "multi", "/A2:all@5": 1}},
        "tsv_agrees": {"recount": "count", "rows": "L/pq.tsv", "where": {"/type": "multi"}, "agrees_with": "/A2:all@5"},
    }
    values = evaluate(spec, kit({"L/rows.ndjson": ROWS, "L/pq.tsv": tsv}))
    assert (values["multi"].value, values["multi"].of) == (2, 4)
    assert (values["multi_hits"].value, values["multi_hits"].of) == (1, 3)
    [check] = failed_checks(values)
    assert check.message() == "tsv_agrees: agrees_with /A2:all@5 does not hold: 2 rows differ: q2 (recount true, stored false); q3 (recount false, stored true)"


def test_count_does_not_confuse_true_with_one(kit):
    rows = [{"qid": "a", "v": 1}, {"qid": "b", "v": True}, {"qid": "c", "v": "1"}]
    values = evaluate({"n": {"recount": "count", "rows": "r.ndjson", "where": {"/v": 1}}}, kit({"r.ndjson": rows}))
    assert values["n"].outcomes == {"a": True, "b": False, "c": False}


def test_read_from_json_with_of_and_equals(kit):
    files = {"L/rows.ndjson": ROWS, "N/rescore.json": {"counts": {"answerable": {"all@2": 2, "n": 3}}}}
    spec = {
        "stored": {"recount": "read", "file": "N/rescore.json", "pointer": "/counts/answerable/all@2", "of": "/counts/answerable/n", "equals": "recount"},
        "recount": every(skip="/abstention"),
    }
    values = evaluate(spec, kit(files))
    assert (values["stored"].text(), values["stored"].of_text()) == ("2", "3")
    assert failed_checks(values) == []


def test_equals_that_does_not_hold_names_both_values(kit):
    files = {"L/rows.ndjson": ROWS, "s.json": {"n": 3}}
    spec = {"stored": {"recount": "read", "file": "s.json", "pointer": "/n", "of": 3, "equals": "recount"}, "recount": every(skip="/abstention")}
    [check] = failed_checks(evaluate(spec, kit(files)))
    assert check.message() == "stored: equals recount does not hold: stored is 3 of 3, recount is 2 of 3"


def test_equals_allows_a_stored_float_for_an_exact_p(kit):
    files = {"r.ndjson": [{"qid": "a", "x": True, "y": False}], "f.json": {"p": 1.0, "q": 0.18774155899882317}}
    spec = {
        "x": {"recount": "count", "rows": "r.ndjson", "where": {"/x": True}},
        "y": {"recount": "count", "rows": "r.ndjson", "where": {"/y": True}},
        "t": {"recount": "mcnemar_exact", "a": "x", "b": "y"},
        "stored_p": {"recount": "read", "file": "f.json", "pointer": "/p", "equals": "t"},
    }
    assert failed_checks(evaluate(spec, kit(files))) == []


def test_read_from_the_row_with_a_key(kit):
    spec = {"t": {"recount": "read", "file": "L/rows.ndjson", "row": "q2", "pointer": "/type"}}
    assert evaluate(spec, kit({"L/rows.ndjson": ROWS}))["t"].text() == "multi"


@pytest.mark.parametrize(
    "spec,files,message",
    [
        (
            {"recount": "read", "file": "N/missing.json", "pointer": "/n"},
            {},
            "N/missing.json: no such file in the kit",
        ),
        (
            {"recount": "read", "file": "s.json", "pointer": "/counts/all@5"},
            {"s.json": {"counts": {"any@5": 1}}},
            "s.json: /counts/all@5 does not resolve: no key 'all@5' at /counts",
        ),
        (
            {"recount": "read", "file": "s.json", "pointer": "/counts"},
            {"s.json": {"counts": {"any@5": 1}}},
            "s.json: /counts is an object; a figure is a number, a string or true/false",
        ),
        (
            {"recount": "read", "file": "s.json", "pointer": "/n", "of": "/d"},
            {"s.json": {"n": 1, "d": "many"}},
            "s.json: /d (the 'of') is a string, not a whole number",
        ),
        (
            {"recount": "read", "file": "L/rows.ndjson", "row": "q9", "pointer": "/type"},
            {"L/rows.ndjson": ROWS},
            "L/rows.ndjson: no row has /qid = 'q9'",
        ),
        (
            {"recount": "every_at_k", "rows": "L/rows.ndjson", "ranked": "/top10", "gold": "/gold", "k": 5},
            {"L/rows.ndjson": ROWS},
            "L/rows.ndjson:1: /top10 does not resolve: no key 'top10' at the top level",
        ),
        (
            {"recount": "every_at_k", "rows": "L/rows.ndjson", "ranked": "/type", "gold": "/gold", "k": 5},
            {"L/rows.ndjson": ROWS},
            "L/rows.ndjson:1: /type is a string, not a list",
        ),
        (
            {"recount": "every_at_k", "rows": "L/rows.ndjson", "ranked": "/search", "gold": "/gold", "k": 5, "skip": "/type"},
            {"L/rows.ndjson": ROWS},
            "L/rows.ndjson:1: /type is a string, not true or false",
        ),
        (
            {"recount": "count", "rows": "r.ndjson", "where": {"/v": 1}},
            {"r.ndjson": '{"qid": "a", "v": 1}\n{"qid": "a", "v": 2}\n'},
            "r.ndjson:2: the row key /qid is 'a', as on line 1; each row needs its own key",
        ),
        (
            {"recount": "count", "rows": "r.ndjson", "where": {"/v": 1}},
            {"r.ndjson": '{"qid": "a", "v": 1}\n{"qid": \n'},
            "r.ndjson:2: the line is not valid JSON",
        ),
        (
            {"recount": "count", "rows": "r.tsv", "where": {"/v": 1}},
            {"r.tsv": "qid\tv\na\t1\tx\n"},
            "r.tsv:2: the row has 3 cells; the header has 2 columns",
        ),
        (
            {"recount": "count", "rows": "r.tsv", "where": {"/w": 1}},
            {"r.tsv": "qid\tv\na\t1\n"},
            "r.tsv: no column 'w'",
        ),
        (
            {"recount": "count", "rows": "r.txt", "where": {"/w": 1}},
            {"r.txt": "x"},
            "r.txt: kitbuild reads .json, .ndjson, .jsonl and .tsv files, and cannot tell this file's format from its name",
        ),
    ],
)
def test_a_figure_that_cannot_be_computed_names_itself_and_the_reason(kit, spec, files, message):
    with pytest.raises(FigureError) as caught:
        evaluate({"fig": spec}, kit(files))
    assert caught.value.exit_code == 1
    assert str(caught.value) == f"figure 'fig' cannot be computed: {message}"


def test_collecting_errors_computes_the_rest(kit):
    spec = {
        "gone": {"recount": "read", "file": "gone.json", "pointer": "/n"},
        "fine": every(),
        "ok": {"recount": "read", "file": "s.json", "pointer": "/n", "equals": "gone"},
        "pair": {"recount": "mcnemar_exact", "a": "gone", "b": "fine"},
    }
    errors: list = []
    values = evaluate(spec, kit({"L/rows.ndjson": ROWS, "s.json": {"n": 1}}), errors=errors)
    assert list(values) == ["fine", "ok"]
    assert [str(e) for e in errors] == [
        "figure 'gone' cannot be computed: gone.json: no such file in the kit",
        "figure 'pair' cannot be computed: it is computed from 'gone', which cannot be computed",
    ]


def test_equals_may_name_a_part_of_a_figure(kit):
    files = {"r.ndjson": [{"qid": "a", "x": True, "y": False}, {"qid": "b", "x": True, "y": False}], "f.json": {"only": 2}}
    spec = {
        "x": {"recount": "count", "rows": "r.ndjson", "where": {"/x": True}},
        "y": {"recount": "count", "rows": "r.ndjson", "where": {"/y": True}},
        "t": {"recount": "mcnemar_exact", "a": "x", "b": "y"},
        "stored_only": {"recount": "read", "file": "f.json", "pointer": "/only", "equals": "t.a_only"},
        "stored_gone": {"recount": "read", "file": "f.json", "pointer": "/only", "equals": "t.c_only"},
    }
    [check] = failed_checks(evaluate(spec, kit(files)))
    assert check.message() == "stored_gone: equals t.c_only does not hold: stored_gone is 2, t.c_only is not a part of that figure"
