"""What format a kit file is in, by its name: how rules rewrite it and how verify reads it.

Its own module because verify needs only this of the rewriting: the rewriter and its matchers
would add their import (8 ms) to the time before verify's workers start.
"""

from __future__ import annotations

_BY_SUFFIX = {".json": "json", ".ndjson": "ndjson", ".jsonl": "ndjson", ".yaml": "yaml", ".yml": "yaml", ".tsv": "tsv"}


def format_of(path: str) -> str:
    """The format a kit path's ending implies: json, ndjson, yaml, tsv or text."""
    dot = path.rfind(".")
    return _BY_SUFFIX.get(path[dot:].lower(), "text") if dot > path.rfind("/") else "text"
