"""The ``kitbuild`` command as a process: every call goes through the typer app in kitbuild.cli,
prints its report and ends with the command's status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .verify_kits import build_kit, copy_kit, edit_json


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("entry")
    build_kit(root)
    broken = copy_kit(root / "kit", root / "broken")
    edit_json(broken / "index.json", lambda index: index.update(title="edited"))
    return root


def kitbuild(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "kitbuild", *args], cwd=cwd, capture_output=True, timeout=120)


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["kit"], 0),
        (["kit", "--format", "json"], 0),
        (["kit", "--json", "-q", "--jobs", "1"], 0),
        (["--jobs=1", "--format=github", "kit"], 0),
        (["--", "kit"], 0),
        (["broken"], 1),
        (["broken", "--format", "json"], 1),
        (["broken", "--format", "github"], 1),
        (["no-such-kit"], 2),
        (["kit", "--format", "yaml"], 2),
        (["kit", "--jobs", "0"], 2),
        (["kit", "--bogus"], 2),
        (["kit", "other"], 2),
    ],
)
def test_verify_prints_and_ends_with_its_status(bench: Path, args: list[str], status: int) -> None:
    done = kitbuild("verify", *args, cwd=bench)
    assert done.returncode == status, done.stderr
    assert b"Traceback" not in done.stderr
    if status == 2:
        # One message on stderr: kitbuild's for a KIT that is not a kit, typer's for a usage error.
        assert done.stdout == b"" and done.stderr.startswith((b"kitbuild: ", b"Usage: "))
    elif "github" in "".join(args) and status == 0:
        assert done.stdout == b""  # nothing found: no annotation at all
    else:
        assert done.stdout.endswith(b"\n")  # the report in a pipe arrives whole


def test_the_console_script_is_the_cli() -> None:
    # One command line: the script the package installs is kitbuild.cli's main, no parser beside it.
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts") if e.name == "kitbuild"}
    assert scripts == {"kitbuild": "kitbuild.cli:main"}


def test_python_m_kitbuild_runs_the_cli(tmp_path: Path) -> None:
    done = kitbuild("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(b"kitbuild ")
