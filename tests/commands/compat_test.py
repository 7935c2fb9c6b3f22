"""Kits built by an earlier version keep verifying: a kit is published once and read for years.

tests/golden/kits/ holds kits exactly as an earlier kitbuild wrote them (never rebuilt): each
must verify clean with this one, and a byte changed in any of its files must still be caught.
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


def _to_change(kit: Path) -> list[Path]:
    files = sorted(p for p in kit.rglob("*") if p.is_file())
    own = [p for p in files if p.parent == kit]
    records = [p for p in files if p.parent != kit]
    step = max(1, len(records) // RECORDS_CHANGED)
    return own + records[::step] + records[-1:]


@pytest.mark.parametrize("kit", sorted(p.name for p in KITS.iterdir()))
def test_a_kit_an_earlier_version_built_verifies_clean(kit: str) -> None:
    report = verify(KITS / kit, jobs=1)
    assert report.ok, [str(f) for f in report.findings]


@pytest.mark.parametrize("kit", sorted(p.name for p in KITS.iterdir()))
def test_a_change_to_an_earlier_kit_is_still_caught(kit: str, tmp_path: Path) -> None:
    copy = tmp_path / kit
    shutil.copytree(KITS / kit, copy)
    for path in _to_change(copy):
        data = path.read_bytes()
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]) if data else b"x")
        assert not verify(copy, jobs=1).ok, f"a changed byte in {path.relative_to(copy)} was not caught"
        path.write_bytes(data)
