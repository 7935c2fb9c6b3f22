"""README.md and index.html (issue 2, point 7), checked against golden files.

The golden files in tests/golden/sample-kit/ are the pages, provenance.json and index.json the
sample bench (tests/kittest.py) builds into. After an intended change to a template, a rule's
sentence or the layout of those files, regenerate them and review the diff:

    KITBUILD_REGOLD=1 python -m pytest tests/pages_test.py
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kitbuild.pages.sandbox as pages  # (the limits, the filters and the pages environment live there)
from kitbuild import build
from kitbuild.index import index_bytes
from kitbuild.pages import PAGE_TEMPLATES, TemplateError, page_context, render_pages
from kitbuild.pages.compiled import CompiledTemplates
from kitbuild.resources import templates_dir

from commands.verify_kits import build_kit, copy_kit, refresh
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


def test_templates_are_compiled_once_and_a_changed_one_again(monkeypatch):
    # A process renders many kits (a test suite, a verify of several): each template is compiled
    # once, and a kit's own template of the same name but other text is never taken for it.
    compiled: list[str] = []
    compile = pages._BoundedEnvironment.compile

    def counted(self, source, name=None, *args, **kwargs):
        compiled.append(name)
        return compile(self, source, name, *args, **kwargs)

    monkeypatch.setattr(pages, "COMPILED", CompiledTemplates())
    monkeypatch.setattr(pages._BoundedEnvironment, "compile", counted)
    for _ in range(3):
        assert render_pages(context(), {"README.md.j2": "one {{ config.kit }}\n"})["README.md"] == b"one k\n"
    assert len(compiled) == 2 and "README.md.j2" in compiled, compiled  # and the built-in index.html.j2
    assert render_pages(context(), {"README.md.j2": "two {{ config.kit }}\n"})["README.md"] == b"two k\n"
    assert len(compiled) == 3
    # One kept for each name: a kit's own template's earlier text is not.
    assert sum(code.co_filename == "README.md.j2" for _, code in pages.COMPILED.compiled.values()) == 1
    # The source is known by its SHA-256 (jinja2's own cache compares SHA-1s, which can be made to agree).
    assert pages.COMPILED.get_source_checksum("two {{ config.kit }}\n") == hashlib.sha256(b"two {{ config.kit }}\n").hexdigest()


@pytest.mark.parametrize(
    "template, why",
    [
        ("{{ nothing_here }}", "line 1: 'nothing_here' is not a name the template is given; did you mean 'not_here'? The names here are: config, date, "),
        ("{{ ''.__class__.__mro__ }}", "line 1: the sandbox refuses '__class__': a template reads the kit's data, never Python's internals"),
        ("{% for %}", "line 1: it does not parse: Expected an expression, got 'end of statement block'"),
    ],
)
def test_a_bad_user_template_fails_instead_of_printing_nothing(template, why):
    with pytest.raises(TemplateError) as err:
        render_pages(context(), {"README.md.j2": template})
    assert str(err.value).startswith("README.md: the kit's own template README.md.j2 cannot be rendered: ")
    assert why in str(err.value)


KIT_YAML = """\
kit: k
title: A kit
date: 2026-11-09
sources:
  - path: src
    as: run
readme:
  template: page.j2
