"""Every kind of template error in a text kit.yaml writes (summary, readme.not_here, a source's
about, a figures_table page text) is said in words at its key: exit 2 in a build, as the same
error in readme.template is, a finding in verify; never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kitbuild.figures import FigureSpecError, render_text, views
from kitbuild.pages import TemplateError, page_context

from figkit import write_bench

STORED = {"hits": {"value": 3, "text": "3", "of": {"value": 5, "text": "5"}}}

# Each kind of error: (the text, what the message says after the key).
KINDS = {
    "syntax": ("{{ hits ", "the text does not parse as a template"),
    "undefined": ("{{ hitz }}", "names 'hitz', which is not a figure; did you mean 'hits'?"),
    "type error": ("{{ hits + 1 }}", "cannot be rendered: it combines values that do not go together"),
    "division by zero": ("{{ hits.value / 0 }}", "cannot be rendered: it divides by zero"),
    "overflow": ("{{ 1.5 ** 10000 }}", "cannot be rendered: a number here is too large"),
    "a %-format of the wrong type": ("{{ '%d' % 'a' }}", "cannot be rendered: it combines values"),
    "include": ("{% include 'a' %}", "includes, imports or extends another template"),
    "include of a figure": ("{% include hits %}", "includes, imports or extends another template"),
    "import": ("{% import 'a' as m %}{{ hits }}", "includes, imports or extends another template"),
    "from import": ("{% from 'a' import b %}", "includes, imports or extends another template"),
    "extends": ("{% extends 'a' %}", "includes, imports or extends another template"),
    "a limit of the sandbox": ("{{ 'x' * 10**9 }}", "cannot be rendered: '*' would build 1,000,000,000 characters"),
    "a range past the limit": ("{% for i in range(10**9) %}{% endfor %}", "cannot be rendered: range() of more than 100,000 numbers"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_of_error_in_a_text_is_a_figure_spec_error_naming_its_key(kind: str) -> None:
    text, says = KINDS[kind]
    with pytest.raises(FigureSpecError) as caught:
        render_text(text, views(STORED), "summary")
    assert str(caught.value).startswith(f"summary: {says}")
    assert "Error" not in str(caught.value)  # no Python exception's name


def test_a_python_failure_in_a_text_of_several_lines_names_the_line() -> None:
    with pytest.raises(FigureSpecError) as caught:
        render_text("We hit {{ hits }}.\n\nThat is {{ hits.value / 0 }}.", views(STORED), "readme.not_here")
    assert str(caught.value) == "readme.not_here: cannot be rendered: line 3 of the text: it divides by zero"


PROSE = {"summary": ["summary"], "readme.not_here": ["readme", "not_here"], "sources[0].about": ["sources", 0, "about"]}


@pytest.mark.parametrize("field", sorted(PROSE))
@pytest.mark.parametrize("kind", ["type error", "include", "division by zero", "a limit of the sandbox", "undefined", "syntax"])
def test_a_prose_field_with_a_template_error_stops_the_build_at_its_line(bench: Path, cli, field: str, kind: str) -> None:
    text, says = KINDS[kind]
    config: dict[str, object] = {}
    if field == "summary":
        config["summary"] = text
    write_bench(bench, **config)
    path = bench / "kit.yaml"
    if field != "summary":
        import yaml

        document = yaml.safe_load(path.read_text())
        if field == "readme.not_here":
            document["readme"]["not_here"] = text
        else:
            document["sources"][0]["about"] = text
        path.write_text(yaml.safe_dump(document, sort_keys=False))
    result = cli("build")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("kitbuild: kit.yaml:") and f": {field}: {says}" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", ["type error", "include", "division by zero", "overflow"])
def test_a_kits_prose_with_a_template_error_is_a_page_finding_in_verify(kind: str) -> None:
    # A stranger's provenance.json: the pages cannot be rendered from it (KB602), not a crash.
    text, says = KINDS[kind]
    provenance = {"title": "t", "date": "2026-11-09", "tool": {"version": "0.3.0"}, "figures": STORED, "summary": text, "sources": []}
    with pytest.raises(TemplateError) as caught:
        page_context(json.loads(json.dumps(provenance)), {"files": []}, digest="sha256:0")
    assert caught.value.exit_code == 1 and str(caught.value).startswith(f"summary: {says}")
