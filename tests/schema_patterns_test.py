"""A schema's patterns, when a failure is worded: a rule file's own ``params`` may hold a pattern
whose repeats match the same text many ways, and a value that fails it must still be reported, in
seconds, not searched for ever."""

from __future__ import annotations

import subprocess
import sys

import pytest

SLOW = "^(a|aa)+$"
VALUE = "a" * 80 + "b"  # 2^40 ways to try before a backtracking search gives up

PROGRAM = """
import sys, json
from kitbuild.schema import first_schema_problem
schema, instance = json.loads(sys.argv[1]), json.loads(sys.argv[2])
problem = first_schema_problem(instance, schema)
print(json.dumps(None if problem is None else [problem.path, problem.message]))
"""


def problem_of(schema: object, instance: object) -> object:
    import json

    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, json.dumps(schema), json.dumps(instance)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("schema", "instance", "expected"),
    [
        ({"properties": {"x": {"type": "string", "pattern": SLOW}}}, {"x": VALUE}, [["x"], "does not meet the schema's 'pattern' rule"]),
        ({"properties": {"x": {"propertyNames": {"pattern": SLOW}}}}, {"x": {VALUE: 1}}, [["x"], "does not meet the schema's 'pattern' rule"]),
        (
            {"properties": {"x": {"additionalProperties": False, "patternProperties": {SLOW: {"type": "string"}}}}},
            {"x": {VALUE: 1}},
            [["x"], "does not meet the schema's 'additionalProperties' rule"],
        ),
        ({"properties": {"x": {"patternProperties": {SLOW: {"type": "string"}}}}}, {"x": {"a" * 80: 1, VALUE: 2}}, [["x", "a" * 80], "does not meet the schema's 'type' rule"]),
    ],
    ids=["pattern", "propertyNames", "additionalProperties", "patternProperties"],
)
def test_a_pattern_too_slow_to_search_is_reported_by_its_rule(schema, instance, expected) -> None:
    assert problem_of(schema, instance) == expected


def test_a_fast_pattern_is_still_worded_with_the_pattern() -> None:
    schema = {"properties": {"x": {"type": "string", "pattern": "^[a-z]+$"}}}
    assert problem_of(schema, {"x": "A1"}) == [["x"], "does not have the required form (pattern ^[a-z]+$)"]
    patterned = {"properties": {"x": {"additionalProperties": False, "patternProperties": {"^a": {"type": "string"}}}}}
    assert problem_of(patterned, {"x": {"ab": "s"}}) is None
    assert problem_of(patterned, {"x": {"b": "s"}})[1].startswith("unknown key 'b'")
