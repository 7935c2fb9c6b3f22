"""The figures block as written: schema errors with key paths, names, references, circles, plugins."""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from kitbuild.figures import BUILTIN_RECOUNTS, FigureSpecError, FigureValue, Recount, evaluate, validate_figures
from kitbuild.figures import registry
from kitbuild.figures.context import Context

EVERY = {"recount": "every_at_k", "rows": "r.ndjson", "ranked": "/search", "gold": "/gold", "k": 5}


def message(spec: Any) -> str:
    with pytest.raises(FigureSpecError) as caught:
        validate_figures(spec)
    assert caught.value.exit_code == 2
    return str(caught.value)


def test_schema_errors_name_the_key_path():
    assert message({"e": {**EVERY, "k": 0}}) == "kit.yaml: figures.e.k: 0 is too small; k (how many of the top of the ranked list to look at) is a whole number, 1 or more"
    # Placed at the key itself; the keys every figure has are among those allowed (and meant).
    assert message({"e": {**EVERY, "depth": 3}}) == (
        "kit.yaml: figures.e.depth: unknown key. The keys allowed here are: about, agrees_with, equals, format, gold, item, k, key, "
        "label, ranked, recount, rows, skip (recount 'every_at_k'; see docs/figures.md)"
    )
    assert message({"e": {**EVERY, "abut": "x"}}).startswith("kit.yaml: figures.e.abut: unknown key; did you mean 'about'? ")
    assert message({"e": {k: v for k, v in EVERY.items() if k != "gold"}}) == "kit.yaml: figures.e: 'gold' is required here"
    assert message({"E5": EVERY}) == (
        "kit.yaml: figures[key #1]: cannot name a figure: use lower-case letters, digits and '_', starting with a letter"
    )
    assert message({"e": {**EVERY, "format": "percent"}}) == "kit.yaml: figures.e.format: must be one of 'count', 'plain', 'signed', 'p', 'text'"
    assert message({"e": {**EVERY, "rows": "/abs/rows.ndjson"}}) == "kit.yaml: figures.e.rows: does not have the required form (pattern ^[^/])"


def test_where_places_the_error_in_kit_yaml():
    with pytest.raises(FigureSpecError) as caught:
        validate_figures({"e": {**EVERY, "k": "5"}}, where=lambda path: "kit.yaml:12:8" if path == ["figures", "e", "k"] else "?")
    assert str(caught.value) == "kit.yaml:12:8: figures.e.k: must be of type integer"


def test_rrf_needs_stored_unless_it_counts_ties():
    base = {"recount": "rrf", "rows": "r.ndjson", "lists": [{"rows": "a.ndjson", "ranked": "/r", "weight": 1}]}
    assert message({"f": base}) == "kit.yaml: figures.f: 'stored' is required here"
    assert message({"f": {**base, "count": "tie_across"}}) == "kit.yaml: figures.f: 'at' is required here"
    validate_figures({"f": {**base, "count": "tie_across", "at": 5}})


def test_unknown_recount_lists_the_known_ones():
    assert message({"e": {"recount": "ndcg"}}) == (
        "kit.yaml: figures.e.recount: no such recount: 'ndcg'; the recounts here are: "
        "read, count, every_at_k, any_at_k, group_by, mcnemar_exact, holm, rrf"
    )


def test_a_recount_misspelt_is_suggested():
    assert message({"e": {"recount": "every_at_5"}}) == (
        "kit.yaml: figures.e.recount: no such recount: 'every_at_5'; did you mean 'every_at_k'? The recounts here are: "
        "read, count, every_at_k, any_at_k, group_by, mcnemar_exact, holm, rrf"
    )


def test_a_figure_misspelt_is_suggested_and_many_figures_are_not_listed():
    spec = {f"fig_{i:02}": EVERY for i in range(19)} | {"bm25_every5": EVERY, "t": {"recount": "mcnemar_exact", "a": "fig_07", "b": "bm25_evry5"}}
    assert message(spec) == "kit.yaml: figures.t.b: no figure is called 'bm25_evry5'; did you mean 'bm25_every5'?"
    spec["t"]["b"] = "zzz"
    assert message(spec) == "kit.yaml: figures.t.b: no figure is called 'zzz'; none of the 21 figures is near it"
    few = {"every5": EVERY, "t": {"recount": "mcnemar_exact", "a": "every5", "b": "evry5"}}
    assert message(few) == "kit.yaml: figures.t.b: no figure is called 'evry5'; did you mean 'every5'? The figures are: every5, t"


def test_a_part_equals_names_is_checked_where_the_recount_says_its_parts():
    spec = {"e": EVERY, "f": EVERY, "t": {"recount": "mcnemar_exact", "a": "e", "b": "f"}}
    for equals, says in [
        ("t.a_onyl", "figure 't' has no part 'a_onyl'; did you mean 'a_only'? Its parts are: a_hits, b_hits, a_only, b_only, diff"),
        ("e.of", "figure 'e' has no part 'of'; it has no parts: compare with the figure itself"),
    ]:
        with pytest.raises(FigureSpecError) as caught:
            validate_figures({**spec, "s": {**EVERY, "equals": equals}}, parts=True)
        assert str(caught.value) == f"kit.yaml: figures.s.equals: {says}"
    validate_figures({**spec, "s": {**EVERY, "equals": "t.diff"}}, parts=True)
    # A group_by's parts are its rows' groups: known only once counted.
    validate_figures({**spec, "g": {"recount": "group_by", "figures": ["e"], "by": "/type"}, "s": {**EVERY, "equals": "g.anything"}}, parts=True)


