"""How the console entry point ends: with the command's status, its output flushed, at once."""

from __future__ import annotations

import os
import shutil
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from typer.testing import CliRunner

from kitbuild import cli
from kitbuild.commands import explain
from kitbuild.errors import EXIT_INTERNAL, ConfigError

from .verify_kits import build_kit


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    build_kit(root)
    return root


def kitbuild(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "kitbuild", *args], cwd=cwd, capture_output=True, timeout=120)


def test_a_report_in_a_pipe_arrives_whole(bench: Path) -> None:
    # Output to a pipe is buffered: a process that ended without flushing it would lose the end.
    done = kitbuild("verify", "kit", "--format", "json", cwd=bench)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["exit_code"] == 0
    assert done.stdout.endswith(b"\n")


def test_the_exit_status_is_the_commands(bench: Path) -> None:
    missing = kitbuild("verify", "no-such-kit", cwd=bench)
    assert missing.returncode == 2
    assert missing.stderr.startswith(b"kitbuild: ") and missing.stdout == b""
    (bench / "broken").mkdir(exist_ok=True)
    (bench / "broken" / "index.json").write_bytes(b"{")
    broken = kitbuild("verify", "broken", cwd=bench)
    assert broken.returncode == 1
    assert b"KB001" in broken.stdout


def _main_exits(monkeypatch: pytest.MonkeyPatch, ending: BaseException | None) -> list[int]:
    codes: list[int] = []

    def app(**kwargs: object) -> None:
        print("report", end="")  # left in the buffer: main must flush it
        if ending is not None:
            raise ending

    def exit_now(code: int) -> None:
        assert sys.stdout.getvalue() == "report"  # type: ignore[attr-defined]
        codes.append(code)

    monkeypatch.setattr(sys, "argv", ["kitbuild", "build"])  # a call for typer's app
    monkeypatch.setattr(cli, "app", app)
    monkeypatch.setattr(cli.os, "_exit", exit_now)
    cli.main()
    return codes


class _Buffered:
    """A stdout that holds what is printed until it is flushed."""

    def __init__(self) -> None:
        self.pending = ""
        self.written = ""

    def write(self, text: str) -> int:
        self.pending += text
        return len(text)

    def flush(self) -> None:
        self.written, self.pending = self.written + self.pending, ""

    def getvalue(self) -> str:
        return self.written


@pytest.mark.parametrize(("ending", "code"), [(SystemExit(0), 0), (SystemExit(1), 1), (SystemExit(None), 0), (None, 0), (SystemExit(2), 2)])
def test_main_flushes_then_ends_with_the_status(monkeypatch: pytest.MonkeyPatch, ending: BaseException | None, code: int) -> None:
    monkeypatch.setattr(sys, "stdout", _Buffered())
    assert _main_exits(monkeypatch, ending) == [code]


def test_a_message_or_an_error_takes_the_ordinary_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _Buffered())
    with pytest.raises(SystemExit) as ended:
        _main_exits(monkeypatch, SystemExit("a message"))
    assert ended.value.code == "a message"

def test_ctrl_c_outside_a_command_ends_with_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdout", _Buffered())
    assert _main_exits(monkeypatch, KeyboardInterrupt()) == [130]
    assert capsys.readouterr().err == "\nkitbuild: interrupted\n"


def test_output_that_cannot_be_flushed_takes_the_ordinary_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Closed(_Buffered):
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", _Closed())
    monkeypatch.setattr(sys, "argv", ["kitbuild", "build"])
    monkeypatch.setattr(cli, "app", lambda **kwargs: sys.exit(1))
    monkeypatch.setattr(cli.os, "_exit", lambda code: pytest.fail("os._exit after a failed flush"))
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 1


# -- the statuses: 0 ok, 1 findings, 2 bad input, 3 a bug in kitbuild, 130 Ctrl-C ------------------

INTERNAL = re.compile(
    r"kitbuild: internal error \(RuntimeError at kitbuild/commands/explain\.py:\d+\); please report it (at \S+|to the kitbuild maintainers) "
    r"with the command you ran, or run again with --debug for the traceback\n"
)


