"""What a schema failure says: what is wrong, never the value that is wrong.

A kit.yaml's values are private (a map key is a path, a name a machine's), and a rule file's own
``params`` schema may use any JSON Schema keyword; jsonschema's own messages echo the value, and a
config error ends up in a CI log. Every keyword is worded by kitbuild (kitbuild.schema._describe).
"""

from __future__ import annotations

import pytest

from kitbuild.schema import first_schema_problem, schema_errors

SECRET = "/scratch/u7/gpu-b17"

# (keyword, schema, a value that fails it, the message)
CASES = [
    ("oneOf none", {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}, SECRET, "matches none of the forms allowed here"),
    ("oneOf two", {"oneOf": [{"type": "string"}, {"minLength": 1}]}, SECRET, "matches more than one of the forms allowed here"),
    ("anyOf", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, [SECRET], "matches none of the forms allowed here"),
    ("not", {"not": {"type": "string"}}, SECRET, "has a form not allowed here"),
    ("const", {"const": "fixed"}, SECRET, "must be 'fixed'"),
    ("enum", {"enum": ["a", "b"]}, SECRET, "must be one of 'a', 'b'"),
    ("minItems 2", {"type": "array", "minItems": 2}, [SECRET], "must have at least 2 items"),
    ("maxItems", {"type": "array", "maxItems": 1}, [SECRET, SECRET + "x"], "must have at most 1 items"),
    ("minLength 1", {"type": "string", "minLength": 1}, "", "must not be empty"),
    ("minLength 30", {"type": "string", "minLength": 30}, SECRET, "must have at least 30 characters"),
    ("minProperties", {"type": "object", "minProperties": 2}, {SECRET: 1}, "must have at least 2 keys"),
    ("maxProperties", {"type": "object", "maxProperties": 1}, {SECRET: 1, SECRET + "x": 2}, "must have at most 1 keys"),
    ("uniqueItems", {"type": "array", "uniqueItems": True}, [SECRET, SECRET], "holds the same item more than once"),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, 0, "must be more than 0"),
    ("maximum", {"maximum": 1}, 2, "must be at most 1"),
    ("exclusiveMaximum", {"exclusiveMaximum": 1}, 1, "must be less than 1"),
    ("multipleOf", {"multipleOf": 3}, 4, "must be a multiple of 3"),
    ("contains", {"type": "array", "contains": {"type": "integer"}}, [SECRET], "does not meet the schema's 'contains' rule here"),
    ("dependentRequired", {"type": "object", "dependentRequired": {SECRET: ["other"]}}, {SECRET: 1}, "does not meet the schema's 'dependentRequired' rule here"),
]


@pytest.mark.parametrize("keyword, schema, value, message", CASES, ids=[c[0] for c in CASES])
def test_every_keyword_says_what_is_wrong_without_the_value(keyword: str, schema: dict, value: object, message: str) -> None:
    problem = first_schema_problem({"key": value}, {"type": "object", "properties": {"key": schema}})
    assert problem is not None
    assert (problem.path, problem.message) == (["key"], message)
    assert "scratch" not in problem.message and "gpu-b17" not in problem.message
    assert [m for _, m in schema_errors({"key": value}, {"type": "object", "properties": {"key": schema}})] == [message]


def test_an_author_both_a_person_and_an_organisation_is_named_by_its_form(bench, make_files, write_kit, cli) -> None:
    make_files(bench / "src", {"a.txt": "x\n"})
    write_kit(bench, "kit: k\ntitle: k\ndate: 2026-12-01\nsources:\n  - {path: src, as: r}\nauthors:\n"
              "  - {given: Ada, family: Lovelace, name: gpu-b17 lab at /scratch/u7}\n")
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == (
        "kitbuild: kit.yaml:7:5: authors[0]: matches none of the forms allowed here; it is one author: a person, as given and "
        "family names, or an organisation, by its name; not both. See docs/config.md, 'Every key'.\n"
    )