"""


@pytest.mark.parametrize(
    "template, why",
    [
        (b"{{ oops }}\n", "page.j2:1: 'oops' is not a name the template is given. The names here are: citation, config, date, "),
        (b"{{ 'x' * 10**9 }}\n", "page.j2:1: '*' would build 1,000,000,000 characters or items, more than the limit of 16,777,216 for one step; build less at once"),
        (b"\n{% for i in range(10**9) %}{% endfor %}", "page.j2:2: range() of more than 100,000 numbers is over the limit; loop over fewer"),
        (b"# caf\xe9\n", "is not UTF-8 text (byte 5); save it as UTF-8."),
    ],
    ids=["undefined", "too big", "too long", "not UTF-8"],
)
def test_a_bad_user_template_stops_the_build_naming_it_and_writes_nothing(bench, cli, template, why):
    # The kit's own template is the researcher's input: exit 2, at the kit.yaml line that names it.
    make_files(bench, {"src": {"a.txt": "x\n"}})
    (bench / "page.j2").write_bytes(template)
    write_kit(bench, KIT_YAML)
    result = cli("build")
    assert result.exit_code == 2
    if why.startswith("page.j2:"):  # a line of it at fault: named at that line
        assert result.stderr.startswith(f"kitbuild: {why}") and result.stderr.endswith(" (the README template, named at kit.yaml:8:13: readme.template)\n")
    else:
        assert result.stderr == f"kitbuild: kit.yaml:8:13: readme.template: page.j2 {why}\n"
    assert sorted(os.listdir(bench)) == ["kit.yaml", "page.j2", "src"]


def test_file_names_are_escaped_in_index_html_and_kept_in_readme():
    entries = [{"path": "run/a.txt", "size": 2, "sha256": "ab" * 32}, {"path": "run/b <&>.txt", "size": 1_000, "sha256": "cd" * 32}]
    provenance = dict(context()["provenance"], sources=[{"as": "run", "about": None, "files": 2}])
    built = render_pages(page_context(provenance, json.loads(index_bytes("k", entries, {"size": 1, "sha256": "ef" * 32}))))
    assert b"<code>run/b &lt;&amp;&gt;.txt</code>" in built["index.html"]
    assert b"| `run/b <&>.txt` | 1,000 | `cdcdcdcdcdcd` |" in built["README.md"]


def test_the_demo_prints_its_figures(demo_kit):
    kit = demo_kit
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


@pytest.mark.parametrize("version", ["0.3.0", "0.2.0"])
def test_the_built_in_templates_are_read_from_the_templates_folder(monkeypatch, tmp_path, version):
    # (A kit built before 0.3.0 is rendered with the templates of templates/0.2/.)
    edited = tmp_path / "templates"
    for folder in ("", "0.2/"):
        (edited / folder).mkdir(parents=True, exist_ok=True)
        for name in PAGE_TEMPLATES.values():
            (edited / folder / name).write_bytes((templates_dir() / folder / name).read_bytes() + f"{{{{ title }}}} {folder or 'new'}\n".encode())
    monkeypatch.setattr(pages, "templates_dir", lambda: edited)
    out = render_pages(context(tool={"name": "kitbuild", "version": version}))
    which = "new" if version == "0.3.0" else "0.2/"
    assert out["README.md"].endswith(f"T <b> {which}\n".encode())
    assert out["index.html"].endswith(f"T &lt;b&gt; {which}\n".encode())


# -- the bounded sandbox ----------------------------------------------------------------------------

# Every construct the bounded environment hooks (loops, calls, filters, operators, '~', blocks),
# used the way a page would use them.
EVERY_HOOK = """\
{% macro row(f, mark='-') %}{{ mark }} {{ f.path ~ ' (' ~ f.size ~ ')' }}{% endmacro %}
{% macro called(f) %}{{ row(f, '*') }}{{ caller() }}{% endmacro %}
{% for f in files %}{{ row(f) }}{% if loop.last %} [{{ loop.length }}]{% endif %}
{% else %}none
{% endfor %}
{% call called(files[0]) %} called{% endcall %}
{% set block %}{{ title|upper }} {{ '%s of %d'|format('a', 2) }} {{ '{:>6}'.format('b') }}{% endset %}{{ block }}
{% filter replace('x', 'y') %}x{{ 'x' * 3 }}x{% endfilter %}
{{ 'ab' + 'cd' }} {{ [1, 2] + [3] }} {{ 2 ** 10 }} {{ 7 % 3 }} {{ '%05.1f' % 3.14159 }} {{ 3 * 'z' }}
{% for i in range(3) %}{{ i }}{{ ', ' if not loop.last }}{% endfor %}
{{ range(5)|batch(2, 0)|list }} {{ range(5)|slice(2)|list }} {{ [[1], [2]]|sum(start=[]) }} {{ ['a', 'b']|join('/') }}
{{ 'x'|center(5) }}|{{ 'a\\nb'|indent(2) }}|{{ 'long words here'|wordwrap(5) }}|{{ 'truncate me please'|truncate(9, leeway=0) }}
{{ {'b': 1, 'a': [1, 'x']}|tojson }} {{ {'a': 1}|dictsort }} {{ files|map(attribute='size')|sum }} {{ [3, 1, 2]|sort }}
{% set ns = namespace(items=[]) %}{% for f in files %}{% set _ = ns.items.append(f.size) %}{% endfor %}{{ ns.items }}
{{ 'a-b'.replace('-', '+') }} {{ '-'.join(['a', 'b']) }} {{ 'x'.ljust(3) }}| {{ dict(a=1) }} {{ cycler('a', 'b').next() }}
{% for k, v in {'k': [1, 2]}.items() recursive %}{{ k }}={{ v }}{% endfor %}
{{ title[1:4] }} {{ (files[::-1]|first).path }} {% for f in files[:1] %}{{ f.size }}{% endfor %}
"""


def _jinja2(template: str, name: str, ctx) -> str:
    """``template`` rendered by jinja2's own sandbox, set as the pages' environment is."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        loader=jinja2.DictLoader({name: template}),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pages.FILTERS)
    return env.get_template(name).render(ctx)


