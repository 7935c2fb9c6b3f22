"""A figure's numbers that its schema lets through but no recount can use (1e300 for an integer,
.inf or .nan for a number above zero, 5.0 for a count, an integer past 64 bits) are refused at
their key: exit 2 in a build, never an internal error."""

from __future__ import annotations

import re

from pathlib import Path
from typing import Any

import pytest

from kitbuild.figures import FigureSpecError, validate_figures
MAX_WHOLE = 2**53 - 1  # kitbuild.figures.numbers.MAX_WHOLE: whole numbers a double holds exactly

from figkit import AS, FIGURES, ROWS, write_bench

INF, NAN = float("inf"), float("nan")


def at_k(**keys: Any) -> dict[str, Any]:
    return {"x": {"recount": "every_at_k", "rows": "r/rows.ndjson", "ranked": "/r", "gold": "/g", "k": 5, **keys}}


def rrf(weight: Any = 1, depth: Any = None, **keys: Any) -> dict[str, Any]:
    leg = {"rows": "r/rows.ndjson", "ranked": "/r", "weight": weight, **({} if depth is None else {"depth": depth})}
    return {"x": {"recount": "rrf", "rows": "r/rows.ndjson", "stored": "/r", "lists": [leg], **keys}}


def holm(alpha: Any) -> dict[str, Any]:
    return {"p": {"recount": "read", "file": "a.json", "pointer": "/p"}, "x": {"recount": "holm", "family": ["p"], "alpha": alpha}}


def read(**keys: Any) -> dict[str, Any]:
    return {"x": {"recount": "read", "file": "a.json", "pointer": "/p", **keys}}


def count(value: Any) -> dict[str, Any]:
    return {"x": {"recount": "count", "rows": "r/rows.ndjson", "where": {"/a": value}}}


