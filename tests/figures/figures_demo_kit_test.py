"""The demo kit end to end (issue 4's acceptance): `kitbuild demo` builds the synthetic bench into a
kit whose README prints the reference kit's figures, recounted from its own row files; verify
passes on it, and names the figure when one row outcome is edited."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from kitbuild.commands.demo import DemoResult
from kitbuild.commands.verify import verify

from figkit import cover_tracks, edit_rows

A0 = "longmemeval-2026-10/a0/run/rows.ndjson"
A2 = "longmemeval-2026-10/w7/rows/a2/a2.ndjson"

# Printed the way the reference README prints them (shared/reference/rrf-data-kit-README.md).
README_LINES = [
    "## Where each figure on the page comes from",
    "| BM25 alone: 400 of 470 (every@5); 485 of 500 (any@5) | `longmemeval-2026-10/a0/run/rows.ndjson` | `search`, `gold`, `abstention`, `score` |",
    "| nomic-embed-text alone: 403 of 470 | ",
    "| The fusion with a registered test: 409 of 470; +9 (23 questions only the fusion hit, 14 only BM25), p 0.1877, no material difference | ",
    "| The fusion deep-recall ships, untested: 417 of 470; 487 of 500 (any@5) | `longmemeval-2026-10/a5/run/rows.ndjson` | `top10`, `score` |",
    "| The learned-sparse list alone: 416 of 470 | ",
    "| The three fusions: 417, 422 and 425 of 470 | ",
    "| The integrity checks: the fusion code rebuilt A2's stored top 10 on 500 of 500 questions | ",
    "| Texts longer than 510 tokens: 54,802 of 125,667, encoded in 510-token windows | ",
    "## every@5 by question type, and the BGE-small fusion's net gain over BM25 alone",
    # The columns by their labels (kit.yaml's 'label'), not their ids.
    "| type | rows | BM25 (A0) | nomic-embed-text (A1) | registered fusion (A2) | BGE-small fusion (A5) | A5's net gain over A0 |",
]


@pytest.fixture(scope="module")
def result(demo_result: DemoResult) -> DemoResult:
    return demo_result


@pytest.fixture
def copy(result: DemoResult, tmp_path: Path) -> Path:
    return Path(shutil.copytree(result.build.out, tmp_path / "kit"))


def test_the_demo_builds_and_verifies(result: DemoResult) -> None:
    assert result.exit_code == 0 and result.verify.findings == []
    assert "✓ Figures: 54 figures recounted from the kit's files: 54 as provenance.json stores them; 34 checks (agrees_with, equals): 34 hold" in result.text
    assert "  54 figures counted from the kit's own files, printed in its README" in result.text


def test_the_readme_prints_the_reference_figures(result: DemoResult) -> None:
    readme = (result.build.out / "README.md").read_text()
    lines = readme.splitlines()
    for expected in README_LINES:
        assert any(line.startswith(expected) for line in lines), expected
    # The table by question type adds up to the page's counts.
    rows = [line.split(" | ") for line in lines if line.startswith("| ") and line.count(" of ") == 4]
    assert [row[0][2:] for row in rows] == [
        "single-session-user", "single-session-assistant", "single-session-preference", "multi-session", "knowledge-update", "temporal-reasoning",
    ]
    hits = [sum(int(row[column].split(" of ")[0]) for row in rows) for column in (2, 3, 4, 5)]
    assert hits == [400, 403, 409, 417]
    assert sum(int(row[6].rstrip(" |")) for row in rows) == 17


def test_one_edited_row_outcome_is_named_by_verify(result: DemoResult, copy: Path) -> None:
    path = copy / A0
    first = orjson.loads(path.read_bytes().split(b"\n", 1)[0])
    assert first["abstention"] is False
    edit_rows(path, first["qid"], lambda row: row["score"].update({"all@5": 1 - row["score"]["all@5"]}))
    cover_tracks(copy)
    report = verify(copy)
    was = "true" if first["score"]["all@5"] else "false"
    now = "false" if first["score"]["all@5"] else "true"
    assert [str(f) for f in report.check("figures").findings] == [
        f"KB704 provenance.json: figure 'bm25_every5': agrees_with /score/all@5 does not hold: 1 row differs: {first['qid']} (recount {was}, stored {now})"
    ]
    assert report.exit_code == 1


def test_a_row_file_changed_after_the_pass_read_it_is_named_not_recounted(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The figures read their row files a second time, after the pass that hashed them: a server
    # can serve a hosted kit's row file one way to the pass and another way to the figures. Here
    # the file changes in between, as such a server would make it; the recount must not use it.
    import kitbuild.commands.verify as verify_command

    path = copy / A0
    first = orjson.loads(path.read_bytes().split(b"\n", 1)[0])
    observe_kit = verify_command.observe_kit

    def then_changed(*args: object, **kwargs: object) -> object:
        observed = observe_kit(*args, **kwargs)  # type: ignore[arg-type]
        edit_rows(path, first["qid"], lambda row: row["score"].update({"all@5": 1 - row["score"]["all@5"]}))
        return observed

    monkeypatch.setattr(verify_command, "observe_kit", then_changed)
    findings = verify(copy).check("figures").findings
    changed = f"{A0}: changed while the kit was checked (its sha256 was "
    assert {f.code for f in findings} == {"KB702", "KB707"}, [str(f) for f in findings]
    assert changed in findings[0].message  # the figures that read it, and those computed from them
    table = [f.message for f in findings if f.code == "KB707"]
    assert table and all(m.startswith("figures_table[") and f"]: names {changed}" in m for m in table), table


def test_one_edited_fused_list_is_named_with_both_counts(result: DemoResult, copy: Path) -> None:
    # Empty the stored top 10 of a question A2 hit: A2 recounts 408, the pages and stored counts say 409.
    a2 = result.build.figures["a2_every5"]
    qid = next(key for key, hit in a2.outcomes.items() if hit)
    edit_rows(copy / A2, qid, lambda row: row.update(top10=[]))
    cover_tracks(copy)
    messages = [str(f) for f in verify(copy).check("figures").findings]
    assert "KB701 provenance.json: figure 'a2_every5': provenance.json stores 409 of 470; the kit's files recount 408 of 470" in messages
    assert any(m.startswith("KB706 README.md:") and "prints figure 'a2_every5' as provenance.json stores it, 409 of 470; the kit's files recount 408 of 470" in m for m in messages)
    assert "KB705 provenance.json: figure 'a2_every5_registered': equals a2_every5 does not hold: a2_every5_registered is 409 of 470, a2_every5 is 408 of 470" in messages
    assert "KB701 provenance.json: figure 'a2_rebuilt': provenance.json stores 500 of 500; the kit's files recount 499 of 500" in messages


def test_a_row_file_whose_zip_data_is_damaged_is_a_finding_not_a_crash(result: DemoResult, tmp_path: Path) -> None:
    # The figures read their row files through the kit reader and let its error through: a
    # zip member whose data could not be read stopped verify with "the system refused to read
    # or write a file" instead of a KB111 and the figures that cannot be recounted.
    import struct
    import zipfile

    from kitbuild.commands.publish import publish

    archive = publish(result.build.out, "zip", tmp_path / "k.zip").archive
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(A0))
    names, extra = struct.unpack_from("<HH", data, info.header_offset + 26)
    data[info.header_offset + 30 + names + extra + info.compress_size // 2] ^= 0x55
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(data)
    report = verify(damaged, jobs=1)
    codes = {(f.code, f.path) for f in report.findings}
    assert ("KB111", A0) in codes and ("KB702", "provenance.json") in codes, codes