def test_the_bounded_sandbox_renders_what_jinja2_renders():
    ctx = context(title="T <b> & more")
    ctx["files"] = [{"path": "run/a <&>.txt", "size": 2}, {"path": "run/b.txt", "size": 1_000}]
    readme = render_pages(ctx, {"README.md.j2": EVERY_HOOK})["README.md"].decode()
    assert readme == _jinja2(EVERY_HOOK, "README.md.j2", ctx)
    assert readme.startswith("- run/a <&>.txt (2)- run/b.txt (1000) [2]* run/a <&>.txt (2) calledT <B> & MORE a of 2      b\nyyyyyabcd")
    # Escaped where the page is HTML: '~' joins markup as jinja2 would.
    html = "{% autoescape true %}{{ title ~ '<i>' }}{% endautoescape %}" + EVERY_HOOK
    env = pages._pages_environment({"page.html": html})
    page = env.render_page("page.html", ctx)
    assert page == _jinja2(html, "page.html", ctx)
    assert page.startswith("T &lt;b&gt; &amp; more&lt;i&gt;- run/a &lt;&amp;&gt;.txt (2)")


def render_own(template: str) -> dict[str, bytes]:
    return render_pages(context(), {"README.md.j2": template})


def copies(expression: str) -> str:
    """Ten copies of a text of ten million characters, each kept."""
    return "{% set a = 'x' * 10000000 %}" + "".join(f"{{% set a{i} = {expression} %}}" for i in range(10))


