"""verify's head start (kitbuild.prescan): the same report as one process gives, however the work
was shared, and a worker that finds something, or dies, leaves the file to the full pass.

Kits here are small, so the head start is asked for below its usual minimum, with runs of two
files and a small-file limit that some of the kit's files pass.
"""

from __future__ import annotations

import functools
import os
import pickle
from pathlib import Path

import pytest

from kitbuild import crew, prescan
from kitbuild.commands.verify import verify
from kitbuild.crew import Crew
from kitbuild.filescan import FileScan, ScanPlan
from kitbuild.kitfs import FolderKit
from kitbuild.prescan import Prescan
from kitbuild.progress import Progress
from kitbuild.verify_report import verify_json

from kitbuild import build

from .verify_kits import EXTERNAL, CountingProgress, build_kit, copy_kit, edit_json, make_bench, refresh

LS = "learned-sparse-2026-11-07"
NOTES = f"{LS}/notes.txt"
READING = f"{LS}/full-s1/score/reading.json"


@pytest.fixture(autouse=True)
def small_head_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prescan, "MIN_FILES", 0)
    monkeypatch.setattr(prescan, "RUN", 2)
    monkeypatch.setattr(prescan, "SMALL", 64)  # weights.bin and reading.json are larger


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The verify bench with a folder of quiet files: what the head start finishes."""
    root = tmp_path_factory.mktemp("bench")
    config = make_bench(root)
    quiet = root / "bench" / "ls-2026-11-07" / "a-quiet"  # first in path order: before the loud files
    quiet.mkdir()
    for i in range(9):
        (quiet / f"q{i}.txt").write_bytes(b"nothing here %d\n" % i)
    build(config, jobs=1)
    return root / "kit"


@pytest.fixture(scope="module")
def templated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_kit(tmp_path_factory.mktemp("templated"), template="# {{ title }}\n\n{% for f in files %}- {{ f.path }}\n{% endfor %}")


def _copy(kit: Path, where: Path, broken: bool) -> Path:
    """A copy; if ``broken``, with a wrong pair, an unresolved digest and leaks, each in a file
    the head start must leave to the full pass, and a rule's word in one of the quiet files."""
    copy = copy_kit(kit, where)
    if broken:
        edit_json(copy / READING, lambda d: d["digests"].update({f"{LS}/full-s1/run/rows.ndjson": EXTERNAL}))
        with open(copy / NOTES, "ab") as f:
            f.write(b"\nsha " + b"ab" * 32 + b"\nread /home/bob/data\nmail bob@example.org\n")
        (copy / LS / "a-quiet" / "q3.txt").write_bytes(b"the desktop ran it\n")
        refresh(copy)
    return copy


class _Spy:
    """What the head start finished, seen from the main process."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.finished: set[str] = set()
        real = Prescan.finish

        def finish(this: Prescan, plan: ScanPlan, skip: object, progress: Progress, out: dict[str, object], loud: list[str]) -> None:
            before = dict(out)
            real(this, plan, skip, progress, out, loud)  # type: ignore[arg-type]
            self.finished |= {p for p, scan in out.items() if before.get(p) is not scan}

        monkeypatch.setattr(Prescan, "finish", finish)


def test_the_size_sample_is_read_off_index_jsons_bytes_as_the_build_writes_them() -> None:
    from kitbuild.commands.verify import _size_sample
    from kitbuild.jsonfile import dump_json

    document = {"kit": "k", "files": [{"path": f"r/{i}", "size": i * 1000, "sha256": "ab" * 32} for i in range(1000)]}
    sample = _size_sample(dump_json(document))
    assert 200 <= len(sample) <= 257 and set(sample) <= {i * 1000 for i in range(1000)}
    assert sample == sorted(sample) and sample[0] == 0 and sample[-1] >= 990_000  # spread over the whole list
    assert _size_sample(None) == _size_sample(b"") == _size_sample(b'{"files": "no sizes"}') == []


def test_a_kit_of_large_files_starts_its_full_pass_at_once(kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where index.json lists mostly files larger than a small one, there is no head start for
    small files: the full pass starts before the schemas and pages, with the same report."""
    from kitbuild import filescan

    copy = _copy(kit, tmp_path / "kit", True)
    serial = verify_json(verify(copy, jobs=1))
    monkeypatch.setattr(prescan, "SMALL", 1)  # every listed file is larger
    monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a head start for a kit of large files")

    monkeypatch.setattr(Prescan, "__init__", refused)
    started: list[int] = []
    init = filescan.StartedScan.__init__

    def counted(self: filescan.StartedScan, *args: object) -> None:
        init(self, *args)  # type: ignore[arg-type]
        started.append(len(self.paths))

    monkeypatch.setattr(filescan.StartedScan, "__init__", counted)
    assert verify_json(verify(copy, jobs=2)) == serial
    assert started and started[0] > 9  # the files below the root, begun first


