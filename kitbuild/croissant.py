"""croissant.json: the kit described in MLCommons Croissant 1.1 (JSON-LD), from the kit's own data.

Written by ``build`` and written again by ``verify`` from the same inputs: provenance.json (the
kit's name, title, date, licence, authors, url, version and Responsible-AI fields), index.json's
entries (one FileObject per file, with its sha256 and size) and the first records of each tabular
file (a RecordSet with the fields and types those records show). verify compares the bytes (by
sha256, see kitbuild.metadata), and checks every FileObject against index.json: the Croissant
validator never opens a file, so this is where a dataset's sha256 and contentSize are checked.

Records are read bounded and in a fixed way (the first :data:`RECORDS_READ` records of at most
:data:`BYTES_READ` bytes; a JSON array only when the whole file is within that), so the same kit
gives the same croissant.json on every machine.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Callable, Iterator, Mapping, Sequence

import orjson

from kitbuild.citation import authors, bibtex, display_name
from kitbuild.hashing import HEADS
from kitbuild.jsonfile import dump_json_pieces
from kitbuild.resources import schema_path

CROISSANT_1_1 = "http://mlcommons.org/croissant/1.1"
RAI_1_0 = "http://mlcommons.org/croissant/RAI/1.0"
# Enough records to see each field's type: verify writes croissant.json again, so every record
# read here is read in every verify too (1,000 records from each of 200 files took half of
# verifying 256 MiB of records; 100 from 64 KiB, a tenth of it).
# (The pass over each file keeps the sha256 of these first bytes: kitbuild.hashing.HEADS.)
RECORDS_READ = 100
BYTES_READ = HEADS[0]
# How the first release of croissant.json in 0.3.0 read them, under the same version number: a
# kit built by 0.3.0 may hold a croissant.json written either way (kitbuild.metadata).
EARLIER_READ = (1000, HEADS[1])
# A kit of many thousand record files gets RecordSets for the first of its tabular files only.
RECORD_SETS = 200
# Since 0.3.1 only that many tabular files are read at all: a kit of 100,000 JSON documents none
# of which is an array of records was read whole a second time (half of verifying it) for no
# RecordSet. Kits built before keep the rule they were built with (read until 200 are found).
BOUNDED_SINCE = (0, 3, 1)

# kit.yaml's rai: keys -> their Croissant properties, in the order croissant.json writes them.
RAI_FIELDS = {
    "data_limitations": "rai:dataLimitations",
    "data_biases": "rai:dataBiases",
    "personal_sensitive_information": "rai:personalSensitiveInformation",
    "data_use_cases": "rai:dataUseCases",
    "data_social_impact": "rai:dataSocialImpact",
    "has_synthetic_data": "rai:hasSyntheticData",
    "derived_from": "prov:wasDerivedFrom",
    "generated_by": "prov:wasGeneratedBy",
}

_FORMATS = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".ndjson": "application/jsonlines",
    ".jsonl": "application/jsonlines",
    ".json": "application/json",
    ".cff": "application/x-yaml",
    ".yaml": "application/x-yaml",
    ".yml": "application/x-yaml",
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".html": "text/html",
    ".j2": "text/plain",
}
_NAMES = {"SHA256SUMS": "text/plain"}
_TABULAR = ("text/csv", "text/tab-separated-values", "application/jsonlines", "application/json")
_JSON_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Reader = Callable[[str], bytes]


def encoding_format(path: str) -> str:
    """The MIME type croissant.json gives a kit file, from its name."""
    name = path.rsplit("/", 1)[-1]
    if name in _NAMES:
        return _NAMES[name]
    dot = name.rfind(".")
    return _FORMATS.get(name[dot:].lower(), "application/octet-stream") if dot > 0 else "application/octet-stream"


def context() -> dict[str, Any]:
    """The JSON-LD @context of Croissant 1.1, with prov: for the provenance fields."""
    loaded: dict[str, Any] = orjson.loads((schema_path("index").parent / "croissant-context.json").read_bytes())
    return loaded


def missing_rai(provenance: Mapping[str, Any]) -> list[str]:
    """The rai: keys kit.yaml leaves empty, in order."""
    found = provenance.get("rai")
    given: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return [key for key in RAI_FIELDS if key not in given]


def _licence_url(licence: str) -> str:
    """An SPDX identifier as its licence page; any other text as written."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.+-]*", licence):
        return f"https://spdx.org/licenses/{licence}.html"
    return licence


def _scalar_type(values: Sequence[Any]) -> str | None:
    """The Croissant data type of a JSON field, or None when its values are not one scalar kind."""
    if all(isinstance(v, bool) for v in values):
        return "sc:Boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "sc:Integer"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "sc:Float"
    if all(isinstance(v, str) for v in values):
        return "sc:Text"
    return None


def _text_type(values: Sequence[str]) -> str | None:
    """The data type of a CSV or TSV column: integers, numbers, or text; None with an empty cell."""
    if any(v == "" for v in values):
        return None
    if all(re.fullmatch(r"-?[0-9]{1,18}", v) for v in values):
        return "sc:Integer"
    if all(re.fullmatch(r"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", v) for v in values):
        return "sc:Float"
    return "sc:Text"


