"""What a page writer reads when a page names what a figure does not have: the figure, the part
and the part it may have meant; never a Python repr."""

from __future__ import annotations

import pytest

from kitbuild.figures import FigureSpecError, render_text, views

STORED = {
    "by_type": {"value": 2, "text": "2", "parts": {"temporal": {"value": 3, "text": "3"}, "multi-session": {"value": 1, "text": "1"}}},
    "share": {"value": 5, "text": "5", "of": {"value": 9, "text": "9"}},
    "plain": {"value": 7, "text": "7"},
}


def message(text: str) -> str:
    with pytest.raises(FigureSpecError) as caught:
        render_text(text, views(STORED), "readme.figures_table[0].page")
    assert "FigureView" not in str(caught.value) and "object" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{{ by_type.temporl }}", "figure 'by_type' has no part 'temporl'; did you mean 'temporal'?"),
        ('{{ by_type["multi_session"] }}', "figure 'by_type' has no part 'multi_session'; did you mean 'multi-session'?"),
        ("{{ by_type.zzz }}", "figure 'by_type' has no part 'zzz'; its parts are: temporal, multi-session"),
        ("{{ plain.a_only }}", "figure 'plain' has no part 'a_only'; it has no parts"),
        ("{{ plain.of }}", "figure 'plain' counts out of nothing: it has no 'of'"),
        ("{{ by_type.temporal.x }}", "figure 'by_type.temporal' has no part 'x'; it has no parts"),
    ],
)
def test_a_missing_part_names_the_figure_and_the_nearest_part(text: str, says: str) -> None:
    assert message(text) == f"readme.figures_table[0].page: names something that is not a figure or a part of one: {says}"


def test_parts_and_of_that_exist_still_print_and_is_defined_still_answers() -> None:
    figures = views(STORED)
    assert render_text("{{ by_type.temporal }} {{ by_type['multi-session'] }} {{ share }} of {{ share.of }}", figures) == "3 1 5 of 9"
    assert render_text("{% if plain.of is defined %}of{% else %}none{% endif %}", figures) == "none"
    assert render_text("{% for g in by_type %}{{ g.label }}={{ g }};{% endfor %}", figures) == "temporal=3;multi-session=1;"


def test_a_name_the_sandbox_refuses_is_not_a_part() -> None:
    assert message("{{ plain._record }}").endswith("names something that is not a figure or a part of one (a name starting with '_')")


def test_a_filter_no_environment_has_is_named_with_the_nearest_one() -> None:
    # Once an internal error (exit 3): jinja2 finds a missing filter only when it compiles.
    from kitbuild.figures.table import check_text_names

    with pytest.raises(FigureSpecError) as caught:
        check_text_names("{{ plain|thousandz }}", {"plain"}, "summary")
    assert str(caught.value) == "summary: there is no filter 'thousandz'; did you mean 'thousands'? There are 56 filters here."
    assert message("{{ plain|thousandz }}") == "readme.figures_table[0].page: there is no filter 'thousandz'; did you mean 'thousands'? There are 56 filters here."


def test_of_is_suggested_for_a_figure_that_counts_out_of_one() -> None:
    assert message("{{ share.off }}").endswith(": figure 'share' has no part 'off'; did you mean 'of'?")
