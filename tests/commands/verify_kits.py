"""Kits for the verify and check tests: a small bench built once, and ways to break a copy.

The bench is small and spelled out here so a test's expectations can be read off it: one source
with a lock that names a box, a reading that prints absolute paths and the digests of the lock
(rewritten, so withheld), of a row file (kept, so it checks) and of a public dataset (external),
a binary file, and a second source. ``refresh`` rewrites index.json, SHA256SUMS and the digest of
provenance.json to match the files, as someone covering their tracks would.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import orjson

from kitbuild.kitfs import FolderKit
from kitbuild.metadata import CITATION, CROISSANT, METADATA_FILES, write_citation, write_croissant
import yaml

from kitbuild import build
from kitbuild.index import entry as entry_of, index_bytes, sums_of
from kitbuild.jsonfile import dump_json
from kitbuild.progress import Progress

EXTERNAL = "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"
PLACEHOLDER = "withheld-2026-09-29"
KIT_NAME = "verify-kit"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_bench(root: Path, *, template: str | None = None, extra: dict[str, Any] | None = None) -> Path:
    """Write a private bench and its kit.yaml under ``root``; returns the kit.yaml path."""
    root = root.resolve()
    src = root / "bench" / "ls-2026-11-07"
    other = root / "bench" / "lme-2026-10"
    for folder in (src / "full-s1" / "run", src / "full-s1" / "score", other / "a0"):
        folder.mkdir(parents=True, exist_ok=True)
    lock = b'{"route": "gpu-b17", "card": "a100", "data": "sha256:' + EXTERNAL.encode() + b'"}\n'
    rows = b"".join(b'{"qid": "q%d", "rank": ["s%010x"], "score": %d}\n' % (i, i, i % 2) for i in range(20))
    (src / "full-s1" / "run" / "lock.json").write_bytes(lock)
    (src / "full-s1" / "run" / "rows.ndjson").write_bytes(rows)
    (src / "full-s1" / "run" / "weights.bin").write_bytes(b"\0\1\2binary\0" * 10)
    reading = {
        "s1_lock": {"path": f"{src}/full-s1/run/lock.json", "sha256": sha(lock)},
        "rows": {"path": f"{src}/full-s1/run/rows.ndjson", "sha256": "sha256:" + sha(rows).upper()},
        "digests": {f"{src}/full-s1/run/rows.ndjson": sha(rows)},
        "dataset": EXTERNAL,
    }
    (src / "full-s1" / "score" / "reading.json").write_bytes(dump_json(reading))
    (src / "notes.txt").write_bytes(b"scored in the night\r\nno final newline")
    (other / "a0" / "rows.tsv").write_bytes(b"qid\tscore\nq1\t1\nq2\t0\n")
    config: dict[str, Any] = {
        "kit": KIT_NAME,
        "title": "A kit to verify",
        "date": "2026-11-09",
        "licence": "CC-BY-4.0",
        "out": "./kit",
        "sources": [
            {"path": "bench/ls-2026-11-07", "as": "learned-sparse-2026-11-07", "about": "the second run"},
            {"path": "bench/lme-2026-10", "as": "longmemeval-2026-10"},
        ],
        "rules": [
            {"use": "record-path-to-kit-path"},
            {"use": "box-name-to-role", "with": {"names": {"gpu-b17": "desktop"}, "fields": ["route"]}},
            {"use": "digest-withheld", "with": {"placeholder": PLACEHOLDER}},
        ],
        "external_digests": {EXTERNAL: "the public dataset"},
        "allow": [{"text": "/usr/lib/python3", "why": "a system path"}],
    }
    if template is not None:
        (root / "README.md.j2").write_text(template, encoding="utf-8")
        config["readme"] = {"template": "./README.md.j2"}
    config.update(extra or {})
    config_path = root / "kit.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config_path


def build_kit(root: Path, **options: Any) -> Path:
    """Make the bench under ``root`` and build its kit; returns the kit folder."""
    config = make_bench(root, **options)
    build(config, jobs=1)
    return root / "kit"


def copy_kit(kit: Path, dest: Path) -> Path:
    shutil.copytree(kit, dest, symlinks=True)
    return dest


def refresh(kit: Path) -> None:
    """Make index.json, SHA256SUMS and provenance.json's recorded digest match the files again.

    Leaves pages and provenance.json's content alone: what this hides is only what a careful
    tamperer could hide, and verify must still catch the rest.
    """
    index = orjson.loads((kit / "index.json").read_bytes())
    records = []
    others = []
    for entry in index["files"]:
        path = kit / entry["path"]
        if not path.is_file():
            continue
        if entry["path"] in METADATA_FILES:
            continue  # written again below, from what is here now
        target = records if entry["path"] != "SHA256SUMS" and not entry["path"].startswith("_templates/") else others
        target.append(entry_of(entry["path"], path.read_bytes()))
    sums = sums_of({e["path"]: e["sha256"] for e in records})
    (kit / "SHA256SUMS").write_bytes(sums)
    others = [entry_of("SHA256SUMS", sums) if e["path"] == "SHA256SUMS" else e for e in others]
    provenance = entry_of("provenance.json", (kit / "provenance.json").read_bytes())
    # A careful tamperer writes croissant.json and CITATION.cff again too, as kitbuild would.
    document = orjson.loads((kit / "provenance.json").read_bytes())
    cff = write_citation(document)
    if cff is not None and (kit / CITATION).is_file():
        (kit / CITATION).write_bytes(cff)
        others.append(entry_of(CITATION, cff))
    if (kit / CROISSANT).is_file():
        croissant = write_croissant(document, records + others, provenance, FolderKit(kit))
        (kit / CROISSANT).write_bytes(croissant)
        others.append(entry_of(CROISSANT, croissant))
    (kit / "index.json").write_bytes(index_bytes(index["kit"], records + others, provenance))


def edit_json(path: Path, change: Any) -> None:
    """Load a JSON file, let ``change`` edit the document in place, write it in kitbuild's layout."""
    document = orjson.loads(path.read_bytes())
    change(document)
    path.write_bytes(dump_json(document))


class CountingProgress(Progress):
    """A progress that keeps the totals it was told to expect and what it was told was done."""

    def __init__(self) -> None:
        self.begun = (0, 0)
        self.done = [0, 0]

    def begin(self, what: str, files: int, size: int | None) -> None:
        self.begun = (files, size or 0)

    def advance(self, files: int = 0, size: int = 0) -> None:
        self.done[0] += files
        self.done[1] += size
