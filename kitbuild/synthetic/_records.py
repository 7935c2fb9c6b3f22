"""How the bench serialises its records, and where each record says a file lives."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# The October bench ran on another machine; its records, and the later run's
# records that read October files, name them by the path they had there.
OCTOBER_ROOT = "/scratch/u7/runs/lme-2026-10"
OCTOBER = "bench/lme-2026-10"
SPARSE = "bench/ls-2026-11-07"
SMOKE = "bench/ls-2026-11-07-smoke"


def json_bytes(record: Any, final_newline: bool = True) -> bytes:
    text = json.dumps(record, indent=2, ensure_ascii=False)
    return (text + "\n" if final_newline else text).encode("utf-8")


def ndjson_bytes(rows: Iterable[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows).encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Tree:
    """The files of the bench, held as bytes until written, so a record can print another's digest."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, bytes] = {}

    def put(self, relative: str, data: bytes) -> str:
        self.files[relative] = data
        return sha256(data)

    def digest(self, relative: str) -> str:
        return sha256(self.files[relative])

    def here(self, relative: str) -> str:
        """The absolute path the learned-sparse run prints for a file it read on this machine."""
        return str(self.root / relative)

    def printed(self, relative: str) -> str:
        """The path a record prints: October files by their /scratch path, the rest absolute here."""
        prefix = OCTOBER + "/"
        if relative.startswith(prefix):
            return f"{OCTOBER_ROOT}/{relative[len(prefix) :]}"
        return self.here(relative)

    def write(self) -> None:
        for relative, data in sorted(self.files.items()):
            target = self.root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
