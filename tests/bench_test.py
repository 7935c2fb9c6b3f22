"""The benchmark's own helpers (bench/run.py): what decides whether a baseline's input is reused."""

from __future__ import annotations

import importlib.util
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