def test_a_reference_to_no_figure_lists_the_figures():
    spec = {"e": EVERY, "t": {"recount": "mcnemar_exact", "a": "e", "b": "bm25"}}
    assert message(spec) == "kit.yaml: figures.t.b: no figure is called 'bm25'; the figures are: e, t"
    assert message({"e": {**EVERY, "equals": "x"}}) == "kit.yaml: figures.e.equals: no figure is called 'x'; the figures are: e"


def test_figures_that_refer_in_a_circle():
    spec = {
        "a": {"recount": "holm", "family": ["b"]},
        "b": {"recount": "holm", "family": ["a"]},
    }
    assert message(spec) == "kit.yaml: figures.a: the figures a -> b -> a refer to each other in a circle"


def test_equals_both_ways_is_not_a_circle():
    validate_figures({"a": {**EVERY, "equals": "b"}, "b": {**EVERY, "equals": "a"}})


def test_template_words_cannot_name_figures():
    assert message({"in": EVERY}) == "kit.yaml: figures.in: 'in' cannot name a figure: pages read it as template syntax. Choose another name."


def test_every_builtin_has_a_summary_and_a_schema():
    for name, recount in BUILTIN_RECOUNTS.items():
        assert recount.name == name and recount.summary
        assert recount.schema["$ref"].startswith("#/$defs/")


class _Constant(Recount):
    name = "constant"
    summary = "A fixed number, for the test."
    schema: Mapping[str, Any] = {"type": "object", "additionalProperties": False, "required": ["n"], "properties": {"n": {"type": "integer"}}}

    def compute(self, spec: Mapping[str, Any], ctx: Context) -> FigureValue:
        return FigureValue(spec["n"])


class _Entry:
    def __init__(self, name, loaded):
        self.name, self.value, self._loaded = name, f"plugin:{name}", loaded

    def load(self):
        if isinstance(self._loaded, Exception):
            raise self._loaded
        return self._loaded


@pytest.fixture
def plugins(monkeypatch):
    def install(*entries):
        monkeypatch.setattr(registry, "_plugin_entries", lambda: tuple(entries))

    return install


def test_a_package_adds_a_recount_by_entry_point(plugins, kit):
    plugins(_Entry("constant", _Constant))
    values = evaluate({"c": {"recount": "constant", "n": 1234, "about": "a fixed number"}}, kit({}))
    assert values["c"].text() == "1,234"
    assert "constant" in registry.known_recounts()
    assert message({"c": {"recount": "constant", "n": "x"}}) == "kit.yaml: figures.c.n: must be of type integer"


def test_plugins_are_the_installed_entry_points_of_the_group(monkeypatch):
    import importlib.metadata

    asked = []

    def entry_points(group):
        asked.append(group)
        return [_Entry("zeta", _Constant), _Entry("alpha", _Constant)]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    registry._plugin_entries.cache_clear()
    try:
        assert [e.name for e in registry._plugin_entries()] == ["alpha", "zeta"]
        assert asked == [registry.ENTRY_POINT_GROUP]
    finally:
        registry._plugin_entries.cache_clear()


def test_no_command_pays_for_the_plugin_lookup_at_start_up():
    # importlib.metadata and the email package it brings cost every command 5 ms to import.
    import subprocess
    import sys

    code = "import sys, kitbuild.cli, kitbuild.commands.verify, kitbuild.commands.build; print('importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False"


def test_a_broken_or_misnamed_plugin_is_a_clear_error(plugins):
    plugins(_Entry("broken", ImportError("no module named mypkg")), _Entry("wrong", _Constant))
    assert message({"c": {"recount": "broken"}}) == (
        "kit.yaml: figures.c.recount: the recount 'broken' (entry point plugin:broken) cannot be loaded: ImportError: no module named mypkg"
    )
    assert message({"c": {"recount": "wrong"}}) == (
        "kit.yaml: figures.c.recount: the entry point 'wrong' (plugin:wrong) must name a kitbuild.figures.Recount whose name is 'wrong'"
    )


def test_a_plugin_cannot_replace_a_builtin(plugins, kit):
    plugins(_Entry("count", _Constant))
    spec = {"n": {"recount": "count", "rows": "r.ndjson", "where": {"/v": 1}}}
    assert evaluate(spec, kit({"r.ndjson": [{"qid": "a", "v": 1}]}))["n"].value == 1


def test_every_name_the_figures_package_exports_is_what_its_module_defines():
    # The package imports each name when first used; a name that is also a module's (the way
    # 'evaluate' once was) would turn into that module once the module is imported.
    import importlib
    import pkgutil
    import types

    import kitbuild.figures as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"kitbuild.figures.{info.name}")
    for name in package.__all__:
        value = getattr(package, name)
        assert not isinstance(value, types.ModuleType), name
        assert value is getattr(importlib.import_module(package._LAZY[name]), name)
    assert sorted(package._LAZY) == sorted(package.__all__)