def _rows(data: bytes, fmt: str, whole: bool, records: int = RECORDS_READ) -> list[Any] | None:
    """The first ``records`` records of a tabular file as parsed, or None when they cannot be read."""
    if fmt == "application/json":
        if not whole:
            return None
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        return doc[:records] if isinstance(doc, list) else None
    if not whole:  # the last line read may be cut short
        data = data[: data.rfind(b"\n") + 1]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if fmt == "application/jsonlines":
        rows = []
        for line in text.splitlines():
            if line.strip():
                try:
                    rows.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    return None
            if len(rows) == records:
                break
        return rows
    reader = csv.reader(io.StringIO(text), delimiter="\t" if fmt == "text/tab-separated-values" else ",")
    try:
        table = [row for _, row in zip(range(records + 1), reader)]
    except csv.Error:  # a NUL, a lone carriage return, a field past csv's size limit: not a table
        return None
    if len(table) < 2 or any(len(row) != len(table[0]) for row in table):
        return None
    return [dict(zip(table[0], row)) for row in table[1:]]


def _fields(rows: list[Any], fmt: str) -> list[tuple[str, str]]:
    """(name, data type) of each field every record read has, with one scalar type: in the first
    record's order."""
    if not rows or not all(isinstance(r, dict) for r in rows):
        return []
    found = []
    for name in rows[0]:
        if not all(name in r for r in rows):
            continue
        if fmt == "application/json" and not _JSON_NAME.fullmatch(name):
            continue  # (a JSONPath of a plain name only)
        values = [r[name] for r in rows]
        kind = _text_type(values) if fmt in ("text/csv", "text/tab-separated-values") else _scalar_type(values)
        if kind is not None:
            found.append((name, kind))
    return found


def record_set(path: str, fmt: str, data: bytes, size: int, records: int = RECORDS_READ) -> dict[str, Any] | None:
    """The RecordSet of one tabular file, or None when its first ``records`` records (in
    ``data``, the file's first bytes) show no field."""
    rows = _rows(data, fmt, whole=size <= len(data), records=records)
    fields = _fields(rows or [], fmt)
    if not fields:
        return None
    out = []
    for name, kind in fields:
        extract = {"jsonPath": f"$[*].{name}"} if fmt == "application/json" else {"column": name}
        out.append({"@type": "cr:Field", "@id": f"{path}/records/{name}", "name": name, "dataType": kind, "source": {"fileObject": {"@id": path}, "extract": extract}})
    return {"@type": "cr:RecordSet", "@id": f"{path}/records", "name": f"{path}/records", "description": f"The records of {path}, with the fields its first records hold.", "field": out}


def croissant_document(provenance: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], read: Reader, description: str | None = None, bounded: bool = True, records: int = RECORDS_READ) -> dict[str, Any]:
    """croissant.json's document: ``entries`` are the files it describes (path, size, sha256),
    ``read(path)`` gives the first :data:`BYTES_READ` bytes of one of them (or as many as the
    caller reads with ``records``: :data:`EARLIER_READ`). ``bounded``: read the first
    :data:`RECORD_SETS` tabular files only (else until that many RecordSets are found)."""
    base = provenance.get("url") or ""
    found = provenance.get("rai")
    rai: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    doc: dict[str, Any] = {
        "@context": context(),
        "@type": "sc:Dataset",
        "conformsTo": [CROISSANT_1_1, RAI_1_0] if rai else CROISSANT_1_1,
        "name": provenance["kit"],
        "alternateName": provenance["title"],
        "description": description or provenance["title"],
    }
    if provenance.get("licence"):
        doc["license"] = _licence_url(str(provenance["licence"]))
    if base:
        doc["url"] = base
    people = authors(provenance)
    if people:
        doc["creator"] = [{"@type": "sc:Organization" if "name" in a else "sc:Person", "name": display_name(a), **({"sameAs": a["orcid"]} if "orcid" in a else {})} for a in people]
    doc["citeAs"] = bibtex(provenance)
    doc["datePublished"] = provenance["date"]
    if provenance.get("version"):
        doc["version"] = provenance["version"]
    for key, prop in RAI_FIELDS.items():
        if key in rai:
            doc[prop] = rai[key]
    ordered = sorted(entries, key=lambda e: e["path"])
    sets: list[dict[str, Any]] = []
    tried = 0
    for e in ordered:
        path, fmt = e["path"], encoding_format(e["path"])
        if fmt in _TABULAR and (tried if bounded else len(sets)) < RECORD_SETS and "/" in path:
            tried += 1
            found = record_set(path, fmt, read(path), e["size"], records)
            if found is not None:
                sets.append(found)
    doc["distribution"] = _FileObjects(ordered, base)
    doc["recordSet"] = sets
    return doc


class _FileObjects:
    """croissant.json's FileObjects, made a batch at a time as they are written: a kit of 100,000
    files would otherwise hold 100,000 dicts (90 MiB) at once, the peak of a verify."""

    def __init__(self, entries: Sequence[Mapping[str, Any]], base: str) -> None:
        self.entries, self.base = entries, base

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for e in self.entries:
            path = e["path"]
            yield {"@type": "cr:FileObject", "@id": path, "name": path, "contentUrl": self.base + path, "contentSize": f"{e['size']} B", "encodingFormat": encoding_format(path), "sha256": e["sha256"]}


def croissant_chunks(provenance: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], read: Reader, description: str | None = None, bounded: bool = True, records: int = RECORDS_READ) -> Iterator[bytes]:
    """croissant.json as kitbuild writes it (two-space indent, keys in order, a final newline), in
    pieces: verify hashes them as they come and build writes them a block at a time (a kit of
    100,000 files has a croissant.json of 33 MB), the FileObjects a batch at a time."""
    return dump_json_pieces(croissant_document(provenance, entries, read, description, bounded, records), "distribution")