# Each hostile template, and what its error says (after "cannot be rendered: ").
HOSTILE = {
    "a long range": ("{% for i in range(10**9) %}{% endfor %}", "range() of more than 100,000 numbers is over the limit; loop over fewer"),
    "a text times a billion": ("{{ 'x' * 10**9 }}", "'*' would build 1,000,000,000 characters or items, more than the limit of 16,777,216 for one step"),
    "a list times a billion": ("{{ ([0] * 1000000000)|length }}", "'*' would build 1,000,000,000 characters or items"),
    "a huge power": ("{{ 2 ** 1000000000 }}", "it would compute a number of about 2,000,000,000 bits, more than the limit of 65,536"),
    "a text doubled by ~": ("{% set a = 'x' %}" + "{% set a = a ~ a %}" * 40, "'~' would build 33,554,432 characters or items"),
    "a list doubled by +": ("{% set a = [0] %}" + "{% set a = a + a %}" * 40, "'+' would build 33,554,432 characters or items"),
    "a list doubled in place": ("{% set a = [0] %}{% for i in range(40) %}{% set _ = a.extend(a) %}{% endfor %}", "extend() would build 33,554,432"),
    "a list of lists printed": ("{% set a = [0] %}" + "{% set a = [a, a] %}" * 40 + "{{ a }}", "printing a list or dict would build"),
    "a list of lists joined": ("{% set a = [0] %}" + "{% set a = [a, a] %}" * 40 + "{{ a|join }}", "the filter 'join' would build"),
    "a wide center": ("{{ 'x'|center(10**9) }}", "the filter 'center' would build 1,000,000,000"),
    "a wide ljust": ("{{ 'x'.ljust(10**9) }}", "ljust() would build 1,000,000,000"),
    "a wide format field": ("{{ '{:>1000000000}'.format(1) }}", "format() would build 1,000,000,022"),
    "a wide %-format": ("{{ '%1000000000d' % 1 }}", "'%' would build 1,000,000,020"),
    "a replace that multiplies": ("{% set a = 'x' * 100000 %}{{ a|replace('x', a) }}", "the filter 'replace' would build 10,000,000,000"),
    "a batch padded to a billion": ("{{ [1]|batch(10**9, 0)|list }}", "batch() asks for 1,000,000,000 items, more than the limit of 100,000"),
    "a billion slices": ("{{ [1]|slice(10**9)|list }}", "slice() asks for 1,000,000,000 items, more than the limit of 100,000"),
    "a sum of lists": ("{{ ([[0] * 4000] * 4000)|sum(start=[])|length }}", "the filter 'sum' would build"),
    "texts joined by ~": (copies("a ~ '!'"), "it builds more than 67,108,864 characters and items in all"),
    "texts sliced": (copies("a[::-1]"), "it builds more than 67,108,864"),
    "texts from a method": (copies("a.upper()"), "it builds more than 67,108,864"),
    "texts from a filter": (copies("a|upper"), "it builds more than 67,108,864"),
    "lists of characters": (copies("a|list"), "it builds more than 67,108,864"),
    "blocks of text": ("".join(f"{{% set b{k} %}}{{% for i in range(100000) %}}{'y' * 100}{{% endfor %}}{{% endset %}}" for k in range(10)), "it builds more than 67,108,864"),
    "a huge page": ("{% for i in range(100000) %}" + "z" * 1000 + "{% endfor %}", "it would write more than 67,108,864 characters, the limit for one page"),
    "a macro calling itself": ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "its calls nest more than 64 deep"),
    "a template including itself": ("x{% include 'README.md.j2' %}", "it nests too deep (a macro or {% include %} that calls itself without end?)"),
    "a list nested a million deep": ("{% set ns = namespace(a=0) %}{% for i in range(100000) %}{% set ns.a = [ns.a] %}{% endfor %}{{ ns.a }}", "it nests too deep"),
}


@pytest.mark.parametrize("template, why", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_template_past_a_limit_stops_quickly_saying_which(template, why):
    started = time.monotonic()
    with pytest.raises(TemplateError) as err:
        render_own(template)
    assert time.monotonic() - started < 5
    assert err.value.template == "README.md.j2"
    assert err.value.message.startswith("README.md: the kit's own template README.md.j2 cannot be rendered: ")
    assert why in err.value.reason, err.value.reason


@pytest.mark.parametrize(
    "template, line",
    [
        ("# {{ title }}\n\n{% for i in range(10**9) %}{% endfor %}\n", 3),
        ("a\n{{ 'x' * 10**9 }}\n", 2),
        ("{% macro m() %}\n\n{{ m() }}{% endmacro %}\n{{ m() }}", 3),
        ("a\nb\n{{ 2 ** 1000000000 }}", 3),
    ],
)
def test_a_template_past_a_limit_is_told_at_the_line_that_reached_it(template, line):
    with pytest.raises(TemplateError) as err:
        render_own(template)
    assert (err.value.template, err.value.line) == ("README.md.j2", line)
    assert f"cannot be rendered: line {line}: " in err.value.message


@pytest.mark.parametrize(
    "template",
    [
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(60) }}",
        "{% for i in range(100000) %}{% for f in files %}{% for g in files %}{{ f.path[:0] }}{% endfor %}{% endfor %}{% endfor %}",
    ],
    ids=["nested loops", "a macro calling itself twice", "loops over the kit's files"],
)
def test_a_template_that_runs_too_long_stops_at_the_time_limit(monkeypatch, template):
    monkeypatch.setattr(pages, "RENDER_SECONDS", 0.5)
    started = time.monotonic()
    with pytest.raises(TemplateError) as err:
        render_own(template)
    assert time.monotonic() - started < 3
    assert err.value.reason.startswith("it ran longer than 0.5 seconds, the time limit for rendering the pages; make it do less work")


