"""Value classes without dataclasses (kitbuild/slotted.py), and verify's path kept free of them."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from kitbuild.filescan import FileScan, Leak, ScanPlan
from kitbuild.findings import Finding
from kitbuild.slotted import Slotted


class Pair(Slotted):
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: list[int] | None = None) -> None:
        self.a, self.b = a, [] if b is None else b


def test_values_compare_hash_and_print_by_their_fields() -> None:
    assert Pair(1, [2]) == Pair(1, [2]) and Pair(1, [2]) != Pair(1, [3]) and Pair(1) != Pair(2)
    assert Pair(1) != (1, [])  # a value equals only one of its own class
    assert repr(Pair(1, [2])) == "Pair(a=1, b=[2])"
    assert hash(Leak("KB501", 3, "a path")) == hash(Leak("KB501", 3, "a path"))
    assert len({Leak("KB501", 3, "x"), Leak("KB501", 3, "x"), Leak("KB501", 4, "x")}) == 2
    with pytest.raises(AttributeError):
        Pair(1).c = 3  # type: ignore[attr-defined]  # slots: no field but the declared ones


def test_replace_makes_a_copy_with_changes_and_refuses_unknown_fields() -> None:
    plan = ScanPlan(frozenset({"r"}), frozenset(), placeholders=("w",))
    bigger = plan.replace(block_size=7)
    assert (bigger.block_size, bigger.records, bigger.placeholders) == (7, frozenset({"r"}), ("w",))
    assert plan.block_size != 7 and plan.expect == {} and bigger.expect is plan.expect
    with pytest.raises(TypeError, match="no field 'size'"):
        plan.replace(size=1)


def test_values_pickle_as_their_fields() -> None:
    scan = FileScan("a.json", 3, "ab" * 32, digests={"cd" * 32: [1, 0]}, leaks=[Leak("KB501", 0, "x")], pairs_unread=True)
    assert pickle.loads(pickle.dumps(scan, pickle.HIGHEST_PROTOCOL)) == scan
    finding = Finding("KB104", "a.json", "differs", line=2, expected="x", found="y")
    assert pickle.loads(pickle.dumps(finding)) == finding
    with pytest.raises(ValueError, match="unknown finding code"):
        Finding("KB000", "a.json", "no such code")


def test_verify_imports_no_dataclasses(tmp_path: Path) -> None:
    # dataclasses (and inspect) cost verify 20 to 25 ms before its workers fork (see
    # kitbuild/slotted.py); a module on verify's path that brings them back fails here. jinja2,
    # which imports inspect, comes for the pages only once the workers have forked. (Newer
    # orjsons import dataclasses themselves: what orjson imports is not counted.)
    from commands.verify_kits import build_kit

    build_kit(tmp_path)
    probe = (
        "import sys\n"
        "import orjson\n"
        "watched = ('dataclasses', 'inspect', 'jinja2')\n"
        "before = {m for m in watched if m in sys.modules}\n"
        "new = lambda: sorted(m for m in watched if m in sys.modules and m not in before)\n"
        "from kitbuild import crew, filescan\n"
        "filescan._SERIAL_BELOW_S = 0.0\n"  # workers even for a kit this small
        "real, forks = crew.Crew.start, []\n"
        "def start(self, *a, **k):\n"
        "    forks.append(new())\n"
        "    return real(self, *a, **k)\n"
        "crew.Crew.start = start\n"
        "from kitbuild.commands.verify import verify\n"
        "report = verify(sys.argv[1], jobs=2)\n"
        "print(report.ok, forks[0], 'dataclasses' in new())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "kit")], capture_output=True, text=True, timeout=120)
    assert done.stdout == "True [] False\n", done.stdout + done.stderr
