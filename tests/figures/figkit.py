"""A small bench whose kit has figures, and how a tamperer covers their tracks in a built kit.

Five answerable questions and one abstention; by hand: BM25-like ``rows.ndjson`` hits q1, q3 and
q6 at k = 5 (3 of 5), the other arm hits q1, q2, q3 and q5 (4 of 5), so the other arm alone hit
q2 and q5, the first alone q6: +1, McNemar p = min(1, 2 · (1 + 3) / 8) = 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import yaml

from kitbuild.kitfs import FolderKit
from kitbuild.metadata import CITATION, CROISSANT, METADATA_FILES, write_citation, write_croissant
from kitbuild.index import entry as entry_of, index_bytes as make_index, sums_of
from kitbuild.pages import page_context, render_pages

AS = "bench-2026"
ROWS = f"{AS}/run/rows.ndjson"
OTHER = f"{AS}/run/other.ndjson"
SUMMARY = f"{AS}/score/summary.json"
TSV = f"{AS}/score/per-question.tsv"


def _row(qid: str, kind: str, gold: list[str], search: list[str], hit: int | None, abstention: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {"qid": qid, "type": kind, "abstention": abstention, "gold": gold, "search": search}
    if hit is not None:
        row["score"] = {"all@5": hit}
    return row


ROW_DATA = [
    _row("q1", "a", ["s1"], ["s1", "s2"], 1),
    _row("q2", "a", ["s3"], ["s4", "s5"], 0),
    _row("q3", "b", ["s6", "s7"], ["s7", "s6"], 1),
    _row("q4", "b", [], ["s8"], 1, abstention=True),
    _row("q5", "b", ["s9"], ["s1", "s2", "s3", "s4", "s5", "s9"], 0),
    _row("q6", "a", ["s2"], ["s2"], 1),
]
OTHER_DATA = [
    _row("q1", "a", ["s1"], ["s1"], None),
    _row("q2", "a", ["s3"], ["s3"], None),
    _row("q3", "b", ["s6", "s7"], ["s6", "s7"], None),
    _row("q4", "b", [], [], None, abstention=True),
    _row("q5", "b", ["s9"], ["s9"], None),
    _row("q6", "a", ["s2"], ["s5"], None),
]

FIGURES: dict[str, Any] = {
    "hits": {"recount": "every_at_k", "rows": ROWS, "ranked": "/search", "gold": "/gold", "k": 5, "skip": "/abstention", "agrees_with": "/score/all@5"},
    "other_hits": {"recount": "every_at_k", "rows": OTHER, "ranked": "/search", "gold": "/gold", "k": 5, "skip": "/abstention"},
    "stored_hits": {"recount": "read", "file": SUMMARY, "pointer": "/counts/every@5", "of": "/counts/answerable", "equals": "hits"},
    "other_vs_hits": {"recount": "mcnemar_exact", "a": "other_hits", "b": "hits"},
    "by_type": {"recount": "group_by", "about": "Hits by question type", "figures": ["hits", "other_hits"], "by": "/type", "order": ["b"]},
    "tsv_hits": {"recount": "count", "rows": TSV, "where": {"/hit": "1"}},
}
TABLE: list[dict[str, Any]] = [
    {
        "page": "Hits: {{ hits }} of {{ hits.of }}; the other arm {{ other_hits }}, {{ other_vs_hits.diff }}, p {{ other_vs_hits }}",
        "files": [ROWS, OTHER],
        "fields": ["search", "gold", "abstention", "score.all@5"],
    },
    {"page": "The stored count: {{ stored_hits }} | of {{ stored_hits.of }}", "files": [SUMMARY], "fields": ["counts.every@5"]},
]


def ndjson(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(row) + b"\n" for row in rows)


def write_bench(root: Path, figures: dict[str, Any] | None = None, table: list[dict[str, Any]] | None = None, **config: Any) -> Path:
    """The bench's source under ``root/src`` and its kit.yaml; returns the kit.yaml path."""
    src = root / "src"
    (src / "run").mkdir(parents=True, exist_ok=True)
    (src / "score").mkdir(parents=True, exist_ok=True)
    (src / "run" / "rows.ndjson").write_bytes(ndjson(ROW_DATA))
    (src / "run" / "other.ndjson").write_bytes(ndjson(OTHER_DATA))
    (src / "score" / "summary.json").write_text('{"counts": {"every@5": 3, "answerable": 5}}\n')
    (src / "score" / "per-question.tsv").write_text("qid\ttype\thit\nq1\ta\t1\nq2\ta\t0\nq3\tb\t1\nq5\tb\t0\nq6\ta\t1\n")
    document: dict[str, Any] = {
        "kit": "figure-kit",
        "title": "A kit with figures",
        "date": "2026-11-09",
        "sources": [{"path": "src", "as": AS}],
        "figures": FIGURES if figures is None else figures,
        "readme": {"figures_table": TABLE if table is None else table},
        **config,
    }
    path = root / "kit.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def cover_tracks(kit: Path) -> None:
    """After an edit: index.json, SHA256SUMS and the pages made to match the files again.

    What a careful tamperer can do; provenance.json is left as it is (or as the test edited it).
    """
    index = orjson.loads((kit / "index.json").read_bytes())
    records, others = [], []
    for entry in index["files"]:
        path = kit / entry["path"]
        if entry["path"] in METADATA_FILES:
            continue  # written again below, as kitbuild writes them
        target = others if entry["path"] == "SHA256SUMS" or entry["path"].startswith("_templates/") else records
        target.append(entry_of(entry["path"], path.read_bytes()))
    sums = sums_of({e["path"]: e["sha256"] for e in records})
    (kit / "SHA256SUMS").write_bytes(sums)
    others = [entry_of("SHA256SUMS", sums) if e["path"] == "SHA256SUMS" else e for e in others]
    provenance_bytes = (kit / "provenance.json").read_bytes()
    document = json.loads(provenance_bytes)
    cff = write_citation(document)
    if cff is not None:
        (kit / CITATION).write_bytes(cff)
        others.append(entry_of(CITATION, cff))
    croissant = write_croissant(document, records + others, entry_of("provenance.json", provenance_bytes), FolderKit(kit))
    (kit / CROISSANT).write_bytes(croissant)
    others.append(entry_of(CROISSANT, croissant))
    index_bytes = make_index(index["kit"], records + others, entry_of("provenance.json", provenance_bytes))
    (kit / "index.json").write_bytes(index_bytes)
    pages = render_pages(page_context(json.loads(provenance_bytes), json.loads(index_bytes)))
    for name, data in pages.items():
        (kit / name).write_bytes(data)


def edit_rows(path: Path, qid: str, change: Any) -> None:
    """Let ``change`` edit the row ``qid`` of an NDJSON file in place; other lines keep their bytes."""
    lines = path.read_bytes().splitlines(keepends=True)
    for i, line in enumerate(lines):
        row = orjson.loads(line)
        if row["qid"] == qid:
            change(row)
            lines[i] = orjson.dumps(row) + b"\n"
            break
    else:
        raise AssertionError(f"no row {qid}")
    path.write_bytes(b"".join(lines))
