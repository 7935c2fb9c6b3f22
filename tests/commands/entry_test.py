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
    # One command line: the script the package installs is python -m kitbuild's, which loads
    # kitbuild.cli and runs its main; no parser beside it.
    from importlib.metadata import entry_points

    import kitbuild.__main__ as entry

    scripts = {e.name: e.value for e in entry_points(group="console_scripts") if e.name == "kitbuild"}
    assert scripts == {"kitbuild": "kitbuild.__main__:main"}
    assert "from kitbuild.cli import main as run" in Path(entry.__file__).read_text(encoding="utf-8")


def test_ctrl_c_while_the_command_line_loads_ends_in_one_line_and_130(tmp_path: Path) -> None:
    # Ctrl-C in the fifth of a second the command line's modules take to load: here, the load of
    # kitbuild.cli raises KeyboardInterrupt, as the signal would at any line of it.
    code = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kitbuild.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from kitbuild.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code, "verify", "kit"], cwd=tmp_path, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (130, b"", b"\nkitbuild: interrupted\n")


def test_python_m_kitbuild_runs_the_cli(tmp_path: Path) -> None:
    done = kitbuild("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(b"kitbuild ")
