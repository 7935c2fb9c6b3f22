"""The staging folder a build writes into, and the swap that publishes it (kitbuild/staging.py)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import kitbuild
from kitbuild.errors import ConfigError
from kitbuild.staging import Staging, remove_stale

from kittest import make_files, read_tree, write_sample_bench

ROOT = Path(kitbuild.__file__).resolve().parent.parent

# Enters a Staging for argv[1], writes a file, says where, and waits to be signalled.
STAGE_AND_WAIT = """
import sys, time
from pathlib import Path
from kitbuild.staging import Staging
with Staging(Path(sys.argv[1])) as staging:
    (staging.path / "half.json").write_text("{}")
    print(staging.path, flush=True)
    time.sleep(60)
"""


@pytest.fixture(scope="module")
def dead_pid() -> int:
    """The pid of a process that has ended (and been waited for)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def staged_and_signalled(target: Path, sig: signal.Signals) -> tuple[Path, subprocess.Popen[str]]:
    """Run STAGE_AND_WAIT for ``target`` in a new process, send it ``sig`` once it has staged."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", STAGE_AND_WAIT, str(target)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        staged = Path(process.stdout.readline().strip())  # type: ignore[union-attr]
        assert staged.is_dir() and (staged / "half.json").is_file()
        process.send_signal(sig)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]
    return staged, process


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -- the folder -----------------------------------------------------------------------------------


def test_the_staging_folder_is_beside_the_target_and_named_for_this_process(tmp_path):
    target = tmp_path / "out" / "kit"
    with Staging(target) as staging:
        assert staging.path.is_dir()
        assert staging.path.parent == target.parent
        assert staging.path.name.startswith(f".kit.kitbuild-{os.getpid()}-")
        assert not target.exists()


def test_the_staging_folder_is_removed_on_an_exception_and_the_kit_left_as_it_was(tmp_path):
    target = make_files(tmp_path / "kit", {"provenance.json": "{}", "old.txt": "old"})
    with pytest.raises(RuntimeError, match="^the build failed$"):
        with Staging(target) as staging:
            (staging.path / "new.txt").write_text("new")
            raise RuntimeError("the build failed")
    assert not staging.path.exists()
    assert names(tmp_path) == ["kit"]
    assert read_tree(target) == {"old.txt": b"old", "provenance.json": b"{}"}


def test_the_staging_folder_is_removed_when_the_block_ends_without_a_swap(tmp_path):
    with Staging(tmp_path / "kit") as staging:
        (staging.path / "x").write_text("x")
    assert names(tmp_path) == []


def test_a_full_disk_is_reported_in_words_and_nothing_is_left(tmp_path):
    target = tmp_path / "kit"
    with pytest.raises(ConfigError) as raised:
        with Staging(target):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(raised.value) == (
        f"{target}: the kit could not be written (No space left on device); nothing was written and the previous kit, "
        "if any, is unchanged. Free some space or choose another --out."
    )
    assert names(tmp_path) == []


def test_the_sigterm_handler_is_put_back_after_the_block(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    with Staging(tmp_path / "kit"):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_dry_run_stages_nowhere_near_the_target(tmp_path):
    target = tmp_path / "out" / "kit"
    with Staging(target, dry_run=True) as staging:
        assert staging.path.is_dir()
        assert staging.path.name.startswith("kitbuild-dry-run-")
        assert tmp_path not in staging.path.parents
    assert not staging.path.exists()
    assert names(tmp_path) == []  # not even the target's parent was made


# -- the swap -------------------------------------------------------------------------------------


def test_swap_replaces_an_existing_kit_whole(tmp_path):
    target = make_files(tmp_path / "kit", {"provenance.json": "old", "gone": {"old.txt": "old"}})
    with Staging(target) as staging:
        make_files(staging.path, {"provenance.json": "new", "run": {"new.txt": "new"}})
        staging.swap()
        assert not staging.path.exists()
    assert read_tree(target) == {"provenance.json": b"new", "run/new.txt": b"new"}
    assert names(tmp_path) == ["kit"]  # no staging folder, no old kit left beside it
    assert target.stat().st_mode & 0o777 == 0o755


def test_swap_puts_a_first_kit_in_place(tmp_path):
    target = tmp_path / "out" / "kit"
    with Staging(target) as staging:
        make_files(staging.path, {"provenance.json": "new"})
        staging.swap()
    assert read_tree(target) == {"provenance.json": b"new"}
    assert names(target.parent) == ["kit"]


# -- stale folders --------------------------------------------------------------------------------


def test_remove_stale_removes_only_folders_of_gone_builds_of_that_kit(tmp_path, dead_pid):
    me = os.getpid()
    make_files(tmp_path, {
        f".kit.kitbuild-{dead_pid}-abcd": {"half.json": "{}"},  # gone: removed
        f".kit.kitbuild-{me}-efgh": {"half.json": "{}"},  # alive: kept
        f".other.kitbuild-{dead_pid}-abcd": {"half.json": "{}"},  # another kit's: kept
        f".kit.kitbuild-{dead_pid}-file": "not a folder",  # kept
        "kit": {"provenance.json": "{}"},
        "notes": {"a.txt": "a"},
    })
    removed = remove_stale(tmp_path, "kit")
    assert removed == [tmp_path / f".kit.kitbuild-{dead_pid}-abcd"]
    assert names(tmp_path) == sorted([f".kit.kitbuild-{dead_pid}-file", f".kit.kitbuild-{me}-efgh", f".other.kitbuild-{dead_pid}-abcd", "kit", "notes"])


def test_entering_a_staging_removes_stale_folders(tmp_path, dead_pid):
    make_files(tmp_path, {f".kit.kitbuild-{dead_pid}-abcd": {"half.json": "{}"}})
    with Staging(tmp_path / "kit") as staging:
        assert names(tmp_path) == [staging.path.name]


# -- signals --------------------------------------------------------------------------------------


def test_sigterm_during_a_staging_block_leaves_no_staging_folder(tmp_path):
    staged, process = staged_and_signalled(tmp_path / "kit", signal.SIGTERM)
    assert process.returncode != 0
    assert not staged.exists()
    assert names(tmp_path) == []


def test_sigkill_leaves_a_stale_folder_that_the_next_build_removes(bench, cli):
    write_sample_bench(bench)
    staged, process = staged_and_signalled(bench / "kit", signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    assert staged.is_dir()  # nothing could clean up
    result = cli("build", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert not staged.exists()
    assert names(bench) == ["kit", "kit.yaml", "runs"]


def test_a_build_removes_a_stale_folder_of_a_dead_build_and_keeps_the_rest(bench, cli, dead_pid):
    write_sample_bench(bench)
    live = f".kit.kitbuild-{os.getpid()}-abc"
    make_files(bench, {
        f".kit.kitbuild-{dead_pid}-abc": {"learned-sparse-2026-11-07": {"half.json": "{"}},
        live: {"half.json": "{"},
        ".kit-notes": {"a.txt": "a"},
    })
    result = cli("build", "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"built tiny-kit in {bench / 'kit'}: 9 record files, 1,561 bytes"
    assert names(bench) == sorted([".kit-notes", live, "kit", "kit.yaml", "runs"])
    assert (bench / "kit" / "provenance.json").is_file()
