"""How figures print: formats, views from stored records, the figures table and its checks."""

from __future__ import annotations

import os
from fractions import Fraction as F

import pytest

from kitbuild.figures import (
    FigureError,
    FigureSpecError,
    FigureValue,
    FolderFiles,
    evaluate,
    format_p,
    format_value,
    records,
    render_figures_table,
    render_text,
    table_problems,
    validate_figures_table,
    views,
)


@pytest.mark.parametrize(
    "p,text",
    [
        (F(18774155899882317, 10**17), "0.1877"),
        (0.18774155899882317, "0.1877"),
        (F(1, 20), "0.0500"),
        (F(123445, 10**6), "0.1234"),  # half to even: 1234.45 -> 1234
        (F(123455, 10**6), "0.1235"),  # and 1234.55 -> 1235
        (F(1, 10**5), "<0.0001"),
        (F(1, 10**4), "0.0001"),
        (1, "1"),
        (F(2), "1"),
    ],
)
def test_p_values_print_as_the_reference_does(p, text):
    assert format_p(p) == text


@pytest.mark.parametrize(
    "value,fmt,text",
    [
        (54802, "count", "54,802"),
        (54802, "plain", "54802"),
        (9, "signed", "+9"),
        (-3, "signed", "-3"),
        (0, "signed", "0"),
        (0.5, "count", "0.5"),
        (470.0, "count", "470"),
        ("cpu", "count", "cpu"),
        (True, "count", "true"),
        (F(409), "count", "409"),
    ],
)
def test_formats(value, fmt, text):
    assert format_value(value, fmt) == text


SPEC = {
    "a2_every5": {"recount": "count", "rows": "r.ndjson", "where": {"/a2": True}},
    "bm25_every5": {"recount": "count", "rows": "r.ndjson", "where": {"/a0": True}},
    "fusion_vs_bm25": {"recount": "mcnemar_exact", "a": "a2_every5", "b": "bm25_every5"},
    "by_type": {"recount": "group_by", "figures": ["a2_every5", "fusion_vs_bm25"], "by": "/type"},
}
ROWS = [
    {"qid": "q1", "a2": True, "a0": False, "type": "multi-session"},
    {"qid": "q2", "a2": True, "a0": True, "type": "knowledge-update"},
    {"qid": "q3", "a2": False, "a0": False, "type": "multi-session"},
]


@pytest.fixture
def figures(kit):
    return views(records(evaluate(SPEC, kit({"r.ndjson": ROWS}))))


def test_page_text_prints_values_denominators_and_parts(figures):
    text = (
        "The fusion: {{ a2_every5 }} of {{ a2_every5.of }}; {{ fusion_vs_bm25.diff }} "
        "({{ fusion_vs_bm25.a_only }} only the fusion hit, {{ fusion_vs_bm25.b_only }} only BM25), p {{ fusion_vs_bm25 }}"
    )
    assert render_text(text, figures) == "The fusion: 2 of 3; +1 (1 only the fusion hit, 0 only BM25), p 1"


def test_a_group_table_walks_in_order(figures):
    text = "{% for g in by_type.rows %}{{ g.label }}: {{ g.a2_every5 }} of {{ g.a2_every5.of }}, {{ g.fusion_vs_bm25 }}\n{% endfor %}"
    assert render_text(text, figures) == "knowledge-update: 1 of 1, 0\nmulti-session: 1 of 2, +1\n"
    assert render_text('{{ by_type["multi-session"].a2_every5 }}', figures) == "1"


def test_views_from_stored_records_print_what_the_values_print(kit):
    values = evaluate(SPEC, kit({"r.ndjson": ROWS}))
    stored = views(records(values))
    for name, value in values.items():
        assert str(stored[name]) == value.text()


