"""mcnemar_exact: the exact p against a direct binomial sum, and the pairing of two row figures."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from kitbuild.figures import FigureError, evaluate
from kitbuild.figures.mcnemar import mcnemar_exact_p


def direct_two_sided(b: int, c: int) -> Fraction:
    # The binomial test at one half written out the long way: the probability of every outcome
    # at most as likely as the one seen.
    n = b + c
    pmf = [Fraction(math.comb(n, i), 2**n) for i in range(n + 1)]
    seen = pmf[b]
    return min(Fraction(1), sum((p for p in pmf if p <= seen), Fraction(0)))


def test_reference_pair_gives_p_0_18774():
    p = mcnemar_exact_p(23, 14)
    assert p == direct_two_sided(23, 14)
    assert str(float(p)).startswith("0.18774")
    assert p == Fraction(2 * sum(math.comb(37, i) for i in range(15)), 2**37)


@pytest.mark.parametrize("b,c", [(0, 0), (0, 1), (0, 5), (5, 0), (3, 3), (1, 9), (10, 2), (40, 41), (7, 19)])
def test_matches_direct_binomial_sum(b, c):
    assert mcnemar_exact_p(b, c) == direct_two_sided(b, c)


@pytest.mark.parametrize("b,c", [(b, c) for b in range(0, 60, 7) for c in range(0, 300, 13)])
def test_matches_the_sum_of_binomial_coefficients(b, c):
    n = b + c
    assert mcnemar_exact_p(b, c) == min(Fraction(1), Fraction(2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2**n))


def test_many_discordant_rows_take_seconds_not_hours():
    # 60,000 discordant rows: about 0.3 s; one math.comb for each term took minutes.
    import time

    began = time.process_time()
    p = mcnemar_exact_p(29_000, 31_000)
    assert time.process_time() - began < 20
    assert 0 < float(p) < 1e-6


def test_hand_worked_small_cases():
    assert mcnemar_exact_p(0, 0) == 1  # no discordant rows: no evidence either way
    assert mcnemar_exact_p(0, 5) == Fraction(2, 32)  # 2 * C(5,0) / 2^5
    assert mcnemar_exact_p(1, 4) == Fraction(2 * (1 + 5), 32)  # 12/32
    assert mcnemar_exact_p(4, 4) == 1  # capped: 2 * (more than half) > 1
    assert mcnemar_exact_p(23, 14) == mcnemar_exact_p(14, 23)


def _rows(pattern):
    return [{"qid": f"q{i}", "hit_a": a, "hit_b": b} for i, (a, b) in enumerate(pattern)]


SPEC = {
    "a_every": {"recount": "count", "rows": "r.ndjson", "where": {"/hit_a": True}},
    "b_every": {"recount": "count", "rows": "r.ndjson", "where": {"/hit_b": True}},
    "fusion_vs_bm25": {"recount": "mcnemar_exact", "a": "a_every", "b": "b_every"},
}


def test_pairs_rows_and_reports_counts_difference_and_p(kit):
    pattern = [(True, False)] * 23 + [(False, True)] * 14 + [(True, True)] * 386 + [(False, False)] * 47
    values = evaluate(SPEC, kit({"r.ndjson": _rows(pattern)}))
    test = values["fusion_vs_bm25"]
    assert test.text() == "0.1877"
    assert test.of == 470
    assert {name: part.text() for name, part in test.parts.items()} == {
        "a_hits": "409",
        "b_hits": "400",
        "a_only": "23",
        "b_only": "14",
        "diff": "+9",
    }
    assert test.outcomes["q0"] == 1 and test.outcomes["q23"] == -1 and test.outcomes["q40"] == 0


def test_declared_before_its_inputs_still_computes(kit):
    spec = {"t": SPEC["fusion_vs_bm25"], "a_every": SPEC["a_every"], "b_every": SPEC["b_every"]}
    values = evaluate(spec, kit({"r.ndjson": _rows([(True, False)])}))
    assert list(values) == ["t", "a_every", "b_every"]
    assert values["t"].parts["diff"].text() == "+1"


def test_rows_counted_by_one_side_only_is_an_error(kit):
    spec = {
        "a_every": {"recount": "count", "rows": "r.ndjson", "where": {"/hit_a": True}, "skip": "/hit_b"},
        "b_every": SPEC["b_every"],
        "t": SPEC["fusion_vs_bm25"],
    }
    with pytest.raises(FigureError) as caught:
        evaluate(spec, kit({"r.ndjson": _rows([(False, False), (True, True)])}))
    assert caught.value.exit_code == 1
    assert str(caught.value) == (
        "figure 't' cannot be computed: row 'q1' is counted by 'b_every' and not by 'a_every'; "
        "the two must count the same rows (2 and 1 here)"
    )


def test_a_figure_without_rows_cannot_be_paired(kit):
    spec = {
        "stored": {"recount": "read", "file": "s.json", "pointer": "/n"},
        "b_every": SPEC["b_every"],
        "t": {"recount": "mcnemar_exact", "a": "stored", "b": "b_every"},
    }
    with pytest.raises(FigureError, match="a: 'stored' has no per-row outcomes"):
        evaluate(spec, kit({"s.json": {"n": 3}, "r.ndjson": _rows([(True, True)])}))
