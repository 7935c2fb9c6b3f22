"""kitbuild.conforms decides what jsonschema decides, or says it cannot.

Every answer it gives is held to jsonschema's Draft 2020-12 validator: on the documents a demo
build writes and reads (config, index.json, provenance.json, the reports, the rule files), on
those documents with one part changed, and on values made up for each schema's definitions.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.commands.demo import DemoResult, demo
from kitbuild.conforms import conforms
from kitbuild.figures.evaluation import COMMON_KEYS
from kitbuild.figures.registry import known_recounts, recount as find_recount
from kitbuild.resources import rules_dir
from kitbuild.schema import first_schema_error, load_schema, schema_errors
from kitbuild.verify_report import verify_json
from kitbuild.yamlfile import load_yaml

SCHEMAS = ("config", "figures", "index", "provenance", "report", "rule")


def jsonschema_says(instance: Any, schema: dict[str, Any]) -> bool:
    return bool(jsonschema.Draft202012Validator(schema).is_valid(instance))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    return demo(tmp_path_factory.mktemp("conforms") / "demo")


@pytest.fixture(scope="module")
def documents(built: DemoResult) -> list[tuple[str, dict[str, Any], Any]]:
    """(name, schema, document) for each kind of file a build reads or writes, and for the part
    of each figure its recount's own schema checks."""
    kit = built.build.out
    config = load_yaml(built.config, "kit.yaml").data  # as the build reads it: dates stay text
    provenance = orjson.loads((kit / "provenance.json").read_bytes())
    docs = [
        ("config", config),
        ("index", orjson.loads((kit / "index.json").read_bytes())),
        ("provenance", provenance),
        ("report", orjson.loads(verify_json(built.verify))),
    ]
    if "figures" in config:
        docs.append(("figures", config["figures"]))
    docs += [("rule", load_yaml(path, path.name).data) for path in sorted(rules_dir().glob("*.yaml"))]
    out = [(name, load_schema(name), document) for name, document in docs]
    for figure in config["figures"].values():
        own = {key: value for key, value in figure.items() if key not in COMMON_KEYS}
        out.append((f"recount {figure['recount']}", dict(find_recount(figure["recount"]).schema), own))
    return out


def test_every_document_a_build_writes_is_decided_without_jsonschema(documents: list[tuple[str, dict[str, Any], Any]]) -> None:
    names = {name for name, _, _ in documents}
    assert names >= set(SCHEMAS) and len(names - set(SCHEMAS)) >= 5  # and the recounts the demo uses
    for name, schema, document in documents:
        assert conforms(document, schema) is True, name
        assert jsonschema_says(document, schema), name


def _paths(node: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [trail]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*trail, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:3]):  # a few entries of each list are enough
            out += _paths(value, (*trail, index))
    return out


def _json(words: list[str]) -> st.SearchStrategy[Any]:
    """JSON values, their strings and keys drawn partly from the words the schemas use, so that
    many a made-up value gets past the first check."""
    text = st.sampled_from(words) | st.text(max_size=8)
    scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, 2.5, -1.5]) | text
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=8)


def _words(schema: Any) -> list[str]:
    """Every string in a schema: property names, enum and const values, ref names."""
    if isinstance(schema, dict):
        return [w for key, value in schema.items() for w in [key, *_words(value)]]
    if isinstance(schema, list):
        return [w for value in schema for w in _words(value)]
    return [schema] if isinstance(schema, str) else []


def _changed(document: Any, path: tuple[Any, ...], how: str, value: Any) -> Any:
    out = copy.deepcopy(document)
    if not path:
        return value
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent[last], dict):
        parent[last]["extra"] = value
    else:
        parent[last] = value
    return out


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_changed_document_gets_the_answer_jsonschema_gives(documents: list[tuple[str, dict[str, Any], Any]], data: st.DataObject) -> None:
    _, schema, document = data.draw(st.sampled_from(documents))
    path = data.draw(st.sampled_from(_paths(document)))
    how = data.draw(st.sampled_from(["set", "delete", "add"]) if path else st.just("set"))
    value = data.draw(_json(sorted(set(_words(schema)))))
    changed = _changed(document, path, how, value)
    answer = conforms(changed, schema)
    if answer is not None:
        assert answer == jsonschema_says(changed, schema)


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_made_up_values_get_the_answer_jsonschema_gives_for_each_definition(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from([*SCHEMAS, *known_recounts()]))
    full = load_schema(name) if name in SCHEMAS else dict(find_recount(name).schema)
    targets = [None, *sorted(full.get("$defs", {}))]
    target = data.draw(st.sampled_from(targets))
    schema = full if target is None else {"$defs": full["$defs"], "$ref": f"#/$defs/{target}"}
    value = data.draw(_json(sorted(set(_words(full)))))
    answer = conforms(value, schema)
    if answer is not None:
        assert answer == jsonschema_says(value, schema)