def test_loops_stop_past_their_items_in_all(monkeypatch):
    monkeypatch.setattr(pages, "MAX_LOOP_ITEMS", 1_000)
    render_own("{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}")  # 110 items
    with pytest.raises(TemplateError) as err:
        render_own("{% for i in range(10) %}{% for j in range(100) %}{% endfor %}{% endfor %}")  # 1,010
    assert "its loops take more than 1,000 items in all" in err.value.reason


def test_lipsum_is_not_there():
    # Random placeholder text: a page made with it would never render the same twice.
    with pytest.raises(TemplateError, match="line 1: 'lipsum' is not a name the template is given"):
        render_own("{{ lipsum(10**9) }}")


def test_a_template_that_fails_in_python_is_a_template_error():
    with pytest.raises(TemplateError, match="cannot be rendered: line 1: it divides by zero$"):
        render_own("{{ 1 / 0 }}")


@pytest.mark.parametrize("template, why", [HOSTILE["a long range"], HOSTILE["a text times a billion"], HOSTILE["a template including itself"]])
def test_verify_reports_a_travelling_template_past_a_limit(tmp_path, template, why):
    # A kit built with a harmless template of its own, then given a hostile one, its pins made
    # to match as a tamperer would.
    kit = copy_kit(build_kit(tmp_path / "built", template="# {{ title }}\n"), tmp_path / "kit")
    (kit / "_templates" / "README.md.j2").write_text(template, encoding="utf-8")
    refresh(kit)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "kitbuild", "verify", str(kit)], capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert (done.returncode, done.stderr) == (1, "")
    [line] = [line for line in done.stdout.splitlines() if "KB602" in line]
    assert line.startswith("  KB602 _templates/README.md.j2:1: cannot be rendered in the sandbox: ")
    assert why in line


@pytest.mark.parametrize("text, why", [HOSTILE["a text times a billion"], HOSTILE["a long range"]])
def test_a_figure_page_text_past_a_limit_is_a_template_error(text, why):
    # A figures_table row of a stranger's provenance.json is rendered by verify too, in the same sandbox.
    started = time.monotonic()
    with pytest.raises(TemplateError) as err:
        context(figures_table=[{"page": "fine", "files": [], "fields": []}, {"page": text, "files": [], "fields": []}])
    assert time.monotonic() - started < 5
    assert err.value.message.startswith("figures_table: readme.figures_table[1].page: cannot be rendered: ")
    assert why in err.value.message


def test_a_figures_tables_texts_share_one_clock(monkeypatch):
    monkeypatch.setattr(pages, "RENDER_SECONDS", 0.5)
    slow = "{% for i in range(50000) %}{% endfor %}"  # well under 0.5 s alone
    started = time.monotonic()
    with pytest.raises(TemplateError, match="it ran longer than 0.5 seconds"):
        context(figures_table=[{"page": slow, "files": [], "fields": []}] * 200)
    assert time.monotonic() - started < 3


# -- the pages from kitbuild 0.3.0 on (issue 40) ----------------------------------------------------

DEMO_GOLDEN = Path(__file__).parent / "golden" / "demo-kit"
NEW = {"name": "kitbuild", "version": "0.3.0"}
# The reference kit's sections (shared/reference/rrf-data-kit-README.md), in its order.
REFERENCE_SECTIONS = [
    "## Where each figure on the page comes from",
    "## How the figures were counted",
    "## What was rewritten, by rule",
    "## What is not here",
]