def test_unknown_names_and_bad_syntax_are_errors(figures):
    with pytest.raises(FigureSpecError) as caught:
        render_text("{{ a3_every5 }}", figures, "readme.figures_table[0].page")
    assert str(caught.value) == "readme.figures_table[0].page: names 'a3_every5', which is not a figure; did you mean 'a2_every5'?"
    with pytest.raises(FigureSpecError, match="no attribute 'of'|'of'"):
        render_text("{{ fusion_vs_bm25.diff.of }}", figures)
    with pytest.raises(FigureSpecError, match="does not parse"):
        render_text("{{ a2_every5 ", figures)


def test_the_sandbox_keeps_templates_out_of_python(figures):
    with pytest.raises(FigureSpecError):
        render_text("{{ a2_every5._record }}", figures)
    with pytest.raises(FigureSpecError):
        render_text("{{ a2_every5.__class__.__mro__ }}", figures)


def test_record_shape():
    value = FigureValue(F(1, 8), format="p", of=470, parts={"diff": FigureValue(9, format="signed")})
    assert value.record() == {"value": 0.125, "text": "0.1250", "of": {"value": 470, "text": "470"}, "parts": {"diff": {"value": 9, "text": "+9"}}}


TABLE = [
    {"page": "BM25 alone: {{ bm25_every5 }} of {{ bm25_every5.of }}", "files": ["r.ndjson"], "fields": ["a0", "type"]},
    {"page": "Stored: p", "files": ["f.json", "pq.tsv", "gone.json"], "fields": ["primary[].p", "counts.all@5", "A2:all@5", "/primary/0/words", "p_holm"]},
]


def test_figures_table_renders_each_page_cell(figures):
    validate_figures_table(TABLE)
    rendered = render_figures_table(TABLE, figures)
    assert rendered[0] == {"page": "BM25 alone: 1 of 3", "files": ["r.ndjson"], "fields": ["a0", "type"]}


def test_figures_table_problems_name_missing_files_and_fields(kit):
    files = {
        "r.ndjson": ROWS,
        "f.json": {"primary": [{"p": 0.1, "words": "no material difference"}], "counts": {"all@5": 1}},
        "pq.tsv": "qid\tA2:all@5\nq1\t1\n",
    }
    problems = table_problems(TABLE, kit(files))
    assert [p.message() for p in problems] == [
        "readme.figures_table[1]: names gone.json, which is not in the kit",
        "readme.figures_table[1]: names the field 'p_holm', which none of its files has (f.json, pq.tsv)",
    ]
    assert [(p.row, p.kind, p.name) for p in problems] == [(1, "file", "gone.json"), (1, "field", "p_holm")]


def test_figures_table_schema():
    with pytest.raises(FigureSpecError) as caught:
        validate_figures_table([{"page": "x", "files": []}])
    assert str(caught.value) == "kit.yaml: readme.figures_table[0].files: must not be empty"


def test_folder_files_stay_inside_the_kit(tmp_path):
    (tmp_path / "kit" / "L").mkdir(parents=True)
    (tmp_path / "kit" / "L" / "f.json").write_text('{"n": 5}')
    (tmp_path / "secret.json").write_text('{"n": 1}')
    os.symlink(tmp_path / "secret.json", tmp_path / "kit" / "L" / "link.json")
    files = FolderFiles(tmp_path / "kit")
    spec = {"n": {"recount": "read", "file": "L/f.json", "pointer": "/n"}}
    assert evaluate(spec, files)["n"].value == 5
    expected = {
        "L/link.json": "L/link.json: no such file in the kit",
        "../secret.json": "'../secret.json' is not a kit path (a kit path has no empty, '.' or '..' parts)",
        "L/../../secret.json": "'L/../../secret.json' is not a kit path (a kit path has no empty, '.' or '..' parts)",
    }
    for path, reason in expected.items():
        with pytest.raises(FigureError) as caught:
            evaluate({"n": {"recount": "read", "file": path, "pointer": "/n"}}, files)
        assert str(caught.value) == f"figure 'n' cannot be computed: {reason}"
