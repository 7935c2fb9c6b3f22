"""What a template makes Python do in C, in one step the sandbox's clock cannot stop, and what
it prints that would differ from one run to the next (kitbuild.pages.walks, .printable).

Each hostile template here, unbounded, would hang a reader's ``kitbuild verify`` of a stranger's
kit for minutes or years: a comparison of two lists that each hold one list twice, forty deep,
walks 2**40 items; wordwrap cuts a long word by copying what is left of it at each cut.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kitbuild.pages import TemplateError, render_pages

from commands.verify_kits import build_kit, copy_kit, refresh
from pages_test import context, render_own

# Two lists that are each a few hundred bytes, and 2**40 items to walk.
TWINS = "{% set ns = namespace(a=[0], b=[0]) %}{% for i in range(40) %}{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}"
TUPLE = "{% set ns = namespace(a=(0,)) %}{% for i in range(40) %}{% set ns.a = (ns.a, ns.a) %}{% endfor %}"
WALKED = "would walk more than 4,194,304 items of a list or dict"

HOSTILE = {
    "==": (TWINS + "{{ ns.a == ns.b }}", "a comparison " + WALKED),
    "in": (TWINS + "{{ ns.a in [ns.b] }}", "a comparison " + WALKED),
    "a comparing test": (TWINS + "{{ ns.a is eq ns.b }}", "a comparison " + WALKED),
    "a dict's key": (TUPLE + "{{ {ns.a: 1} }}", "a comparison " + WALKED),
    "a lookup": (TUPLE + "{{ provenance[ns.a] }}", "a lookup " + WALKED),
    "sort": (TWINS + "{{ [ns.a, ns.b]|sort }}", "the filter 'sort' " + WALKED),
    "unique": (TUPLE + "{{ [ns.a, ns.a]|unique|list }}", "the filter 'unique' " + WALKED),
    "max": (TWINS + "{{ [ns.a, ns.b]|max }}", "the filter 'max' " + WALKED),
    "select": (TWINS + "{{ [ns.a]|select('eq', ns.b)|list }}", "the filter 'select' " + WALKED),
    "list.count": (TWINS + "{{ [ns.a].count(ns.b) }}", "count() " + WALKED),
    "list.sort": (TWINS + "{% set l = [ns.a, ns.b] %}{{ l.sort() }}", "sort() " + WALKED),
    "loop.changed": (TWINS + "{% for x in [ns.a, ns.b] %}{{ loop.changed(x) }}{% endfor %}", "changed() " + WALKED),
    "a long word wrapped": ("{{ ('a' * 4000000)|wordwrap(1) }}", "the filter 'wordwrap' would cut too many long words"),
    "long spaces wrapped": ("{{ ('x' ~ ' ' * 4000000 ~ 'x')|wordwrap(3) }}", "the filter 'wordwrap' would cut too many long words"),
    "many long words wrapped": ("{{ (('a' * 30000 ~ ' ') * 200)|wordwrap(1) }}", "the filter 'wordwrap' would cut too many long words"),
}


@pytest.mark.parametrize("template, why", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_step_python_takes_in_c_is_measured_before_it_is_taken(template, why):
    started = time.monotonic()
    with pytest.raises(TemplateError) as err:
        render_own(template)
    assert time.monotonic() - started < 10
    assert why in err.value.reason, err.value.reason


def test_what_a_page_may_compare_sort_and_wrap_still_renders():
    page = render_own(
        "{{ files|sort(attribute='path')|map(attribute='path')|join }} {{ 'run/a.txt' in files|map(attribute='path') }} "
        "{{ [(1, 2), (1, 2)]|unique|list|length }} {{ {(1, 2): 'x'}[(1, 2)] }} {{ ('a ' * 100 ~ 'b' * 70)|wordwrap(5)|length }}"
    )["README.md"]
    assert page == b"run/a.txt True 1 x 284"  # (as jinja2 wraps it unbounded)


def test_verify_stops_on_a_travelling_template_that_compares_without_end(tmp_path):
    kit = copy_kit(build_kit(tmp_path / "built", template="# {{ title }}\n"), tmp_path / "kit")
    (kit / "_templates" / "README.md.j2").write_text(HOSTILE["=="][0], encoding="utf-8")
    refresh(kit)
    done = subprocess.run([sys.executable, "-m", "kitbuild", "verify", str(kit)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (1, "")
    [line] = [line for line in done.stdout.splitlines() if "KB602" in line]
    assert line.startswith("  KB602 _templates/README.md.j2:1: cannot be rendered in the sandbox: a comparison " + WALKED)


def test_a_random_item_is_not_there():
    # A page with one would render again the same only by chance: a build that happened to
    # pass would leave a kit that fails verify half the time.
    with pytest.raises(TemplateError, match="line 1: there is no filter 'random'"):
        render_own("{{ [1, 2]|random }}")


@pytest.mark.parametrize(
    "template",
    [
        "{{ title.upper }}", "{{ files|map(attribute='path') }}", "{{ cycler(1, 2) }}", "{{ joiner() }}", "{{ range }}", "{{ [title.upper] }}", "{{ {'a': range} }}",
        # made text on the way: by '~', a filter, '%' or a text's method
        "{{ 'x' ~ title.upper }}", "{{ [title.upper]|join }}", "{{ title.upper|string }}", "{{ title.upper|upper }}", "{{ '%s' % title.upper }}",
        "{{ '{}'.format(title.upper) }}", "{{ '%s'|format(cycler(1)) }}", "{% set t = 'a' ~ joiner() %}{{ t|length }}",
    ],
)
def test_a_value_printed_by_its_address_is_refused_at_its_line(template):
    with pytest.raises(TemplateError) as err:
        render_own("\n" + template)
    assert err.value.line == 2
    assert err.value.reason.startswith("it prints a function, a method or an iterator (such as a filter's result before '|list')")


def test_values_made_text_from_texts_and_figures_still_render():
    figures = {"x": {"spec": {"recount": "read", "file": "run/a.json", "pointer": "/n"}, "value": 3, "text": "3"}}
    template = "{{ 'n=' ~ figures.x }} {{ [figures.x, 'y']|join(',') }} {{ '%s'|format(figures.x) }} {{ files|map(attribute='path')|join }}"
    assert render_pages(context(figures=figures), {"README.md.j2": template})["README.md"] == b"n=3 3,y 3 run/a.txt"


def test_figures_printed_as_a_dict_print_their_texts():
    figures = {"x": {"spec": {"recount": "read", "file": "run/a.json", "pointer": "/n"}, "value": 3, "text": "3"}}
    page = render_pages(context(figures=figures), {"README.md.j2": "{{ figures }} {{ figures.x.rows }}"})["README.md"]
    assert page == b"{'x': '3'} []"
