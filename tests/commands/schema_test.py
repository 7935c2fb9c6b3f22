"""kitbuild schema NAME: each JSON Schema exactly as shipped, and clear errors for the rest."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import orjson
import pytest

from kitbuild.commands import schema as schema_cmd
from kitbuild.resources import schema_path


def test_config_schema_is_printed_as_shipped(cli) -> None:
    result = cli("schema", "config")
    assert result.exit_code == 0
    assert result.stdout.encode() == schema_path("config").read_bytes()
    jsonschema.Draft202012Validator.check_schema(orjson.loads(result.stdout))


@pytest.mark.parametrize("name", sorted(schema_cmd.SCHEMAS))
def test_every_shipped_schema_is_a_valid_schema(cli, name: str) -> None:
    if not schema_path(name).is_file():
        pytest.skip(f"the {name} schema has not landed")
    result = cli("schema", name)
    assert result.exit_code == 0
    jsonschema.Draft202012Validator.check_schema(orjson.loads(result.stdout))


def test_unknown_schema_names_the_known_ones(cli) -> None:
    result = cli("schema", "kit")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "kitbuild: no schema named 'kit'; the schemas are: config, index, provenance, report, rule.\n"


def test_missing_schema_file_is_a_clear_error(cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(schema_cmd, "schema_path", lambda name: tmp_path / f"{name}.schema.json")
    result = cli("schema", "report")
    assert result.exit_code == 2
    assert result.stderr == (
        "kitbuild: the report schema (the JSON document build, verify and check print with --format json) "
        "does not ship with this version of kitbuild.\n"
    )