@pytest.mark.parametrize("name", ["README.md", "index.html"])
def test_demo_golden(demo_kit, name):
    # The demo kit's pages, reviewed as a diff when a template, a sentence or the demo changes.
    if REGOLD:
        DEMO_GOLDEN.mkdir(parents=True, exist_ok=True)
        (DEMO_GOLDEN / name).write_bytes((demo_kit / name).read_bytes())
    assert (demo_kit / name).read_bytes() == (DEMO_GOLDEN / name).read_bytes(), f"{name} differs from tests/golden/demo-kit; see this file's docstring"


def test_the_demo_readme_has_every_section_of_the_reference_kit_in_its_order(demo_kit):
    readme = (demo_kit / "README.md").read_text()
    positions = [readme.index(f"\n{section}\n") for section in REFERENCE_SECTIONS]
    assert positions == sorted(positions)


def test_figures_cited_in_the_summary_come_out_as_their_numbers(demo_kit):
    readme = (demo_kit / "README.md").read_text()
    summary = readme.splitlines()[2]
    assert "{{" not in readme
    assert summary.endswith(
        "The page counts **every@5**: the answerable questions (470 of 500) whose every answer-holding session is in a list's top 5. "
        "BM25 alone finds 400, the registered fusion 409 (+9, p 0.1877), and the learned-sparse run's three fusions 417, 422 and 425."
    )
    html = (demo_kit / "index.html").read_text()
    assert "The page counts <strong>every@5</strong>: the answerable questions (470 of 500)" in html


def test_verify_finds_a_cited_number_the_files_do_not_back(demo_kit, tmp_path):
    # The summary says the registered fusion found 409; edited stored figures say 410 while the
    # rows still count 409: the summary line of each page is named (KB706).
    kit = copy_kit(demo_kit, tmp_path / "kit")
    provenance = json.loads((kit / "provenance.json").read_bytes())
    provenance["figures"]["a2_every5"].update(value=410, text="410")
    (kit / "provenance.json").write_bytes(json.dumps(provenance, indent=2).encode() + b"\n")
    refresh(kit)
    from kitbuild import verify

    lines = [str(f) for f in verify(kit).findings if f.code == "KB706"]
    assert "KB706 README.md:3: prints figure 'a2_every5' as provenance.json stores it, 410 of 470; the kit's files recount 409 of 470" in lines
    assert any(line.startswith("KB706 index.html:") for line in lines)


def test_a_citation_of_no_figure_names_the_field_and_the_figure_meant():
    with pytest.raises(TemplateError) as err:
        context(tool=NEW, summary="BM25 finds {{ hitz }}.", figures={"hits": {"spec": {"recount": "read"}, "value": 3, "text": "3"}})
    assert err.value.message == "summary: names 'hitz', which is not a figure; did you mean 'hits'?"


def test_kit_yaml_prose_citing_no_figure_is_placed_at_its_line(tmp_path):
    from kitbuild.figures.errors import FigureSpecError
    from kitbuild.figures.table import check_prose_names
    from kitbuild.yamlfile import load_yaml

    (tmp_path / "kit.yaml").write_text(
        "kit: k\ntitle: T\nsummary: fine {{ hits }}\nsources:\n  - path: src\n    as: run\n    about: 'has {{ hits.of }}'\n"
        "readme:\n  not_here: 'the {{ hist }} are elsewhere'\n"
    )
    doc = load_yaml(tmp_path / "kit.yaml", "kit.yaml")
    with pytest.raises(FigureSpecError) as err:
        check_prose_names(doc.data, {"hits"}, doc.where)
    assert err.value.message == "kit.yaml:9:13: readme.not_here: names 'hist', which is not a figure; did you mean 'hits'?"
    check_prose_names(doc.data, {"hits", "hist"}, doc.where)