REFUSED = {
    "k huge": (at_k(k=10**30), "figures.x.k: a whole number of 31 digits is too large"),
    "k 1e300": (at_k(k=1e300), "figures.x.k: 1e+300 is too large"),
    "k a decimal": (at_k(k=5.0), "figures.x.k: 5.0 is not a whole number as written"),
    "k infinite": (at_k(k=INF), "figures.x.k: inf is not a number a figure can use"),
    "k true": (at_k(k=True), "figures.x.k: must be of type integer"),
    "k zero": (at_k(k=0), "figures.x.k: "),
    "weight infinite": (rrf(INF), "figures.x.lists[0].weight: inf is not a number a figure can use"),
    "weight nan": (rrf(NAN), "figures.x.lists[0].weight: nan is not a number a figure can use"),
    "weight tiny": (rrf(1e-300), "figures.x.lists[0].weight: 1e-300 is out of range"),
    "weight huge": (rrf(1e300), "figures.x.lists[0].weight: 1e+300 is too large"),
    "weight zero": (rrf(0), "figures.x.lists[0].weight: "),
    "weight negative": (rrf(-1), "figures.x.lists[0].weight: "),
    "weight true": (rrf(True), "figures.x.lists[0].weight: must be of type number"),
    "depth a decimal": (rrf(depth=2.0), "figures.x.lists[0].depth: 2.0 is not a whole number as written"),
    "depth zero": (rrf(depth=0), "figures.x.lists[0].depth: "),
    "rrf k nan": (rrf(k=NAN), "figures.x.k: nan is not a number a figure can use"),
    "rrf k infinite": (rrf(k=INF), "figures.x.k: inf is not a number a figure can use"),
    "rrf k huge": (rrf(k=1e300), "figures.x.k: 1e+300 is too large"),
    "rrf k past its range": (rrf(k=10**7), "figures.x.k: 10000000 is out of range"),
    "rrf k of many digits": (rrf(k=1e-300), "figures.x.k: 1e-300 has more than 3 digits after the point"),
    "rrf k negative": (rrf(k=-1), "figures.x.k: "),
    "n a decimal": (rrf(n=5.0), "figures.x.n: 5.0 is not a whole number as written"),
    "n huge": (rrf(n=1e300), "figures.x.n: 1e+300 is too large"),
    "n true": (rrf(n=True), "figures.x.n: must be of type integer"),
    "at a decimal": (rrf(count="tie_across", at=1.0), "figures.x.at: 1.0 is not a whole number as written"),
    "alpha nan": (holm(NAN), "figures.x.alpha: nan is not a number a figure can use"),
    "alpha infinite": (holm(INF), "figures.x.alpha: "),
    "alpha zero": (holm(0), "figures.x.alpha: "),
    "of a decimal": (read(of=5.0), "figures.x.of: 5.0 is not a whole number as written"),
    "of huge": (read(of=10**30), "figures.x.of: a whole number of 31 digits is too large"),
    "row huge": (read(row=10**30), "figures.x.row: a whole number of 31 digits is too large"),
    "where nan": (count(NAN), 'figures.x.where["/a"]: nan is not a number a figure can use'),
    "where infinite": (count(-INF), 'figures.x.where["/a"]: -inf is not a number a figure can use'),
    "where huge": (count(10**30), 'figures.x.where["/a"]: a whole number of 31 digits is too large'),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_number_no_recount_can_use_is_refused_at_its_key(case: str) -> None:
    spec, says = REFUSED[case]
    with pytest.raises(FigureSpecError) as caught:
        validate_figures(spec)
    assert str(caught.value).startswith(f"kit.yaml: {says}"), str(caught.value)


ACCEPTED = {
    "k": at_k(k=MAX_WHOLE),
    "rrf k 60.5": rrf(k=60.5),
    "rrf k 0": rrf(k=0),
    "weight a half": rrf(0.5, depth=3, n=1),
    "alpha 1": holm(1),
    "of 0": read(of=0, row=7),
    "of a pointer": read(of="/n"),
    "where a decimal": count(1.5),
    "where a large id": count(MAX_WHOLE),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_numbers_a_recount_can_use_still_pass(case: str) -> None:
    validate_figures(ACCEPTED[case])


# Numbers an earlier version took into a kit, which a build now refuses in kit.yaml: a kit's
# stored spec is held only to what keeps its recount safe (tests/golden/kits/big-numbers-0.3.1).
EARLIER = {
    "rrf k of four decimals": rrf(k=60.0001),
    "rrf k past a million": rrf(k=2_000_000),
    "weight tiny": rrf(1e-7),
    "weight past a million": rrf(2e6),
    "where an id past 2**53": count(2**60 + 7),
}


@pytest.mark.parametrize("case", sorted(EARLIER))
def test_a_number_an_earlier_build_took_passes_in_a_stored_spec_and_not_in_kit_yaml(case: str) -> None:
    validate_figures(EARLIER[case], stored=True)
    with pytest.raises(FigureSpecError):
        validate_figures(EARLIER[case])


@pytest.mark.parametrize("case", ["k 1e300", "k a decimal", "k infinite", "weight tiny", "weight huge", "rrf k huge", "rrf k of many digits", "where huge", "of a decimal"])
def test_a_number_no_recount_can_use_is_refused_in_a_stored_spec_too(case: str) -> None:
    with pytest.raises(FigureSpecError):
        validate_figures(REFUSED[case][0], stored=True)


@pytest.mark.parametrize(
    ("figure", "key"),
    [
        ({**FIGURES["hits"], "k": 10**30}, "k"),
        ({**FIGURES["hits"], "k": 1e300}, "k"),
        ({"recount": "rrf", "rows": ROWS, "stored": "/search", "lists": [{"rows": ROWS, "ranked": "/search", "weight": INF}]}, "lists[0].weight"),
        ({"recount": "rrf", "rows": ROWS, "stored": "/search", "lists": [{"rows": ROWS, "ranked": "/search", "weight": NAN}]}, "lists[0].weight"),
        ({"recount": "count", "rows": f"{AS}/score/per-question.tsv", "where": {"/hit": NAN}}, 'where["/hit"]'),
    ],
)
def test_the_build_stops_at_the_key_with_exit_2(bench: Path, cli, figure: dict[str, Any], key: str) -> None:
    # (kit.yaml as YAML writes them: 1000000000000000000000000000000, 1.0e+300, .inf, .nan)
    write_bench(bench, figures={"x": figure}, table=[])
    result = cli("build")
    assert result.exit_code == 2, result.stderr
    # (kit.yaml's reader refuses what JSON cannot hold first, naming a key the user chose by its place)
    said = re.match(r"kitbuild: kit\.yaml:\d+:\d+: (.+?): ", result.stderr)
    assert said and said.group(1) in (f"figures.x.{key}", "figures[key #1]." + re.sub(r'\["[^"]*"\]', "[key #1]", key))
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
