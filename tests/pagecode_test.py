"""The built-in templates compiled ahead of time (kitbuild.pagecode): current, used, and giving
the bytes that compiling the templates from their text gives, whether jinja2 runs the compiled
code (kitbuild.pagecode.loader) or kitbuild.pagecode.plain does."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jinja2
import orjson
import pytest

import kitbuild.pagecode as pagecode
from kitbuild import pages
from kitbuild.commands.demo import demo
from kitbuild.pagecode.__main__ import HERE, generated
from kitbuild.pagecode import manifest
from kitbuild.pagecode.manifest import JINJA2
from kitbuild.pages import PAGE_TEMPLATES, page_context, render_pages, render_with_jinja2
from kitbuild.resources import templates_dir

from pages_test import context

TITLE = "Tiny & <odd> | kit"


def test_the_compiled_templates_are_current():
    if jinja2.__version__ != JINJA2:
        pytest.skip(f"compiled under jinja2 {JINJA2}, {jinja2.__version__} installed: the templates are compiled on use (the next test)")
    for name, text in generated().items():
        assert (HERE / name).read_text(encoding="utf-8") == text, f"kitbuild/pagecode/{name} is stale: run python -m kitbuild.pagecode"
    assert sorted(manifest.TEMPLATES) == sorted(PAGE_TEMPLATES.values())


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates compiled from their text during the test."""
    names: list[str] = []
    original = jinja2.Environment.compile

    def spy(self, source, name=None, filename=None, raw=False, defer_init=False):  # type: ignore[no-untyped-def]
        names.append(name)
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", spy)
    return names


def _without_compiled_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "TEMPLATES", {})


@pytest.fixture(scope="module")
def demo_context(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo kit's pages' context: its figures, figure tables and figures table."""
    kit = demo(tmp_path_factory.mktemp("pagecode") / "demo").build.out
    return page_context(orjson.loads((kit / "provenance.json").read_bytes()), orjson.loads((kit / "index.json").read_bytes()))


@pytest.mark.parametrize("which", ["plain", "demo"])
def test_the_compiled_templates_render_what_compiling_them_renders(monkeypatch: pytest.MonkeyPatch, compiles: list[str], demo_context: dict[str, Any], which: str) -> None:
    if jinja2.__version__ != JINJA2:
        pytest.skip("the compiled templates are not used under this jinja2")
    ctx = context(title=TITLE, summary="A <summary> & more") if which == "plain" else demo_context
    fast = render_with_jinja2(ctx)
    assert compiles == []  # nothing was compiled: both pages came from kitbuild.pagecode
    _without_compiled_templates(monkeypatch)
    slow = render_with_jinja2(ctx)
    assert sorted(compiles) == sorted(PAGE_TEMPLATES.values())
    assert fast == slow
    if which == "plain":
        assert b"Tiny &amp; &lt;odd&gt;" in fast["index.html"]  # autoescaping, as compiled
    else:
        assert b"| BM25 alone: 400 of 470" in fast["README.md"]


def test_under_another_jinja2_the_templates_are_compiled_from_their_text(monkeypatch: pytest.MonkeyPatch, compiles: list[str]) -> None:
    monkeypatch.setattr(manifest, "JINJA2", "0.0.0")
    pages_out = render_with_jinja2(context(title=TITLE))
    assert sorted(compiles) == sorted(PAGE_TEMPLATES.values())
    assert pages_out["README.md"].startswith(b"# Tiny & <odd> | kit\n")


def test_an_environment_set_otherwise_compiles_from_the_text(compiles: list[str]) -> None:
    # Settings that change the code jinja2 generates (here: whitespace after a block) turn the
    # compiled templates off for that environment.
    env = pages._environment({})
    assert env.get_template("README.md.j2").filename.endswith("compiled_readme_md.py") or jinja2.__version__ != JINJA2
    other = pages._environment({})
    other.trim_blocks = False
    assert not other.get_template("README.md.j2").filename.endswith("compiled_readme_md.py")
    assert "README.md.j2" in compiles


def test_an_edited_template_is_compiled_from_its_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, compiles: list[str]) -> None:
    edited = Path(shutil.copytree(templates_dir(), tmp_path / "templates"))
    readme = edited / "README.md.j2"
    readme.write_text(readme.read_text() + "Edited after compiling.\n")
    monkeypatch.setattr(pages, "templates_dir", lambda: edited)
    monkeypatch.setattr(pagecode, "templates_dir", lambda: edited)
    out = render_pages(context())
    assert out["README.md"].endswith(b"Edited after compiling.\n")
    assert "README.md.j2" in compiles


def test_a_kits_own_template_wins_over_the_compiled_one(compiles: list[str]) -> None:
    out = render_pages(context(), {"README.md.j2": "own {{ title }}\n"})
    assert out["README.md"] == b"own T <b>\n"
    assert compiles == ["README.md.j2"]
