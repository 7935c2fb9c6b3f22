"""How the console entry point ends: with the command's status, its output flushed, at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from kitbuild import cli, entry

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

    def app() -> None:
        print("report", end="")  # left in the buffer: main must flush it
        if ending is not None:
            raise ending

    def exit_now(code: int) -> None:
        assert sys.stdout.getvalue() == "report"  # type: ignore[attr-defined]
        codes.append(code)

    monkeypatch.setattr(sys, "argv", ["kitbuild", "build"])  # a call for typer's app
    monkeypatch.setattr(cli, "app", app)
    monkeypatch.setattr(entry.os, "_exit", exit_now)
    entry.main()
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


@pytest.mark.parametrize("code", [0, 1, 2])
def test_a_verify_run_without_typer_flushes_then_ends_with_its_status(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    monkeypatch.setattr(sys, "stdout", _Buffered())
    codes: list[int] = []

    def run_verify(call: entry.VerifyCall) -> int:
        assert call == entry.VerifyCall(Path("kit"), jobs=2)
        print("report", end="")  # left in the buffer: main must flush it
        return code

    def exit_now(status: int) -> None:
        assert sys.stdout.getvalue() == "report"  # type: ignore[attr-defined]
        codes.append(status)

    monkeypatch.setattr(sys, "argv", ["kitbuild", "verify", "kit", "--jobs", "2"])
    monkeypatch.setattr(cli, "app", lambda: pytest.fail("typer's app ran for a plain verify"))
    monkeypatch.setattr(entry, "run_verify", run_verify)
    monkeypatch.setattr(entry.os, "_exit", exit_now)
    entry.main()
    assert codes == [code]


def test_a_message_or_an_error_takes_the_ordinary_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _Buffered())
    with pytest.raises(SystemExit) as ended:
        _main_exits(monkeypatch, SystemExit("a message"))
    assert ended.value.code == "a message"
    with pytest.raises(KeyboardInterrupt):
        _main_exits(monkeypatch, KeyboardInterrupt())


def test_output_that_cannot_be_flushed_takes_the_ordinary_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Closed(_Buffered):
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", _Closed())
    monkeypatch.setattr(sys, "argv", ["kitbuild", "build"])
    monkeypatch.setattr(cli, "app", lambda: sys.exit(1))
    monkeypatch.setattr(entry.os, "_exit", lambda code: pytest.fail("os._exit after a failed flush"))
    with pytest.raises(SystemExit) as ended:
        entry.main()
    assert ended.value.code == 1
