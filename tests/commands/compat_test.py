"""Kits built by an earlier version keep verifying: a kit is published once and read for years.

tests/golden/kits/ holds kits exactly as an earlier kitbuild wrote them (never rebuilt), and the
archives an earlier `kitbuild publish` wrote of some of them: each must verify clean with this
one, an archive as the kit it holds, and a byte changed in any of a kit's files must still be
caught. tests/golden/README.md says how each was made.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kitbuild import verify

KITS = Path(__file__).resolve().parents[1] / "golden" / "kits"
# A kit of hundreds of records (many-docs-0.3.0: 201 documents, for croissant.json's bound) has
# every one of its own files changed, and a spread of its records: one verify per changed file.
RECORDS_CHANGED = 12
FOLDERS = sorted(p.name for p in KITS.iterdir() if p.is_dir())
ARCHIVES = sorted(p.name for p in KITS.iterdir() if p.name.endswith((".tar.gz", ".zip")))


def _to_change(kit: Path) -> list[Path]:
    files = sorted(p for p in kit.rglob("*") if p.is_file())
    own = [p for p in files if p.parent == kit]
    records = [p for p in files if p.parent != kit]
    step = max(1, len(records) // RECORDS_CHANGED)
    return own + records[::step] + records[-1:]


@pytest.mark.parametrize("kit", FOLDERS + ARCHIVES)
def test_a_kit_an_earlier_version_built_verifies_clean(kit: str) -> None:
    report = verify(KITS / kit, jobs=1)
    assert report.ok, [str(f) for f in report.findings]


@pytest.mark.parametrize("archive", ARCHIVES)
def test_an_earlier_archive_holds_the_kit_beside_it(archive: str) -> None:
    folder = archive.removesuffix(".tar.gz").removesuffix(".zip")
    assert folder in FOLDERS
    assert verify(KITS / archive, jobs=1).digest == verify(KITS / folder, jobs=1).digest


@pytest.mark.parametrize("kit", FOLDERS)
def test_a_change_to_an_earlier_kit_is_still_caught(kit: str, tmp_path: Path) -> None:
    copy = tmp_path / kit
    shutil.copytree(KITS / kit, copy)
    for path in _to_change(copy):
        data = path.read_bytes()
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]) if data else b"x")
        assert not verify(copy, jobs=1).ok, f"a changed byte in {path.relative_to(copy)} was not caught"
        path.write_bytes(data)


def test_a_kit_of_0_3_0_that_lists_croissant_json_must_still_hold_it(tmp_path: Path) -> None:
    # 0.3.0 wrote croissant.json only from part way through its life: its earlier kits need
    # none, but one whose index.json lists it has lost a file without it.
    copy = tmp_path / "kit"
    shutil.copytree(KITS / "early-tables-0.3.0", copy)
    (copy / "croissant.json").unlink()
    assert {f.code for f in verify(copy, jobs=1).findings} == {"KB102", "KB605"}


def test_a_croissant_json_added_to_a_kit_of_0_3_0_that_had_none_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "kit"
    shutil.copytree(KITS / "prose-0.3.0", copy)
    shutil.copy(KITS / "early-tables-0.3.0" / "croissant.json", copy / "croissant.json")
    assert {f.code for f in verify(copy, jobs=1).findings} == {"KB101"}
