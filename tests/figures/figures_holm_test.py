"""holm: a worked family, monotonicity, the cap at 1, and p-values read from a file."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from kitbuild.figures import FigureError, evaluate
from kitbuild.figures.holm import holm_adjust


def test_worked_family():
    # Sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04, raised to 0.06.
    ps = [F("0.01"), F("0.04"), F("0.03"), F("0.005")]
    assert holm_adjust(ps) == [F("0.03"), F("0.06"), F("0.06"), F("0.02")]


def test_step_down_never_lowers_and_caps_at_one():
    assert holm_adjust([F("0.5"), F("0.6")]) == [F(1), F(1)]
    assert holm_adjust([F("0.2"), F("0.9"), F("0.01")]) == [F("0.4"), F("0.9"), F("0.03")]


def test_equal_p_values_keep_family_order():
    assert holm_adjust([F("0.02"), F("0.02")]) == [F("0.04"), F("0.04")]


def test_single_member_is_unchanged():
    assert holm_adjust([F("0.3")]) == [F("0.3")]


def test_evaluated_from_stored_p_values(kit):
    family = {"primary": [{"p": 0.01}, {"p": 0.04}, {"p": 0.03}, {"p": 0.005}]}
    spec = {f"p{i}": {"recount": "read", "file": "family.json", "pointer": f"/primary/{i}/p", "format": "p"} for i in range(4)}
    spec["holm_family"] = {"recount": "holm", "family": ["p0", "p1", "p2", "p3"]}
    values = evaluate(spec, kit({"family.json": family}))
    holm = values["holm_family"]
    assert {name: part.text() for name, part in holm.parts.items()} == {"p0": "0.0300", "p1": "0.0600", "p2": "0.0600", "p3": "0.0200"}
    assert (holm.text(), holm.of) == ("2", 4)  # two at or below 0.05
    assert values["p3"].text() == "0.0050"


def test_alpha_sets_what_the_value_counts(kit):
    spec = {
        "p0": {"recount": "read", "file": "f.json", "pointer": "/a"},
        "p1": {"recount": "read", "file": "f.json", "pointer": "/b"},
        "h": {"recount": "holm", "family": ["p0", "p1"], "alpha": 0.1},
    }
    values = evaluate(spec, kit({"f.json": {"a": 0.04, "b": 0.07}}))
    assert values["h"].value == 2
    assert values["h"].parts["p0"].text() == "0.0800"


def test_a_value_that_is_not_a_p_value_is_an_error(kit):
    spec = {
        "n": {"recount": "read", "file": "f.json", "pointer": "/n"},
        "h": {"recount": "holm", "family": ["n"]},
    }
    with pytest.raises(FigureError) as caught:
        evaluate(spec, kit({"f.json": {"n": 409}}))
    assert str(caught.value) == "figure 'h' cannot be computed: 'n' is '409', not a p-value between 0 and 1"
