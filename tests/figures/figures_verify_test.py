"""kitbuild verify recounts every figure from the kit alone (issue 4): each KB7xx code is produced
here, from a kit built with figures and then edited, its tracks covered (index.json, SHA256SUMS
and the pages made to match), as a careful tamperer would."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

import orjson
import pytest

from kitbuild import build
from kitbuild.commands.verify import verify
from kitbuild.figures import RecordFiles
from kitbuild.figures.verify import check_figures
from kitbuild.findings import CODES
from kitbuild.jsonfile import dump_json
from kitbuild.verify_report import verify_text

from figkit import ROWS, SUMMARY, TSV, cover_tracks, edit_rows, write_bench


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("figure-bench")
    build(write_bench(root), jobs=1)
    return root / "kit"


@pytest.fixture
def copy(kit: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(kit, tmp_path / "kit"))


def _provenance(kit: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = kit / "provenance.json"
    document = orjson.loads(path.read_bytes())
    change(document)
    path.write_bytes(dump_json(document))


def _figure_lines(kit: Path) -> list[str]:
    return [str(f) for f in verify(kit).check("figures").findings]


def test_a_fresh_kit_with_figures_verifies(kit: Path) -> None:
    report = verify(kit)
    assert report.findings == [] and report.exit_code == 0
    assert report.check("figures").figures == [
        "6 figures recounted from the kit's files: 6 as provenance.json stores them; 2 checks (agrees_with, equals): 2 hold",
        "figures table: 2 rows naming 3 files and 5 fields: each is in the kit",
    ]
    assert "✓ Figures: 6 figures recounted" in verify_text(report)


def test_an_edited_row_outcome_is_named(copy: Path) -> None:
    edit_rows(copy / ROWS, "q2", lambda row: row["score"].update({"all@5": 1}))
    cover_tracks(copy)
    report = verify(copy)
    assert [str(f) for f in report.findings] == [
        "KB704 provenance.json: figure 'hits': agrees_with /score/all@5 does not hold: 1 row differs: q2 (recount false, stored true)"
    ]
    assert report.exit_code == 1


def test_an_edited_ranked_list_is_named_with_both_values_and_where_the_page_prints_it(copy: Path) -> None:
    # q6's only gold session leaves its list: the recount drops to 2; the pages still print 3.
    edit_rows(copy / ROWS, "q6", lambda row: row.update(search=["s9"], score={"all@5": 0}))
    cover_tracks(copy)
    lines = _figure_lines(copy)
    assert "KB701 provenance.json: figure 'hits': provenance.json stores 3 of 5; the kit's files recount 2 of 5" in lines
    assert "KB706 README.md:20: prints figure 'hits' as provenance.json stores it, 3 of 5; the kit's files recount 2 of 5" in lines
    assert "KB705 provenance.json: figure 'stored_hits': equals hits does not hold: stored_hits is 3 of 5, hits is 2 of 5" in lines
    assert any(line.startswith("KB701 provenance.json: figure 'by_type' (its part a.hits): provenance.json stores 2 of 3; the kit's files recount 1 of 3") for line in lines)


def _stored(kit: Path, name: str, **record: Any) -> None:
    _provenance(kit, lambda d: d["figures"][name].update(record))


def _spec(kit: Path, name: str, **spec: Any) -> None:
    _provenance(kit, lambda d: d["figures"][name]["spec"].update(spec))


def _table(kit: Path, row: int, **entry: Any) -> None:
    _provenance(kit, lambda d: d["figures_table"][row].update(entry))


def _tsv(kit: Path) -> None:
    path = kit / TSV
    path.write_bytes(path.read_bytes().replace(b"q2\ta\t0", b"q2\ta\t1"))


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "KB701": _tsv,
    "KB702": lambda k: _spec(k, "tsv_hits", where={"/score": "1"}),
    "KB703": lambda k: _spec(k, "tsv_hits", recount="ndcg_at_k"),
    "KB704": lambda k: edit_rows(k / ROWS, "q1", lambda row: row["score"].update({"all@5": 0})),
    "KB705": lambda k: _spec(k, "stored_hits", pointer="/counts/answerable"),
    "KB706": lambda k: _stored(k, "hits", value=4, text="4"),
    "KB707": lambda k: _table(k, 1, files=[SUMMARY, "bench-2026/score/gone.json"]),
    "KB708": lambda k: _table(k, 1, fields=["counts.every@5", "counts.any@5"]),
}

EXPECTED = {
    "KB701": [
        "KB701 provenance.json: figure 'tsv_hits': provenance.json stores 3 of 5; the kit's files recount 4 of 5",
        # Printed by 'How the figures were counted' only, which gives every figure's count.
        "KB706 README.md:36: prints figure 'tsv_hits' as provenance.json stores it, 3 of 5; the kit's files recount 4 of 5",
        "KB706 index.html:59: prints figure 'tsv_hits' as provenance.json stores it, 3 of 5; the kit's files recount 4 of 5",
    ],
    "KB702": ["KB702 provenance.json: figure 'tsv_hits' cannot be computed: bench-2026/score/per-question.tsv: no column 'score'"],
    "KB703": [
        "KB703 provenance.json: the figures cannot be recounted: figures.tsv_hits.recount: no such recount: 'ndcg_at_k'; "
        "did you mean 'any_at_k'? The recounts here are: read, count, every_at_k, any_at_k, group_by, mcnemar_exact, holm, rrf"
    ],
    "KB704": ["KB704 provenance.json: figure 'hits': agrees_with /score/all@5 does not hold: 1 row differs: q1 (recount true, stored false)"],
    "KB705": [
        "KB701 provenance.json: figure 'stored_hits': provenance.json stores 3 of 5; the kit's files recount 5 of 5",
        "KB705 provenance.json: figure 'stored_hits': equals hits does not hold: stored_hits is 5 of 5, hits is 3 of 5",
        "KB706 README.md:21: prints figure 'stored_hits' as provenance.json stores it, 3 of 5; the kit's files recount 5 of 5",
        "KB706 index.html:47: prints figure 'stored_hits' as provenance.json stores it, 3 of 5; the kit's files recount 5 of 5",
    ],
    "KB706": [
        "KB701 provenance.json: figure 'hits': provenance.json stores 4 of 5; the kit's files recount 3 of 5",
        "KB706 README.md:20: prints figure 'hits' as provenance.json stores it, 4 of 5; the kit's files recount 3 of 5",
        "KB706 index.html:46: prints figure 'hits' as provenance.json stores it, 4 of 5; the kit's files recount 3 of 5",
    ],
    "KB707": ["KB707 provenance.json: figures_table[1]: names bench-2026/score/gone.json, which is not in the kit"],
    "KB708": ["KB708 provenance.json: figures_table[1]: names the field 'counts.any@5', which none of its files has (bench-2026/score/summary.json)"],
}


def test_every_figure_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(EXPECTED) == {code for code in CODES if code.startswith("KB7")}


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_each_figure_code_is_produced(code: str, copy: Path) -> None:
    SCENARIOS[code](copy)
    cover_tracks(copy)
    report = verify(copy)
    assert sorted(str(f) for f in report.check("figures").findings) == sorted(EXPECTED[code]), verify_text(report)
    # Tracks covered: nothing but the figures gives the edit away.
    assert {f.code for f in report.findings} == {line.split()[0] for line in EXPECTED[code]}
    assert report.exit_code == 1


def test_verify_skips_the_figures_when_provenance_fails_its_schema(copy: Path) -> None:
    _provenance(copy, lambda d: d["figures"]["hits"].update(text=3))
    cover_tracks(copy)
    report = verify(copy)
    assert report.check("figures").skipped == "provenance.json is missing or does not match its schema"
    assert "KB006" in report.codes()


def test_check_figures_reads_through_any_kit_reader(kit: Path) -> None:
    provenance = orjson.loads((kit / "provenance.json").read_bytes())
    assert check_figures(provenance, RecordFiles(kit)).findings == []
