"""README.md and index.html (issue 2, point 7), checked against golden files.

The golden files in tests/golden/sample-kit/ are the pages, provenance.json and index.json the
sample bench (tests/kittest.py) builds into. After an intended change to a template, a rule's
sentence or the layout of those files, regenerate them and review the diff:

    KITBUILD_REGOLD=1 python -m pytest tests/pages_test.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import kitbuild.pages as pages
from kitbuild import build
from kitbuild.commands.demo import demo
from kitbuild.index import index_bytes
from kitbuild.pages import PAGE_TEMPLATES, TemplateError, page_context, render_pages
from kitbuild.resources import templates_dir

from kittest import make_files, read_tree, write_kit, write_sample_bench

GOLDEN = Path(__file__).parent / "golden" / "sample-kit"
GOLDEN_FILES = ("README.md", "index.html", "provenance.json", "index.json")
REGOLD = os.environ.get("KITBUILD_REGOLD") == "1"


@pytest.fixture
def sample_kit(bench):
    write_sample_bench(bench)
    build("kit.yaml")
    return read_tree(bench / "kit")


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_golden(sample_kit, name):
    if REGOLD:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / name).write_bytes(sample_kit[name])
    assert sample_kit[name] == (GOLDEN / name).read_bytes(), f"{name} differs from tests/golden; see this file's docstring"


def test_pages_render_again_from_the_kit_alone(sample_kit):
    # What verify will do: provenance.json and index.json are all the pages need.
    context = page_context(json.loads(sample_kit["provenance.json"]), json.loads(sample_kit["index.json"]))
    pages = render_pages(context)
    assert pages == {"README.md": sample_kit["README.md"], "index.html": sample_kit["index.html"]}


def test_builtin_readme_has_the_reference_shape(sample_kit):
    readme = sample_kit["README.md"].decode()
    order = [
        "# A tiny kit\n",
        "Records of one learned-sparse run.",
        "- `learned-sparse-2026-11-07/`: the second registered run (9 files).",
        "## The files",
        "| `learned-sparse-2026-11-07/full-s1/run/rows.ndjson` | 62 | `d27463f391c4` |",
        "## What was rewritten, by rule",
        "- **`digest-withheld`**: Where a record printed the sha256",
        "  - `learned-sparse-2026-11-07/score/reading.json`: 2",
        "## What is not here",
        "The smoke runs and the logs.",
        "Licence: CC-BY-4.0.",
    ]
    positions = [readme.index(text) for text in order]
    assert positions == sorted(positions)


def context(**provenance):
    base = {"title": "T <b>", "date": "2026-11-09", "licence": None, "summary": None, "not_here": None,
            "sources": [{"as": "run", "about": None, "files": 1}], "rules": [], "kit": "k",
            "external_digests": {}, "allow": []}
    index = {"kit": "k", "files": [{"path": "run/a.txt", "size": 2, "sha256": "ab" * 32}]}
    return page_context({**base, **provenance}, index)


def test_index_html_escapes_and_readme_does_not():
    pages = render_pages(context())
    assert b"<h1>T &lt;b&gt;</h1>" in pages["index.html"]
    assert pages["README.md"].startswith(b"# T <b>\n")


def test_a_users_template_gets_config_index_and_provenance():
    template = "{{ config.kit }}|{{ config.title }}|{{ index.files[0].path }}|{{ provenance.date }}|{{ folders[0].as }}\n"
    pages = render_pages(context(), {"README.md.j2": template})
    assert pages["README.md"] == b"k|T <b>|run/a.txt|2026-11-09|run\n"


@pytest.mark.parametrize(
    "template, why",
    [
        ("{{ nothing_here }}", "UndefinedError: 'nothing_here' is undefined"),
        ("{{ ''.__class__.__mro__ }}", "SecurityError"),
        ("{% for %}", "TemplateSyntaxError"),
    ],
)
def test_a_bad_user_template_fails_instead_of_printing_nothing(template, why):
    with pytest.raises(TemplateError) as err:
        render_pages(context(), {"README.md.j2": template})
    assert str(err.value).startswith("README.md: the kit's own template README.md.j2 cannot be rendered: ")
    assert why in str(err.value)


def test_a_bad_user_template_stops_the_build_and_writes_nothing(bench, cli):
    make_files(bench, {"src": {"a.txt": "x\n"}, "page.j2": "{{ oops }}\n"})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], readme={"template": "page.j2"})
    result = cli("build")
    assert result.exit_code == 1
    assert result.stderr == (
        "kitbuild: README.md: the kit's own template README.md.j2 cannot be rendered: UndefinedError: 'oops' is undefined\n"
    )
    assert sorted(os.listdir(bench)) == ["kit.yaml", "page.j2", "src"]


def test_file_names_are_escaped_in_index_html_and_kept_in_readme():
    entries = [{"path": "run/a.txt", "size": 2, "sha256": "ab" * 32}, {"path": "run/b <&>.txt", "size": 1_000, "sha256": "cd" * 32}]
    provenance = dict(context()["provenance"], sources=[{"as": "run", "about": None, "files": 2}])
    built = render_pages(page_context(provenance, json.loads(index_bytes("k", entries, {"size": 1, "sha256": "ef" * 32}))))
    assert b"<code>run/b &lt;&amp;&gt;.txt</code>" in built["index.html"]
    assert b"| `run/b <&>.txt` | 1,000 | `cdcdcdcdcdcd` |" in built["README.md"]


def test_the_demo_prints_its_figures(tmp_path):
    kit = demo(tmp_path / "demo").build.out
    pages = render_pages(page_context(json.loads((kit / "provenance.json").read_bytes()), json.loads((kit / "index.json").read_bytes())))
    assert pages == {"README.md": (kit / "README.md").read_bytes(), "index.html": (kit / "index.html").read_bytes()}
    assert b"| BM25 alone: 400 of 470" in pages["README.md"]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda c: c.pop("records"), id="a name the context lacks"),
        pytest.param(lambda c: c["rules"].append({"name": "r", "sentence": "s", "total": "many", "firings": {}}), id="thousands of a text"),
        pytest.param(lambda c: c["rules"].append("a rule that is a text"), id="an attribute of a text"),
        pytest.param(lambda c: c["folders"][0].pop("about"), id="a key a folder lacks"),
    ],
)
def test_a_context_the_built_in_templates_cannot_render_raises_what_verify_reports(change):
    ctx = context()
    change(ctx)
    with pytest.raises((TemplateError, TypeError, ValueError)):  # KB602 in verify
        render_pages(ctx)


def test_the_built_in_templates_are_read_from_the_templates_folder(monkeypatch, tmp_path):
    edited = tmp_path / "templates"
    edited.mkdir()
    for name in PAGE_TEMPLATES.values():
        (edited / name).write_bytes((templates_dir() / name).read_bytes() + b"{{ title }} again\n")
    monkeypatch.setattr(pages, "templates_dir", lambda: edited)
    out = render_pages(context())
    assert out["README.md"].endswith(b"T <b> again\n")
    assert out["index.html"].endswith(b"T &lt;b&gt; again\n")
