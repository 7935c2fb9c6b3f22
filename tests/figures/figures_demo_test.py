"""The demo kit's figures: every number the reference README prints, recounted from the synthetic bench.

The bench is read in place through a small reader that maps each kit folder to its source
folder, as the build will after copying (row files have no rule firings, so their bytes are the
same). The reference figures are typed here, once, as the acceptance test of issue 4.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import BinaryIO

import orjson
import pytest
import yaml

from kitbuild.figures import (
    FolderFiles,
    evaluate,
    failed_checks,
    records,
    render_figures_table,
    table_problems,
    validate_figures,
    validate_figures_table,
    views,
)
from kitbuild.synthetic import generate_bench

DEMO = Path(__file__).resolve().parents[2] / "kitbuild" / "synthetic" / "figures.yaml"
L = "longmemeval-2026-10"
N = "learned-sparse-2026-11-07/full-s1"


class BenchFiles:
    """The bench's source folders seen as the kit's folders; ``edits`` replaces a file's bytes."""

    def __init__(self, bench: Path, edits: dict[str, bytes] | None = None) -> None:
        self.roots = {"longmemeval-2026-10": FolderFiles(bench / "lme-2026-10"), "learned-sparse-2026-11-07": FolderFiles(bench / "ls-2026-11-07")}
        self.edits = edits or {}

    def open(self, path: str) -> BinaryIO:
        if path in self.edits:
            return io.BytesIO(self.edits[path])
        head, _, rest = path.partition("/")
        if head not in self.roots:
            raise FileNotFoundError(path)
        return self.roots[head].open(rest)


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    return generate_bench(tmp_path_factory.mktemp("demo")).parent / "bench"


@pytest.fixture(scope="module")
def demo() -> dict:
    block = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    return {"figures": block["figures"], "figures_table": block["readme"]["figures_table"]}


@pytest.fixture(scope="module")
def values(bench, demo):
    return evaluate(demo["figures"], BenchFiles(bench))


def _shown(values, name):
    value = values[name]
    return f"{value.text()} of {value.of_text()}" if value.of is not None else value.text()


REFERENCE = {
    "bm25_every5": "400 of 470",
    "bm25_any5": "485 of 500",
    "nomic_every5": "403 of 470",
    "a2_every5": "409 of 470",
    "fusion_vs_bm25": "0.1877 of 470",
    "a5_every5": "417 of 470",
    "a5_any5": "487 of 500",
    "s1_every5": "416 of 470",
    "f1_every5": "417 of 470",
    "f2_every5": "422 of 470",
    "f3_every5": "425 of 470",
    "a2_rebuilt": "500 of 500",
    "f2_ties_at5": "10 of 500",
    "texts_windowed": "54,802 of 125,667",
}


def test_the_demo_block_is_valid(demo):
    validate_figures(demo["figures"])
    validate_figures_table(demo["figures_table"])


@pytest.mark.parametrize("name,text", REFERENCE.items())
def test_each_reference_figure_recounts(values, name, text):
    assert _shown(values, name) == text


def test_the_registered_comparison(values):
    test = values["fusion_vs_bm25"]
    assert {part: test.parts[part].text() for part in ("diff", "a_only", "b_only")} == {"diff": "+9", "a_only": "23", "b_only": "14"}
    assert str(float(test.value)).startswith("0.18774")


def test_every_fusion_rebuilds_from_its_inputs(values):
    for name in ("a2_rebuilt", "a5_rebuilt", "f1_rebuilt", "f2_rebuilt", "f3_rebuilt"):
        assert (values[name].value, values[name].of) == (500, 500), name


def test_every_stored_count_and_outcome_says_the_same(values):
    assert [check.message() for check in failed_checks(values)] == []
    checked = sum(len(v.checks) for v in values.values())
    assert checked == 34  # 11 agrees_with, 23 equals


