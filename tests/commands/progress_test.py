"""The progress bar: on a terminal's stderr only; never in a pipe, with --quiet or a machine format (issue 6)."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from kitbuild.commands.verify import verify
from kitbuild.progress import SILENT, BarProgress, progress_for

from .verify_kits import CountingProgress, build_kit


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    build_kit(root)
    return root


def kitbuild(*args: str, cwd: Path, stderr: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "kitbuild", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=stderr, timeout=120)


@pytest.mark.parametrize(
    "args",
    [("verify", "kit"), ("check", "kit.yaml"), ("build", "kit.yaml", "--jobs", "1"), ("verify", "kit", "--format", "json"), ("verify", "kit", "--quiet")],
)
def test_nothing_reaches_a_pipe(bench: Path, args: tuple[str, ...]) -> None:
    done = kitbuild(*args, cwd=bench)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert b"\x1b[" not in done.stdout


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_only_for_text_on_a_terminal() -> None:
    assert progress_for("text", False, io.StringIO()) is SILENT
    assert progress_for("json", False, _Tty()) is SILENT
    assert progress_for("github", False, _Tty()) is SILENT
    assert progress_for("text", True, _Tty()) is SILENT
    bar = progress_for("text", False, _Tty())
    assert isinstance(bar, BarProgress)
    bar.close()


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[int, bytes]:
    """Run kitbuild with stderr on a pseudo-terminal; returns its exit status and what the terminal got."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    proc = subprocess.Popen([sys.executable, "-m", "kitbuild", *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return proc.wait(60), seen


def test_the_bar_shows_on_a_terminal(bench: Path) -> None:
    code, seen = _on_a_terminal(["verify", "kit"], bench)
    assert code == 0
    assert b"verifying" in seen and b"files" in seen
    code, seen = _on_a_terminal(["verify", "kit", "--quiet"], bench)
    assert (code, seen) == (0, b"")


def test_verify_counts_as_many_bytes_as_it_said_it_would(tmp_path: Path) -> None:
    # The pages are not listed in index.json: the sizes they should have stand in for them.
    kit = build_kit(tmp_path)

    for jobs in (1, 2):
        progress = CountingProgress()
        verify(kit, jobs=jobs, progress=progress)
        assert tuple(progress.done) == progress.begun
        assert progress.begun == (sum(1 for p in kit.rglob("*") if p.is_file()), sum(p.stat().st_size for p in kit.rglob("*") if p.is_file()))
