"""Where the data kitbuild ships lives: schemas, built-in rules and templates.

In a wheel, the top-level ``rules/`` and ``templates/`` folders are installed inside the package
(pyproject's ``force-include``); in a source checkout they sit beside the package. Looking in both
places keeps one code path for an editable install and a wheel.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    inside = _PACKAGE / name
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / name


def rules_dir() -> Path:
    """The folder holding the built-in rule files."""
    return _data_dir("rules")


def templates_dir() -> Path:
    """The folder holding the built-in page templates."""
    return _data_dir("templates")


def schema_path(name: str) -> Path:
    """The JSON Schema file ``kitbuild/schemas/<name>.schema.json``."""
    return _PACKAGE / "schemas" / f"{name}.schema.json"
