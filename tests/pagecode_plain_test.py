"""The built-in templates' compiled code run without jinja2 (kitbuild.pagecode.plain): the bytes
jinja2 renders, on contexts made to reach every branch of both templates, and jinja2's rendering
(or its error) wherever the plain runtime refuses."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2
import orjson
import pytest

import kitbuild.pages as pages
from kitbuild.commands.demo import demo
from kitbuild.entries import Entry
from kitbuild.index import index_document
from kitbuild.pagecode import plain
from kitbuild.pagecode.manifest import JINJA2
from kitbuild.pages import FILES_LISTED_PER_FOLDER, FILTERS, PAGE_TEMPLATES, TemplateError, page_context, render_pages, render_with_jinja2

from pages_test import context

same_jinja2 = pytest.mark.skipif(jinja2.__version__ != JINJA2, reason=f"the templates were compiled under jinja2 {JINJA2}, not the one installed")

# Texts that tell escaping, table cells, line ends and wide characters apart.
TEXTS = ["plain", "A <b>bold</b> & 'quoted' \"text\"", "a | b", "", "café 中文 🚀", "two\nlines", "x" * 300]


def _generated(seed: int) -> dict[str, Any]:
    """A page context from a provenance.json and index.json drawn at random (by ``seed``)."""
    rnd = random.Random(seed)
    text = lambda: rnd.choice(TEXTS)  # noqa: E731
    maybe = lambda: rnd.choice([None, text()])  # noqa: E731
    sources = [{"as": f"src{k}", "about": maybe(), "files": 0} for k in range(rnd.randint(1, 3))]
    files = []
    for source in sources:
        # Around FILES_LISTED_PER_FOLDER, where a folder's table stops and says how many more.
        for n in range(rnd.choice([0, 1, 2, FILES_LISTED_PER_FOLDER, FILES_LISTED_PER_FOLDER + rnd.randint(1, 40)])):
            files.append({"path": f"{source['as']}/{text()[:8]}-{n}.json", "size": rnd.choice([0, 1, 999, 1000, 12_345_678]), "sha256": f"{rnd.getrandbits(256):064x}"})
    rules = []
    for k in range(rnd.randint(0, 3)):
        firings = {f["path"]: rnd.choice([1, 2, 1234]) for f in rnd.sample(files, min(len(files), rnd.choice([0, 1, 3])))}
        rules.append({"name": f"rule-{k}", "sentence": text(), "total": sum(firings.values()), "firings": firings})
    provenance = {
        "title": text() or "T",
        "date": "2026-12-04",
        "licence": maybe(),
        "summary": maybe(),
        "not_here": maybe(),
        "sources": sources,
        "rules": rules,
        "kit": "k",
        "external_digests": {f"{rnd.getrandbits(256):064x}": text() for _ in range(rnd.randint(0, 2))},
        "allow": [],
        "records": rnd.choice([0, 1, 2, 1_234_567]),
    }
    return page_context(provenance, {"kit": "k", "files": files})


@pytest.fixture(scope="module")
def demo_context(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo kit's context: figures, figure tables and the figures table."""
    kit = demo(tmp_path_factory.mktemp("plain") / "demo").build.out
    return page_context(orjson.loads((kit / "provenance.json").read_bytes()), orjson.loads((kit / "index.json").read_bytes()))


def _plain(ctx: dict[str, Any]) -> dict[str, bytes | None]:
    out = {page: plain.render(name, ctx, FILTERS) for page, name in PAGE_TEMPLATES.items()}
    return {page: None if text is None else text.encode("utf-8") for page, text in out.items()}


@same_jinja2
@pytest.mark.parametrize("seed", range(40))
def test_plain_renders_the_bytes_jinja2_renders(seed: int) -> None:
    ctx = _generated(seed)
    assert _plain(ctx) == render_with_jinja2(ctx)


@same_jinja2
def test_plain_renders_the_demo_and_a_builds_entries(demo_context: dict[str, Any]) -> None:
    assert _plain(demo_context) == render_with_jinja2(demo_context)
    assert b"| BM25 alone: 400 of 470" in _plain(demo_context)["README.md"]  # type: ignore[operator]
    # A build renders from its index entries, not from dicts read back from index.json.
    entries = [Entry("run/a.txt", 2, "ab" * 32), Entry("run/b <&>.txt", 1_000, "cd" * 32)]
    ctx = page_context(dict(context()["provenance"], sources=[{"as": "run", "about": None, "files": 2}]), index_document("k", entries))
    assert _plain(ctx) == render_with_jinja2(ctx)
    assert b"<code>run/b &lt;&amp;&gt;.txt</code>" in _plain(ctx)["index.html"]  # type: ignore[operator]


