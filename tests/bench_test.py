"""The benchmark's own helpers (bench/run.py): what decides whether a baseline's input is reused, where
a run's outputs go, and the workloads' records."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _run_module():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_a_bag_is_reused_only_while_the_kit_root_files_are_its_own(tmp_path: Path) -> None:
    run = _run_module()
    kit, bag = tmp_path / "kit", tmp_path / "bag"
    (kit / "records").mkdir(parents=True)
    for name, text in {"index.json": "{}\n", "README.md": "# K\n", "records/a.txt": "a\n"}.items():
        (kit / name).write_text(text)
    assert not run.bag_is_current(kit, bag)  # no bag yet
    (bag / "data" / "records").mkdir(parents=True)
    for name in ("index.json", "README.md", "records/a.txt"):
        (bag / "data" / name).write_bytes((kit / name).read_bytes())
    assert not run.bag_is_current(kit, bag)  # no manifest: not a bag bagit made
    (bag / "manifest-sha256.txt").write_text("")
    assert run.bag_is_current(kit, bag)
    (kit / "README.md").write_text("# K, rendered otherwise\n")
    assert not run.bag_is_current(kit, bag)
    (kit / "README.md").write_text("# K\n")
    (kit / "SHA256SUMS").write_text("")
    assert not run.bag_is_current(kit, bag)  # a root file the bag lacks


def test_the_trash_keeps_what_it_is_given_until_it_is_emptied(tmp_path: Path) -> None:
    run = _run_module()
    trash = run.Trash(tmp_path / "trash")
    trash.discard(tmp_path / "not-there")  # nothing to move: no error, no trash folder
    assert not (tmp_path / "trash").exists()
    for round_no in range(2):  # the same name twice: the second must not land on the first
        kit = tmp_path / "kit-timed"
        (kit / "records").mkdir(parents=True)
        (kit / "records" / "a.json").write_text(f"{round_no}\n")
        trash.discard(kit)
        assert not kit.exists()
    kept = sorted(p.read_text() for p in (tmp_path / "trash").rglob("a.json"))
    assert kept == ["0\n", "1\n"]  # moved, not deleted
    trash.empty()
    assert not (tmp_path / "trash").exists()
    trash.empty()  # an empty trash, or none, is fine


def _workloads_module():
    spec = importlib.util.spec_from_file_location("bench_workloads", BENCH / "workloads.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def _encoded_line(w, rng, src: str, i: int, j: int, earlier: list[tuple[str, str]]) -> str:
    """A record as the encoder writes it, drawing from ``rng`` in the generator's order."""
    ref_path, ref_digest = earlier[rng.randrange(len(earlier))] if earlier else (f"{src}/run-0000/none.ndjson", w.PUBLIC_DIGEST)
    sessions = [f"s{rng.getrandbits(40):010x}.md" for _ in range(10)]
    row = {
        "qid": f"q{i:04d}{j:06d}",
        "path": f"{src}/run-{i % 97:04d}/rows-{i:04d}.ndjson",
        "input": f"{w.MAP_FROM}/a0/run/rows-{j % 500:03d}.ndjson",
        "route": "gpu-b17.cluster.example.net" if j % 3 else "gpu-b17",
        "reads": {"path": ref_path, "sha256": ref_digest},
        "search": sessions,
        "score": {"any@5": rng.getrandbits(1), "all@5": rng.getrandbits(1)},
    }
    return json.dumps(row, separators=(",", ":")) + "\n"


def test_a_record_line_is_what_the_json_encoder_writes(tmp_path: Path) -> None:
    # The generator formats its records itself; the workloads must stay byte for byte what the
    # encoder made of them, or a cached workload and a fresh one would differ.
    w = _workloads_module()
    for src in (str(tmp_path), '/tmp/a "quoted" path', "/tmp/caf\u00e9\\x"):
        earlier = [(f"{src}/run-0001/rows-0001.ndjson", "ab" * 32), ("/other/\u00e9.ndjson", "cd" * 32)]
        for i, j, before in ((0, 0, []), (3, 1, earlier), (4, 2, earlier[:1]), (1999, 123456, earlier)):
            mine, theirs = random.Random(i * 7 + j), random.Random(i * 7 + j)
            assert w._record_line(mine, src, i, j, before) == _encoded_line(w, theirs, src, i, j, before)
            assert mine.getstate() == theirs.getstate()  # the same draws, in the same order


def test_the_stolen_share_is_read_from_the_summary_line_of_proc_stat() -> None:
    run = _run_module()
    # user nice system idle iowait irq softirq steal guest guest_nice: the guest times are part
    # of user and nice already, and must not be counted twice.
    assert run.parse_cpu_line("cpu  100 0 50 800 20 0 5 25 7 0\n") == (1000, 25)
    assert run.parse_cpu_line("cpu0 100 0 50 800 20 0 5 25 0 0\n") is None  # one core's line
    assert run.parse_cpu_line("cpu  100 0 50 800\n") is None  # a kernel without the steal field
    assert run.parse_cpu_line("intr 1 2 3 4 5 6 7 8 9\n") is None
    assert run.steal_share((1000, 25), (3000, 125)) == 0.05
    assert run.steal_share(None, (3000, 125)) is None
    assert run.steal_share((3000, 125), (3000, 125)) is None  # no time between the readings
    now = run.cpu_times()
    if now is not None:  # (Linux)
        total, stolen = now
        assert 0 <= stolen <= total


def test_priming_touches_the_memory_it_then_frees() -> None:
    run = _run_module()
    # Memory allocated but never written (calloc's, say) would leave the host's pages where
    # they are: the child's peak shows the bytes were written.
    nbytes = 96 << 20
    assert run.timed(run.prime_command(nbytes)).peak_kib * 1024 >= nbytes


def test_a_run_counts_the_processor_time_of_its_whole_tree() -> None:
    run = _run_module()
    # Half a second of work in a grandchild (as kitbuild's workers are), against half a second
    # of sleep: only the first is processor time, and the grandchild's counts toward its run.
    spin = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    nested = f"import subprocess, sys; subprocess.run([sys.executable, '-S', '-c', {spin!r}], check=True)"
    busy = run.timed([sys.executable, "-S", "-c", nested])
    idle = run.timed([sys.executable, "-S", "-c", "import time; time.sleep(0.5)"])
    assert busy.cpu_seconds >= 0.45
    assert idle.cpu_seconds < 0.3 <= idle.seconds


def test_the_figures_in_the_docs_are_the_last_runs() -> None:
    # README.md and docs/performance.md quote bench/results.json: a run committed without them,
    # or a figure typed by hand, fails here. (The docs name the two speed-ups in words.)
    results = json.loads((BENCH / "results.json").read_text(encoding="utf-8"))
    label = {
        "build A, 1 job / build A (speed-up)": "build A on 1 job / build A on 2 (speed-up)",
        "verify A, 1 job / verify A (speed-up)": "verify A on 1 job / verify A on 2 (speed-up)",
    }
    rows = (BENCH.parent / "docs" / "performance.md").read_text(encoding="utf-8").splitlines()
    for goal in results["goals"]:
        row = f"| {label.get(goal['goal'], goal['goal'])} | {goal['ratio']:.2f} | {goal['min']:.2f}–{goal['max']:.2f} |"
        assert any(line.startswith(row) for line in rows), row
    readme = (BENCH.parent / "README.md").read_text(encoding="utf-8")
    for goal in results["goals"]:
        if "bagit" in goal["goal"] or "sha256sum" in goal["goal"] or "sed" in goal["goal"]:
            assert f"| {goal['ratio']:.2f} |" in readme, goal["goal"]