@pytest.mark.parametrize(
    ("instance", "schema", "expected"),
    [
        # jsonschema's own readings of JSON: a float with no fraction is an integer, a bool is not.
        (1.0, {"type": "integer"}, True),
        (1.5, {"type": "integer"}, False),
        ({"size": 2.5}, {"properties": {"size": {"type": "integer", "minimum": 0}}}, False),
        (True, {"type": "integer"}, False),
        (True, {"enum": [1]}, False),
        (1.0, {"const": 1}, True),
        ([1, True], {"const": [1, 1]}, False),
        ({"a": 1}, {"const": {"a": 1.0}}, True),
        # Keywords apply only to their own kinds of value.
        (5, {"pattern": "^x$", "minLength": 3, "required": ["a"], "items": False}, True),
        ("ab", {"not": {"pattern": "b"}}, False),
        ({"kind": "a"}, {"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}}, False),
        ({"kind": "b", "y": 1}, {"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"required": ["y"]}}, True),
        ("s", {"oneOf": [{"type": "string"}, {"minLength": 1}]}, False),
        ({"b": 1}, {"properties": {"a": {}}, "additionalProperties": {"type": "string"}}, False),
        ({"Bad": 1}, {"propertyNames": {"pattern": "^[a-z]+$"}}, False),
        (float("nan"), {"minimum": 0}, True),
        # A failing keyword decides even beside one this module does not know.
        ("x", {"type": "integer", "uniqueItems": True}, False),
        # References by JSON pointer into the same document, as the recounts' schemas make them.
        ("x", {"$ref": "#/$defs/group/leaf", "$defs": {"group": {"leaf": {"type": "integer"}}}}, False),
        (3, {"$ref": "#/$defs/group/leaf", "$defs": {"group": {"leaf": {"type": "integer"}}}}, True),
    ],
)
def test_known_keywords_decide_as_jsonschema_does(instance: Any, schema: dict[str, Any], expected: bool) -> None:
    assert conforms(instance, schema) is expected
    assert jsonschema_says(instance, schema) is expected


@pytest.mark.parametrize(
    ("instance", "schema"),
    [
        ([1, 1], {"uniqueItems": True}),  # a keyword it does not know
        ({"a": 1}, {"patternProperties": {"^a": {}}, "additionalProperties": False}),
        ([1], {"prefixItems": [{}], "items": False}),
        (1, {"$ref": "https://example.invalid/other.json"}),  # a reference outside the document
        (1, {"$ref": "#/$defs/missing", "$defs": {}}),
        (1, {"$ref": "#/$defs/a~1b", "$defs": {"a/b": {}}}),  # an escaped pointer
        (1, {"$ref": "#/$defs/a/b", "$defs": {"a": {"$id": "https://example.invalid/a", "b": {}}}}),
        ({"a": 1}, {"properties": {"a": {"$id": "https://example.invalid/a", "$ref": "#/$defs/x"}}, "$defs": {"x": {}}}),
        ((1, 2), {"const": [1, 2]}),  # a tuple is no JSON value
        (b"ab", {"enum": [[97, 98]]}),  # nor are bytes (YAML's !!binary), which jsonschema compares item by item
        ("x", {"type": "unknown"}),
        ("x", {"pattern": "("}),
        ("x", {"minLength": "3"}),
    ],
)
def test_what_it_cannot_tell_it_leaves_to_jsonschema(instance: Any, schema: dict[str, Any]) -> None:
    assert conforms(instance, schema) is None


def test_a_wrong_document_is_still_described_by_jsonschema(documents: list[tuple[str, dict[str, Any], Any]]) -> None:
    index = copy.deepcopy(next(document for name, _, document in documents if name == "index"))
    index["files"][0]["size"] = -1
    del index["kit"]
    assert conforms(index, load_schema("index")) is False
    errors = list(schema_errors(index, load_schema("index")))
    assert sorted(errors) == [([], "'kit' is required here"), (["files", 0, "size"], "must be at least 0")]
    assert first_schema_error(index, load_schema("index")) in errors


def test_verifying_and_building_a_sound_kit_does_not_import_jsonschema(built: DemoResult, tmp_path: Path) -> None:
    # The point of the module: jsonschema's import is a tenth of a second of CPU.
    script = (
        "import sys\n"
        "from kitbuild import build, verify\n"
        f"report = build({str(built.config)!r}, out={str(tmp_path / 'kit')!r})\n"
        f"assert not verify({str(tmp_path / 'kit')!r}).findings\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema'))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