def test_render_pages_does_not_need_jinja2_for_the_built_in_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _generated(1)
    expected = render_with_jinja2(ctx)
    monkeypatch.setattr(pages, "render_with_jinja2", lambda *a, **k: pytest.fail("rendered with jinja2"))
    assert render_pages(ctx) == expected


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda c: c.pop("records"), id="a name the context lacks"),
        pytest.param(lambda c: c["rules"].append({"name": "r", "sentence": "s", "total": "many", "firings": {}}), id="thousands of a text"),
        pytest.param(lambda c: c["rules"].append("a rule that is a text"), id="an attribute of a text"),
        pytest.param(lambda c: c["folders"][0].pop("about"), id="a key a folder lacks"),
    ],
)
def test_what_jinja2_refuses_plain_leaves_to_it(change: Any) -> None:
    ctx = context()
    change(ctx)
    assert _plain(ctx)["README.md"] is None
    with pytest.raises(Exception) as by_jinja2:
        render_with_jinja2(ctx)
    with pytest.raises(Exception) as err:
        render_pages(ctx)
    assert (type(err.value), str(err.value)) == (type(by_jinja2.value), str(by_jinja2.value))
    assert isinstance(err.value, (TemplateError, TypeError, ValueError))  # what verify reports as KB602


def test_what_plain_refuses_jinja2_still_renders() -> None:
    # An object that is neither a dict nor a dataclass: jinja2's sandbox reads its attributes,
    # the plain runtime refuses them, and the pages come from jinja2 with the same bytes.
    ctx = context()
    ctx["folders"][0]["files"] = [SimpleNamespace(path="run/a.txt", size=2, sha256="ab" * 32)]
    assert _plain(ctx) == {"README.md": None, "index.html": None}
    out = render_pages(ctx)
    assert out == render_with_jinja2(ctx)
    assert b"| `run/a.txt` | 2 | `abababababab` |" in out["README.md"]


@pytest.mark.parametrize(
    "ask",
    [
        pytest.param(lambda env: env.getattr({"a": 1}, "keys"), id="a dict's method other than items"),
        pytest.param(lambda env: env.getattr({"a": 1}, "b"), id="a missing key"),
        pytest.param(lambda env: env.getattr("text", "upper"), id="a text's method"),
        pytest.param(lambda env: env.getattr(Entry("p", 1, "d"), "__class__"), id="a dataclass's dunder"),
        pytest.param(lambda env: env.getattr(Entry("p", 1, "d"), "as_dict"), id="a dataclass's method"),
        pytest.param(lambda env: env.call(None, {}.keys), id="calling a dict's keys"),
        pytest.param(lambda env: env.call(None, {}.items, 1), id="items with an argument"),
        pytest.param(lambda env: env.call(None, print), id="calling anything else"),
        pytest.param(lambda env: plain._import("os"), id="importing anything but jinja2.runtime"),
        pytest.param(lambda env: plain._Context({}).resolve_or_missing("range"), id="one of jinja2's globals"),
    ],
)
def test_the_plain_runtime_refuses_what_the_templates_do_not_ask_for(ask: Any) -> None:
    with pytest.raises(plain.Refused):
        ask(plain._Environment(FILTERS))


def test_the_plain_runtime_gives_what_they_do_ask_for() -> None:
    env = plain._Environment(FILTERS)
    d = {"as": "run", "items": "a key"}
    assert env.getattr(d, "as") == "run"
    assert env.getattr(d, "items") == d.items  # the method, as the sandbox prefers it to the key
    assert list(env.call(None, env.getattr(d, "items"), _loop_vars={})) == [("as", "run"), ("items", "a key")]
    assert env.getattr(Entry("p", 1, "d"), "size") == 1
    assert [(item, loop.last) for item, loop in plain._Loop("abc", None)] == [("a", False), ("b", False), ("c", True)]
    assert str(plain._Undefined("an if without else")) == "" and not plain._Undefined()
    assert (str(jinja2.Undefined("an if without else")), bool(jinja2.Undefined())) == ("", False)  # as jinja2's


def test_an_edited_template_is_left_to_jinja2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from kitbuild import pagecode
    from kitbuild.resources import templates_dir

    edited = tmp_path / "templates"
    edited.mkdir()
    for name in PAGE_TEMPLATES.values():
        (edited / name).write_bytes((templates_dir() / name).read_bytes() + b"{{ title }} again\n")
    monkeypatch.setattr(pagecode, "templates_dir", lambda: edited)
    monkeypatch.setattr(pages, "templates_dir", lambda: edited)
    assert plain.render("README.md.j2", context(), FILTERS) is None
    assert render_pages(context())["README.md"].endswith(b"T <b> again\n")


def test_the_page_child_imports_neither_jinja2_nor_dataclasses_nor_the_figures(tmp_path: Path) -> None:
    # What verify's page child runs (kitbuild.pagesahead.render), in a fresh interpreter.
    ctx = _generated(3)
    provenance = {**ctx["provenance"], "pages": {"README.md": "built-in", "index.html": "built-in"}}
    (tmp_path / "provenance.json").write_bytes(orjson.dumps(provenance))
    (tmp_path / "index.json").write_bytes(orjson.dumps(ctx["index"]))
    # (Newer orjsons import dataclasses themselves: what orjson imports is not counted.)
    probe = (
        "import sys, orjson; from pathlib import Path; from kitbuild.pagesahead import render; d = Path(sys.argv[1]);"
        "before = set(sys.modules);"
        "out = render((d / 'index.json').read_bytes(), (d / 'provenance.json').read_bytes());"
        "print(sorted(out), [m for m in ('jinja2', 'dataclasses', 'kitbuild.figures') if m in sys.modules and m not in before])"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True)
    assert result.stdout == "['README.md', 'index.html'] []\n"
