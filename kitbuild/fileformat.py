"""What format a kit file is in, by its name (how rules rewrite it and how verify reads it) and
whether it is binary, by its first bytes.

Its own module because verify needs only this of the rewriting: the rewriter and its matchers
would add their import (8 ms) to the time before verify's workers start.
"""

from __future__ import annotations

_BY_SUFFIX = {".json": "json", ".ndjson": "ndjson", ".jsonl": "ndjson", ".yaml": "yaml", ".yml": "yaml", ".tsv": "tsv"}


def format_of(path: str) -> str:
    """The format a kit path's ending implies: json, ndjson, yaml, tsv or text."""
    dot = path.rfind(".")
    return _BY_SUFFIX.get(path[dot:].lower(), "text") if dot > path.rfind("/") else "text"


# A file is binary by a NUL byte in its first 8 KiB (what it prints is not read as records).
BINARY_SNIFF = 8192


def is_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are ``head`` is binary: a NUL in its first 8 KiB, or a
    PDF, whose streams may be ASCII85 text (reportlab's: e-mail shapes by chance in every few MB)
    and whose byte offsets a rewrite would break. Build copies a binary file as it is."""
    return b"\0" in head[:BINARY_SNIFF] or head.startswith(b"%PDF-")
