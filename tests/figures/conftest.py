"""Small kits for the figure tests, written as dicts: a list of dicts is an NDJSON file, a dict a
JSON file, a str or bytes the file's text as typed."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import orjson
import pytest

from kitbuild.figures import MemoryFiles


def file_bytes(content: Any) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, list):
        return b"".join(orjson.dumps(row) + b"\n" for row in content)
    return orjson.dumps(content)


@pytest.fixture
def kit() -> Callable[[Mapping[str, Any]], MemoryFiles]:
    """``kit({'L/rows.ndjson': [{...}, ...]})`` -> a kit holding those files."""
    return lambda files: MemoryFiles({path: file_bytes(content) for path, content in files.items()})