@pytest.mark.parametrize(
    "summary, why",
    [
        ("{{ ''.__class__ }}", "a name starting with '_'"),
        ("{% for i in range(10**9) %}{% endfor %}", "range() of more than 100,000 numbers"),
        ("{{ hits", "does not parse as a template"),
    ],
)
def test_cited_prose_is_rendered_in_the_bounded_sandbox(summary, why):
    with pytest.raises(TemplateError) as err:
        context(tool=NEW, summary=summary, figures={"hits": {"spec": {"recount": "read"}, "value": 3, "text": "3"}})
    assert err.value.message.startswith("summary: ") and why in err.value.message


def test_a_kit_built_before_0_3_prints_its_prose_as_it_did():
    # Braces in an old kit's summary were printed raw; re-rendered now, they still are.
    pages = render_pages(context(summary="Raw {{ braces }} and **stars**", tool={"name": "kitbuild", "version": "0.2.0"}))
    assert b"\nRaw {{ braces }} and **stars**\n" in pages["README.md"]
    assert b"<p>Raw {{ braces }} and **stars**</p>" in pages["index.html"]


def test_index_html_renders_the_prose_markdown_safely():
    summary = "A **kit**, [a link](https://example.org/x) <script>alert(1)</script> [bad](javascript:alert(1)) ![img](https://example.org/i.png)"
    html = render_pages(context(tool=NEW, summary=summary, not_here="- one\n- two"))["index.html"].decode()
    assert "<p>A <strong>kit</strong>, <a href=\"https://example.org/x\">a link</a> &lt;script&gt;alert(1)&lt;/script&gt; [bad](javascript:alert(1)) " in html
    assert "<img" not in html and "<script" not in html
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in html


def test_a_group_tables_columns_are_labelled():
    figures = {
        "bm25_every5": {"spec": {"recount": "every_at_k", "label": "BM25 (A0)"}, "value": 1, "text": "1"},
        "a2_every5": {"spec": {"recount": "every_at_k"}, "value": 1, "text": "1"},
        "by": {"spec": {"recount": "group_by", "figures": ["bm25_every5", "a2_every5"], "by": "/type"}, "value": 1, "text": "1",
               "parts": {"x": {"value": 2, "text": "2", "parts": {"bm25_every5": {"value": 1, "text": "1"}, "a2_every5": {"value": 1, "text": "1"}}}}},
    }
    pages = render_pages(context(tool=NEW, figures=figures))
    assert b"| type | rows | BM25 (A0) | a2 every5 |\n" in pages["README.md"]
    assert b'<th class="n">BM25 (A0)</th><th class="n">a2 every5</th>' in pages["index.html"]


def _section_texts(readme: str) -> list[str]:
    return [line[3:] for line in readme.splitlines() if line.startswith("## ")]


def test_index_html_says_everything_the_readme_says(demo_kit):
    readme = (demo_kit / "README.md").read_text()
    html = (demo_kit / "index.html").read_text()
    provenance = json.loads((demo_kit / "provenance.json").read_bytes())
    from markupsafe import escape

    for section in _section_texts(readme):
        assert f">{escape(section)}</h2>" in html, section
    for rule in provenance["rules"]:
        for path, n in rule["firings"].items():
            assert f"<code>{path}</code></a>: {n:,}</li>" in html
    for digest in provenance["external_digests"]:
        assert f"<code>{digest}</code>" in html
    for name in provenance["figures"]:
        assert f'<li id="figure-{name}">' in html
    assert html.count("nothing here counts it again") == readme.count("nothing here counts it again") > 0
    assert "<p>The registrations and the bench's internal results records are not here: they name machines" in html


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def html5_problems(page: str) -> list[str]:
    """What keeps ``page`` from being a well-formed, self-contained HTML5 page a phone can read."""
    from html.parser import HTMLParser

    problems: list[str] = []
    counts = {"h1": 0, "viewport": 0}

    class Checker(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.open: list[str] = []
            self.doctype = None
            self.lang = None

        def handle_decl(self, decl: str) -> None:
            self.doctype = decl

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs)
            if tag == "html":
                self.lang = a.get("lang")
            if tag == "h1":
                counts["h1"] += 1
            if tag == "meta" and a.get("name") == "viewport" and "width=device-width" in (a.get("content") or ""):
                counts["viewport"] += 1
            if tag == "script":
                problems.append("a script")
            for key in ("src", "href", "srcset", "action", "data"):
                value = (a.get(key) or "").strip().lower()
                if value.startswith(("http:", "https:", "//")) and (tag != "a" or key != "href"):
                    problems.append(f"<{tag} {key}> fetches {value}")
                if tag == "link" and key == "href":
                    problems.append(f"<link href={value}>")
            if tag not in VOID:
                self.open.append(tag)

        def handle_endtag(self, tag: str) -> None:
            if not self.open or self.open[-1] != tag:
                problems.append(f"</{tag}> closes {self.open[-1] if self.open else 'nothing'}")
                return
            self.open.pop()

    checker = Checker()
    checker.feed(page)
    checker.close()
    if checker.doctype != "DOCTYPE html":
        problems.append(f"doctype {checker.doctype!r}")
    if not checker.lang:
        problems.append("no lang on <html>")
    if checker.open:
        problems.append(f"left open: {checker.open}")
    if counts["h1"] != 1:
        problems.append(f"{counts['h1']} h1")
    if counts["viewport"] != 1:
        problems.append("no meta viewport")
    if "@import" in page or "url(" in page:
        problems.append("a stylesheet that fetches")
    return problems


