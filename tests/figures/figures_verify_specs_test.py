"""kitbuild verify of a kit whose provenance.json holds a figure spec a build would refuse (a value
past its range, of the wrong type, or one no recount can use): findings naming provenance.json and
the figure (exit 1), never an internal error or a hang. Every parameter is checked before the
recounts, the pages' tables or their derivations read it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kitbuild import build
from kitbuild.commands.verify import verify

from figkit import AS, FIGURES, ROWS, write_bench

EXTRA: dict[str, Any] = {
    "fused": {"recount": "rrf", "rows": ROWS, "stored": "/search", "k": 60, "n": 1, "lists": [{"rows": ROWS, "ranked": "/search", "weight": 1, "depth": 3}]},
    "family": {"recount": "holm", "family": ["other_vs_hits"], "alpha": 0.05},
    "stated": {"recount": "read", "file": f"{AS}/score/summary.json", "pointer": "/counts/every@5", "of": 5},
}


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("figure-specs")
    build(write_bench(root, figures={**FIGURES, **EXTRA}), jobs=1)
    return root / "kit"


# (figure, key path in its spec, the value provenance.json is given)
CASES = [
    ("hits", ("k",), 1e300),
    ("hits", ("k",), 5.0),
    ("hits", ("k",), 0),
    ("hits", ("k",), "5"),
    ("hits", ("k",), None),
    ("fused", ("k",), 1e300),
    ("fused", ("k",), 1e-300),
    ("fused", ("k",), -1),
    ("fused", ("n",), 1e300),
    ("fused", ("lists", 0, "weight"), 1e300),
    ("fused", ("lists", 0, "weight"), 0),
    ("fused", ("lists", 0, "weight"), "1"),
    ("fused", ("lists", 0, "depth"), 2.5),
    ("fused", ("lists",), "x"),
    ("fused", ("lists",), {"a": 1}),
    ("family", ("alpha",), 1e300),
    ("family", ("alpha",), 0),
    ("stated", ("of",), 1e300),
    ("stated", ("of",), 2.0),
    ("tsv_hits", ("where",), 1),
    ("tsv_hits", ("where",), {"/hit": 1e300}),
    ("tsv_hits", ("where",), []),
    ("by_type", ("figures",), [1]),
    ("by_type", ("order",), "b"),
]


def _set(document: dict[str, Any], figure: str, path: tuple[str | int, ...], value: Any) -> None:
    target: Any = document["figures"][figure]["spec"]
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


@pytest.mark.parametrize(("figure", "path", "value"), CASES, ids=[f"{f}.{'.'.join(map(str, p))}={v!r}" for f, p, v in CASES])
def test_a_spec_a_build_would_refuse_is_a_finding_naming_the_figure(kit: Path, tmp_path: Path, figure: str, path: tuple[str | int, ...], value: Any) -> None:
    copy = Path(shutil.copytree(kit, tmp_path / "kit"))
    document = json.loads((copy / "provenance.json").read_text())
    _set(document, figure, path, value)
    (copy / "provenance.json").write_text(json.dumps(document, indent=2) + "\n")
    report = verify(copy)  # (an internal error would raise here)
    assert report.exit_code == 1
    lines = [str(f) for f in report.findings]
    recount = [line for line in lines if line.startswith("KB703 provenance.json: the figures cannot be recounted: ")]
    assert recount and f"figures.{figure}" in recount[0], lines
    # The pages, whose tables and derivations read the same spec, say so as well.
    assert any(line.startswith("KB602 ") and f"provenance.json: figure {figure!r} has a spec a build would refuse" in line for line in lines), lines

