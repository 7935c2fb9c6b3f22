"""A template with a mistake in it says where (its line), what is not there, the nearest name that
is and the names there are, in words: never a Python type or repr (issue 40, 'first steps').

The same wording reaches the researcher whose README template it is (a build, exit 2, at
``file:line``) and the reader whose verify renders a kit's template (a KB602 finding at its line).
"""

from __future__ import annotations

import re

import pytest

from kitbuild.pages import TemplateError, render_pages

from commands.verify_kits import build_kit, copy_kit, refresh
from kittest import make_files, write_kit
from pages_test import context

# The page context's names, as a message lists them.
NAMES = (
    "config, date, external_digests, figure_tables, figures, figures_table, files, folders, index, kit_digest, layout, "
    "licence, not_here, provenance, records, rules, summary, title"
)
CONFIG_KEYS = "kit, title, date, licence, summary, sources, allow, external_digests, not_here"

# Each mistake in a README template, and what the message says (after "line N: ").
MISTAKES = {
    "a name misspelt": ("# {{ titel }}\n", 1, f"'titel' is not a name the template is given; did you mean 'title'? The names here are: {NAMES}."),
    "a name far from any": ("x\n{{ zzzz }}\n", 2, f"'zzzz' is not a name the template is given. The names here are: {NAMES}."),
    "a key of the config": ("# {{ title }}\n\n{{ config.licenc }}\n", 3, f"config has no key 'licenc'; did you mean 'licence'? The keys here are: {CONFIG_KEYS}."),
    "a key by index": ("{{ config['kitt'] }}\n", 1, f"config has no key 'kitt'; did you mean 'kit'? The keys here are: {CONFIG_KEYS}."),
    "a loop over a misspelt name": ("{% for f in folderz %}{{ f.as }}{% endfor %}\n", 1, f"'folderz' is not a name the template is given; did you mean 'folders'? The names here are: {NAMES}."),
    "a key of a loop's item": ("{% for f in folders %}\n{{ f.ass }}\n{% endfor %}\n", 2, "f has no key 'ass'; did you mean 'as'? The keys here are: as, about, files, more, count."),
    "a name set in the template": ("{% set total = 3 %}\n{{ totl }}\n", 2, f"'totl' is not a name the template is given; did you mean 'total'? The names here are: {NAMES}, total."),
    "an item past a list's end": ("{{ rules[7].id }}\n", 1, "rules is a list of 0 items, numbered from 0: it has no item 7"),
    "a key of a text": ("{{ title.nope }}\n", 1, "title is a text, which has no 'nope'"),
    "a key of an empty value": ("{{ licence.name }}\n", 1, "licence is empty (none), which has no 'name'"),
    "a filter misspelt": ("\n{{ records|thousand }}\n", 2, "there is no filter 'thousand'; did you mean 'thousands'? There are 56 filters here."),
    "a test misspelt": ("{% if title is strng %}x{% endif %}\n", 1, "there is no test 'strng'; did you mean 'string'? There are 39 tests here."),
    "a template that does not parse": ("a\n{% for f in folders %}\n", 2, "it does not parse: Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'."),
    "an include of nothing": ("{% include 'nope.j2' %}\n", 1, "it includes 'nope.j2', which is not a template here"),
    "Python's internals": ("{{ title.__class__ }}\n", 1, "the sandbox refuses '__class__': a template reads the kit's data, never Python's internals (names starting with '_')"),
    "a text plus a number": ("{{ title + 3 }}\n", 1, "it combines values that do not go together (such as a text and a number), or calls something with the wrong values"),
    "a macro's argument": ("{% macro m(x) %}\n{{ x.nope }}\n{% endmacro %}\n{{ m(config) }}\n", 2, f"x has no key 'nope'. The keys here are: {CONFIG_KEYS}."),
}

# What no message may print: Python's type names and reprs, jinja2's class names.
PYTHON = re.compile(r"object|Error|Undefined|dict\b|str\b|NoneType|FigureView|Traceback|<class")


@pytest.mark.parametrize("template, line, says", list(MISTAKES.values()), ids=list(MISTAKES))
def test_a_mistake_in_a_template_is_told_at_its_line_in_words(template: str, line: int, says: str) -> None:
    with pytest.raises(TemplateError) as err:
        render_pages(context(), {"README.md.j2": template})
    assert (err.value.template, err.value.line, err.value.reason) == ("README.md.j2", line, says)
    assert err.value.message == f"README.md: the kit's own template README.md.j2 cannot be rendered: line {line}: {says}"
    assert not PYTHON.search(err.value.reason), err.value.reason


def test_a_figure_a_template_names_is_suggested_and_listed() -> None:
    figures = {"hits": {"spec": {"recount": "read"}, "value": 3, "text": "3", "of": {"value": 5, "text": "5"}}}
    for template, says in [
        ("{{ figures.hitz }}", "figures has no key 'hitz'; did you mean 'hits'? The keys here are: hits."),
        ("{{ figures.hits.off }}", "figure 'hits' has no part 'off'; did you mean 'of'?"),
    ]:
        with pytest.raises(TemplateError) as err:
            render_pages(context(figures=figures), {"README.md.j2": template})
        assert (err.value.line, err.value.reason) == (1, says)


KIT_YAML = """\
kit: k
title: A kit
date: 2026-11-09
sources:
  - path: src
    as: run
readme:
  template: pages/page.j2
"""


def test_a_build_names_the_templates_file_and_line_exit_2(bench, cli) -> None:
    make_files(bench, {"src": {"a.txt": "x\n"}, "pages": {"page.j2": "# {{ title }}\n\n{{ config.licenc }}\n"}})
    write_kit(bench, KIT_YAML)
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == (
        f"kitbuild: pages/page.j2:3: config has no key 'licenc'; did you mean 'licence'? The keys here are: {CONFIG_KEYS}. "
        "(the README template, named at kit.yaml:8:13: readme.template)\n"
    )
    assert not (bench / "kit").exists()


def test_verify_reports_a_kits_template_at_its_line_in_the_same_words(tmp_path, cli) -> None:
    kit = copy_kit(build_kit(tmp_path / "built", template="# {{ title }}\n"), tmp_path / "kit")
    (kit / "_templates" / "README.md.j2").write_text("# {{ title }}\n{% for f in folders %}\n{{ f.ass }}\n{% endfor %}\n", encoding="utf-8")
    refresh(kit)
    result = cli("verify", kit)
    assert result.exit_code == 1
    [line] = [line for line in result.stdout.splitlines() if "KB602" in line]
    assert line.startswith("  KB602 _templates/README.md.j2:3: cannot be rendered in the sandbox: f has no key 'ass'; did you mean 'as'? The keys here are: as, about, ")
    assert not PYTHON.search(line), line