def _explain_raises(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    # A command whose core raises: explain's, the cheapest to run, where it looks a code up.
    def broken(code: str) -> str:
        raise exc

    monkeypatch.setattr(explain, "check_of", broken)


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli.app, list(args), env=env)


def test_a_bug_is_exit_3_in_one_line_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    _explain_raises(monkeypatch, RuntimeError("cannot read /home/ada/secret-bench/run.json"))
    result = invoke("explain", "KB001", env={"KITBUILD_DEBUG": ""})
    assert result.exit_code == EXIT_INTERNAL == 3
    assert INTERNAL.fullmatch(result.stderr), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    # The exception's own text may name a private path, and a CI log would publish it.
    assert "/home/ada" not in result.stderr


def test_debug_prints_the_traceback_and_still_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    _explain_raises(monkeypatch, RuntimeError("the bug"))
    for args, env in ((["--debug", "explain", "KB001"], {}), (["explain", "KB001"], {"KITBUILD_DEBUG": "1"})):
        result = invoke(*args, env=env)
        assert result.exit_code == 3
        assert result.stderr.startswith("Traceback (most recent call last):\n"), result.stderr
        assert result.stderr.endswith("RuntimeError: the bug\n")
        assert "internal error" not in result.stderr


def test_ctrl_c_in_a_command_is_130_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _explain_raises(monkeypatch, KeyboardInterrupt())
    result = invoke("explain", "KB001")
    assert (result.exit_code, result.stderr) == (130, "\nkitbuild: interrupted\n")


def test_an_error_kitbuild_knows_is_its_own_status(monkeypatch: pytest.MonkeyPatch) -> None:
    _explain_raises(monkeypatch, ConfigError("kit.yaml:3:1: title: must not be empty"))
    result = invoke("explain", "KB001")
    assert (result.exit_code, result.stderr) == (2, "kitbuild: kit.yaml:3:1: title: must not be empty\n")


@pytest.mark.parametrize("args", [["build", "--jobs", "0"], ["verify"], ["verify", "kit", "--bogus"], ["no-such-command"], ["--no-such-option"]])
def test_a_usage_error_is_exit_2(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_the_reporting_line_names_the_tracker_the_metadata_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Meta:
        def __init__(self, urls: list[str]) -> None:
            self.urls = urls

        def get_all(self, name: str) -> list[str]:
            return self.urls

    import importlib.metadata

    for urls, where in (
        (["Issues, https://example.org/kitbuild/issues"], "please report it at https://example.org/kitbuild/issues"),
        (["Source, https://github.com/someone/kitbuild/"], "please report it at https://github.com/someone/kitbuild/issues"),
        ([], "please report it to the kitbuild maintainers"),
    ):
        monkeypatch.setattr(importlib.metadata, "metadata", lambda name, urls=urls: _Meta(urls))
        assert cli._where_to_report() == where


def test_a_bug_in_a_real_process_is_one_line_and_exit_3(tmp_path: Path) -> None:
    # Through the console entry point itself, which ends the process with os._exit.
    program = (
        "import sys\n"
        "from kitbuild.commands import explain\n"
        "def broken(code): raise ValueError('x')\n"
        "explain.check_of = broken\n"
        "from kitbuild.cli import main\n"
        "sys.argv = ['kitbuild', 'explain', 'KB001']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, timeout=120, env={**os.environ, "KITBUILD_DEBUG": "0"})
    assert done.returncode == 3
    assert done.stderr.count(b"\n") == 1 and done.stderr.startswith(b"kitbuild: internal error (ValueError at kitbuild/commands/explain.py:"), done.stderr


# -- what the machine refuses is no bug: exit 2, and no file's name ------------------------


OS_REFUSED = re.compile(rb"^kitbuild: the system refused to read or write a file: .+ \((ENOENT|ENOTDIR|EISDIR|ENOSPC|ENAMETOOLONG|EROFS|EACCES)\)\. Check the paths given")


@pytest.mark.parametrize(
    "args",
    [
        ["publish", "kit", "--out", "/proc/kitbuild-test/k.tar.gz"],
        ["demo", "kit/index.json"],  # a file where the folder would be
        ["build", "--out", "/proc/kitbuild-test/kit"],
        ["build", "--out", "deep/" + "/".join(["d" * 200] * 24)],  # past the system's path limit
    ],
)
def test_a_place_the_system_refuses_is_exit_2_with_why_and_no_path(bench: Path, args: list[str]) -> None:
    done = kitbuild(*args, cwd=bench)
    assert done.returncode == 2, done.stderr
    assert b"internal error" not in done.stderr and b"Traceback" not in done.stderr
    assert b"kitbuild-test" not in done.stderr and b"index.json" not in done.stderr and b"d" * 200 not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("args", [["rules"], ["explain", "KB104"], ["verify", "kit"]])
def test_output_the_disk_has_no_room_for_is_exit_2(bench: Path, args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "kitbuild", *args], cwd=bench, stdout=full, stderr=subprocess.PIPE, timeout=120)
    assert done.returncode == 2 and OS_REFUSED.match(done.stderr), done.stderr


def test_publish_writes_no_archive_when_its_sha256_file_cannot_be_written(bench: Path, tmp_path: Path) -> None:
    (tmp_path / "k.tar.gz.sha256").mkdir()
    done = kitbuild("publish", "kit", "--out", str(tmp_path / "k.tar.gz"), cwd=bench)
    assert done.returncode == 2 and b"k.tar.gz.sha256 is a folder" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.tar.gz.sha256"]


def test_an_out_that_is_a_symlink_gets_the_kit_where_it_leads_and_stays_a_link(bench: Path, tmp_path: Path) -> None:
    real = tmp_path / "real-kit"
    done = kitbuild("build", "--out", str(real), cwd=bench)
    assert done.returncode == 0, done.stderr
    (tmp_path / "link").symlink_to("real-kit")
    done = kitbuild("build", "--out", str(tmp_path / "link"), cwd=bench)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "link").is_symlink() and (real / "index.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real-kit"]


