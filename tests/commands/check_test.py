"""kitbuild check: rebuild, compare byte for byte, scan for private strings, verify (issue 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kitbuild import build
from kitbuild.cli import app
from kitbuild.commands.check import check
from kitbuild.findings import CODES

from .verify_kits import make_bench

LS = "learned-sparse-2026-11-07"
NOTES = f"{LS}/notes.txt"


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A bench and its freshly built kit. Built per test, not copied: records print the bench's
    absolute paths, so a copy elsewhere would be a different (and leaking) bench."""
    root = tmp_path / "b"
    build(make_bench(root), jobs=1)
    return root


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout + result.stderr


def test_a_fresh_kit_passes(bench: Path) -> None:
    report = check(bench / "kit.yaml")
    assert report.findings == [] and report.verify is not None and report.verify.ok
    code, out = cli("check", str(bench / "kit.yaml"))
    assert code == 0
    assert out.startswith(f"kitbuild check {bench / 'kit.yaml'}: the kit is up to date, holds no private string and verifies\n✓ Fresh build: 12 files compared byte for byte\n")


def test_a_changed_source_fails_naming_the_file(bench: Path) -> None:
    (bench / "bench" / "ls-2026-11-07" / "notes.txt").write_bytes(b"scored again\n")
    code, out = cli("check", str(bench / "kit.yaml"))
    assert code == 1
    assert f"  KB801 {NOTES}: differs from the same file of a fresh build\n" in out
    assert "    +scored again" in out
    assert f"To fix: run `kitbuild build {bench / 'kit.yaml'}` and commit the kit it writes." in out


def test_an_edited_kit_fails_naming_the_file(bench: Path) -> None:
    (bench / "kit" / NOTES).write_bytes(b"edited\n")
    report = check(bench / "kit.yaml")
    assert {(f.code, f.path) for f in report.findings} >= {("KB801", NOTES)}
    assert report.verify is not None and not report.verify.ok
    assert report.exit_code == 1


def _extra(bench: Path) -> None:
    (bench / "kit" / "extra.txt").write_bytes(b"x\n")


def _missing(bench: Path) -> None:
    (bench / "kit" / "index.html").unlink()


def _private(bench: Path) -> None:
    # The source's absolute path, pasted into a kit file by hand after the build.
    with open(bench / "kit" / NOTES, "ab") as f:
        f.write(f"\nfrom {bench.resolve() / 'bench' / 'ls-2026-11-07'}/x\n".encode())


def _no_kit(bench: Path) -> None:
    shutil.rmtree(bench / "kit")


SCENARIOS = {"KB801": lambda b: (b / "kit" / NOTES).write_bytes(b"edited\n"), "KB802": _missing, "KB803": _extra, "KB804": _private, "KB805": _no_kit}


def test_every_check_code_has_a_scenario() -> None:
    assert set(SCENARIOS) == {code for code in CODES if code.startswith("KB8")}


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_each_check_code_is_produced(bench: Path, code: str) -> None:
    SCENARIOS[code](bench)
    report = check(bench / "kit.yaml")
    assert code in {f.code for f in report.findings}
    assert report.exit_code == 1


def test_a_private_string_is_named_by_kind_never_printed(bench: Path) -> None:
    _private(bench)
    code, out = cli("check", str(bench / "kit.yaml"))
    assert code == 1
    assert f"  KB804 {NOTES}:3: column 6: the private path of sources[0] (learned-sparse-2026-11-07)\n" in out
    assert str(bench.resolve() / "bench") not in out