def test_a_template_read_whole_is_not_scanned_twice(templated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = copy_kit(templated, tmp_path / "kit")
    template = next(p for p in (copy / "_templates").iterdir())
    serial = verify_json(verify(copy, jobs=1))
    spy = _Spy(monkeypatch)
    assert verify_json(verify(copy, jobs=2)) == serial
    # The custom template is below the root, so a worker may finish it; verify's own scan of it,
    # from the bytes it rendered the page with, is the one kept.
    assert f"_templates/{template.name}" not in spy.finished


def test_the_progress_counts_every_file_once(kit: Path, tmp_path: Path) -> None:
    copy = _copy(kit, tmp_path / "kit", broken=False)

    progress = CountingProgress()
    verify(copy, jobs=2, progress=progress)
    assert tuple(progress.done) == progress.begun
    assert progress.begun[0] == sum(1 for p in copy.rglob("*") if p.is_file())


def test_a_worker_that_dies_leaves_its_runs_to_the_full_pass(kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = _copy(kit, tmp_path / "kit", broken=True)
    serial = verify_json(verify(copy, jobs=1))

    def dies(kit: object, plan: object, runs: object, team: Crew, k: int) -> None:
        team.take(), team.take()  # three runs taken (with k), never answered
        os._exit(1)

    monkeypatch.setattr(prescan, "_work", dies)
    assert verify_json(verify(copy, jobs=2)) == serial


def _unpacked(sizes: list[int], digests: bytes) -> list[tuple[int, str] | None]:
    """A packed run (see prescan._Packed) as (size, hex digest) per file, None where left."""
    hexed = digests.hex()
    return [(n, hexed[64 * i : 64 * i + 64]) if n >= 0 else None for i, n in enumerate(sizes)]


def _run_worker(tmp_path: Path, files: dict[str, bytes], plan: ScanPlan) -> tuple[list[tuple[int, list[tuple[int, str] | None]]], int, int]:
    """A worker's loop over ``files``, in this process: what it answers, the stop flag and the
    runs left."""
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    runs = prescan._runs(sorted(files))
    team = Crew(len(runs))
    sent: list[tuple[int, list[tuple[int, str] | None]]] = []
    try:
        team.serve(functools.partial(prescan._work, FolderKit(tmp_path), plan, runs, team), lambda k, data: sent.append((k, _unpacked(*pickle.loads(data)))))
        left = 0
        while crew.take(team.tokens) is not None:
            left += 1
    finally:
        team.cancel()
    return sent, int(team.stopped), left


def test_a_page_is_never_finished_ahead(tmp_path: Path) -> None:
    files = {"p/page.md": b"quiet text\n"}
    plan = ScanPlan(records=frozenset(), paths=frozenset(), expect={"p/page.md": b"other text\n"})
    sent, _, _ = _run_worker(tmp_path, files, plan)
    assert sent == [(0, [None])]


def test_only_several_cores_a_folder_and_many_files_get_a_head_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prescan, "MIN_FILES", 2000)
    assert Prescan.wanted(2000, 2, sequential=False)
    assert not Prescan.wanted(1999, 2, sequential=False)
    assert not Prescan.wanted(2000, 1, sequential=False)
    assert not Prescan.wanted(2000, 2, sequential=True)
    assert Prescan.wanted(2000, 2, sequential=False, sizes=[10, 10, 10**6])  # mostly small files
    assert not Prescan.wanted(2000, 2, sequential=False, sizes=[10, 10**6, 10**6])  # mostly large ones
    monkeypatch.setattr(crew, "AVAILABLE", False)
    assert not Prescan.wanted(2000, 2, sequential=False)  # where workers cannot be forked


def _files(root: Path, files: dict[str, bytes]) -> FolderKit:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return FolderKit(root)


def test_the_main_process_scans_the_runs_it_takes_with_the_whole_plan(tmp_path: Path) -> None:
    files = {"r/a.txt": b"quiet\n", "r/b.txt": b"the desktop ran it\n", "r/c.txt": b"x" * 65, "r/d.txt": b"ab" * 32}
    fs = _files(tmp_path, files)
    early = ScanPlan(records=frozenset(), paths=frozenset(), words=(("desktop",),))
    whole = ScanPlan(records=frozenset(files), paths=frozenset(files), words=(("desktop",),))
    head = Prescan(fs, sorted(files), early, jobs=1)  # no worker: every run is the main process's
    out: dict[str, FileScan] = {}
    loud: list[str] = []
    head.finish(whole, frozenset({"r/a.txt"}), Progress(), out, loud)
    # r/a.txt is skipped (verify scanned it already), r/c.txt is larger than a small file; the
    # others are scanned as records, their word and digest counted.
    assert sorted(out) == ["r/b.txt", "r/d.txt"]
    assert out["r/b.txt"].words == [1]
    assert list(out["r/d.txt"].digests) == ["ab" * 32]
    assert loud == ["r/b.txt", "r/d.txt"]


def test_the_main_process_takes_no_run_once_a_worker_says_stop(tmp_path: Path) -> None:
    files = {f"r/{i}.txt": b"quiet\n" for i in range(4)}
    fs = _files(tmp_path, files)
    plan = ScanPlan(records=frozenset(), paths=frozenset())
    head = Prescan(fs, sorted(files), plan, jobs=1)
    head.crew.stop()
    out: dict[str, FileScan] = {}
    head.finish(plan, frozenset(), Progress(), out, [])
    assert out == {}


def test_a_kit_of_any_size_makes_few_enough_runs_for_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prescan, "MAX_RUNS", 4)
    paths = [f"r/{i:03d}" for i in range(11)]
    runs = prescan._runs(paths)  # runs of two would make six
    assert len(runs) == 4 and [p for run in runs for p in run] == paths
    assert prescan._runs(paths[:7]) == [paths[0:2], paths[2:4], paths[4:6], paths[6:7]]
    assert prescan._runs([]) == []