def test_json_and_another_format_at_once_is_exit_2(bench: Path) -> None:
    done = kitbuild("verify", "kit", "--json", "--format", "github", cwd=bench)
    assert done.returncode == 2 and done.stderr == b"kitbuild: --json says json and --format says github; give one of them.\n"


def test_publish_never_replaces_a_file_that_is_no_archive(bench: Path) -> None:
    before = (bench / "kit.yaml").read_bytes()
    done = kitbuild("publish", "kit", "--out", "kit.yaml", cwd=bench)
    assert done.returncode == 2 and b"kit.yaml exists and is no .tar.gz archive" in done.stderr
    assert (bench / "kit.yaml").read_bytes() == before and not (bench / "kit.yaml.sha256").exists()


def test_no_path_argument_is_refused_by_typer_for_being_unreadable() -> None:
    # typer checks a Path it can read before the command runs, and refuses one it cannot in its
    # own usage box: an unreadable kit.yaml must reach kitbuild's own one-line message instead.
    import typer.main

    root = typer.main.get_command(cli.app)
    paths = {
        (name, param.name): param.type.readable
        for name, command in root.commands.items()  # type: ignore[attr-defined]
        for param in command.params
        if hasattr(param.type, "readable")
    }
    assert len(paths) == 8
    assert [path for path, readable in paths.items() if readable] == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv, to drop what lets root read any file")
def test_an_unreadable_config_is_refused_in_kitbuilds_own_words(tmp_path: Path) -> None:
    config = tmp_path / "kit.yaml"
    config.write_text("kit: tiny\n")
    config.chmod(0)
    # Root without the capabilities that pass over permissions: it reads the interpreter and
    # kitbuild (whoever installed them, wherever) but not a file of mode 0.
    done = subprocess.run(
        ["setpriv", "--bounding-set=-dac_override,-dac_read_search", sys.executable, "-m", "kitbuild", "build"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert (done.returncode, done.stderr) == (2, "kitbuild: kit.yaml: cannot be read (Permission denied).\n")