def test_index_html_is_self_contained_html5(demo_kit, sample_kit):
    for page in ((demo_kit / "index.html").read_text(), sample_kit["index.html"].decode(), render_pages(context(tool=NEW))["index.html"].decode()):
        assert html5_problems(page) == []
    # The checker itself finds what it looks for.
    assert html5_problems("<!DOCTYPE html><html><body><h1>a</h1><div></body></html>") == [
        "</body> closes div", "</html> closes div", "no lang on <html>", "left open: ['html', 'body', 'div']", "no meta viewport"
    ]
    assert html5_problems('<!DOCTYPE html><html lang="en"><head><meta name="viewport" content="width=device-width"><script src="https://x/y.js"></script></head><body><h1>a</h1></body></html>') == [
        "a script", "<script src> fetches https://x/y.js"
    ]


def _browser() -> str | None:
    import shutil

    return next((found for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable") if (found := shutil.which(name))), None)


@pytest.mark.skipif(_browser() is None, reason="no chromium, chromium-browser or google-chrome on PATH")
def test_index_html_renders_in_a_real_browser(demo_kit, tmp_path):
    # Headless, at a phone's width and a desktop's: the page paints, and its text is all there.
    browser = _browser()
    page = (demo_kit / "index.html").as_uri()
    common = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    for width, height in ((390, 844), (1280, 900)):
        shot = tmp_path / f"page-{width}.png"
        subprocess.run([*common, f"--window-size={width},{height}", f"--screenshot={shot}", page], capture_output=True, timeout=120, check=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5_000
    dom = subprocess.run([*common, "--dump-dom", page], capture_output=True, text=True, timeout=120, check=True).stdout
    for text in ("Reciprocal rank fusion: the data kit", "How the figures were counted", "BM25 alone finds 400", "What is not here"):
        assert text in dom


def test_a_build_whose_prose_cites_no_figure_stops_at_the_line_with_exit_2(tmp_path):
    # The config loader runs the check: the build stops before any file is read or written.
    from typer.testing import CliRunner

    from kitbuild.cli import app

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "r.json").write_text('{"a": 1}\n')
    (tmp_path / "kit.yaml").write_text(
        "kit: k\ntitle: T\ndate: 2026-12-01\nsummary: 'We found {{ hitz }} things.'\nout: ./kit\nsources:\n  - path: src\n    as: records\n"
    )
    done = CliRunner().invoke(app, ["build", str(tmp_path / "kit.yaml")])
    assert done.exit_code == 2
    assert "kit.yaml:4:10: summary: names 'hitz', which is not a figure" in done.output
    assert not (tmp_path / "kit").exists()