def test_the_table_by_question_type(values, bench):
    by_type = values["by_type"]
    table = {group: {name: (cell.value, cell.of) for name, cell in part.parts.items()} for group, part in by_type.parts.items()}
    assert list(table) == [
        "single-session-user",
        "single-session-assistant",
        "single-session-preference",
        "multi-session",
        "knowledge-update",
        "temporal-reasoning",
    ]
    # An independent recount from the stored per-row scores, grouped in plain Python.
    def stored(path):
        rows = [orjson.loads(line) for line in (bench / path).read_bytes().splitlines()]
        hits, sizes = Counter(), Counter()
        for row in rows:
            if not row["abstention"]:
                hits[row["type"]] += row["score"]["all@5"]
                sizes[row["type"]] += 1
        return hits, sizes

    a0_hits, sizes = stored("lme-2026-10/a0/run/rows.ndjson")
    a5_hits, _ = stored("lme-2026-10/a5/run/rows.ndjson")
    for group, row in table.items():
        assert row["bm25_every5"] == (a0_hits[group], sizes[group])
        assert row["a5_every5"] == (a5_hits[group], sizes[group])
        assert row["a5_vs_bm25"] == (a5_hits[group] - a0_hits[group], sizes[group])
    assert sum(row["bm25_every5"][0] for row in table.values()) == 400
    assert sum(row["a2_every5"][1] for row in table.values()) == 470
    assert sum(row["a5_vs_bm25"][0] for row in table.values()) == 17


def test_the_figures_table_renders_and_names_only_what_is_there(values, demo, bench):
    rows = render_figures_table(demo["figures_table"], views(records(values)))
    assert [row["page"] for row in rows[:3]] == [
        "BM25 alone: 400 of 470 (every@5); 485 of 500 (any@5)",
        "nomic-embed-text alone: 403 of 470",
        "The fusion with a registered test: 409 of 470; +9 (23 questions only the fusion hit, 14 only BM25), p 0.1877, no material difference",
    ]
    assert rows[6]["page"] == "The three fusions: 417, 422 and 425 of 470"
    assert table_problems(demo["figures_table"], BenchFiles(bench)) == []


def test_one_edited_row_outcome_is_named(values, demo, bench):
    # Flip one stored all@5 in A0's rows: the recount stands, the stored outcome no longer agrees.
    path = f"{L}/a0/run/rows.ndjson"
    lines = (bench / "lme-2026-10/a0/run/rows.ndjson").read_bytes().splitlines(keepends=True)
    index, row = next((i, orjson.loads(line)) for i, line in enumerate(lines) if not orjson.loads(line)["abstention"])
    row["score"]["all@5"] = 1 - row["score"]["all@5"]
    lines[index] = orjson.dumps(row) + b"\n"
    edited = evaluate(demo["figures"], BenchFiles(bench, {path: b"".join(lines)}))
    recount = "true" if values["bm25_every5"].outcomes[row["qid"]] else "false"
    stored = "false" if recount == "true" else "true"
    assert [check.message() for check in failed_checks(edited)] == [
        f"bm25_every5: agrees_with /score/all@5 does not hold: 1 row differs: {row['qid']} (recount {recount}, stored {stored})"
    ]


def test_one_edited_ranked_list_is_named(values, demo, bench):
    # Empty one fused list in F2's rows: its every@5 recount drops, and the stored counts disagree.
    path = f"{N}/fuse/F2.rows.ndjson"
    lines = (bench / "ls-2026-11-07/full-s1/fuse/F2.rows.ndjson").read_bytes().splitlines(keepends=True)
    index, row = next((i, orjson.loads(line)) for i, line in enumerate(lines) if values["f2_every5"].outcomes.get(orjson.loads(line)["qid"]))
    row["top10"] = []
    lines[index] = orjson.dumps(row) + b"\n"
    edited = evaluate(demo["figures"], BenchFiles(bench, {path: b"".join(lines)}))
    failed = failed_checks(edited)
    assert [(check.figure, check.kind) for check in failed] == [
        ("f2_every5", "agrees_with"),
        ("f2_every5_rescore", "equals"),
        ("f2_every5_fused", "equals"),
        ("f2_vs_a0_p_stored", "equals"),
        ("f2_vs_s1_p_stored", "equals"),
        ("f2_vs_a0_holm_stored", "equals"),
        ("f2_vs_s1_holm_stored", "equals"),
    ]
    assert failed[0].message() == f"f2_every5: agrees_with /score/all@5 does not hold: 1 row differs: {row['qid']} (recount false, stored true)"
    assert failed[1].message() == "f2_every5_rescore: equals f2_every5 does not hold: f2_every5_rescore is 422, f2_every5 is 421 of 470"
    assert _shown(edited, "f2_every5") == "421 of 470"
    assert _shown(edited, "f2_rebuilt") == "499 of 500"
