"""index.json and SHA256SUMS: every file of a kit, its size and digest.

index.json lists every file except itself, provenance.json and the rendered pages; SHA256SUMS
lists the record files (those copied from sources) in GNU coreutils' text format, so that
``sha256sum -c SHA256SUMS`` in the kit's root checks them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from kitbuild.jsonfile import dump_json

if TYPE_CHECKING:
    from kitbuild.entries import Entry

INDEX = "index.json"
PROVENANCE = "provenance.json"
SUMS = "SHA256SUMS"
README = "README.md"
INDEX_PAGE = "index.html"
# What provenance.json's "pages" names for a page rendered from kitbuild's own template.
BUILT_IN = "built-in"
TEMPLATES_DIR = "_templates"
# Files the build generates that index.json does not list (it cannot list itself, and the
# pages and provenance are rendered from it).
UNLISTED = (INDEX, PROVENANCE, README, INDEX_PAGE)


def sums_text(records: Iterable[Entry]) -> bytes:
    """SHA256SUMS: ``<hex>  <path>`` per record file, sorted by path."""
    return sums_of({e.path: e.sha256 for e in records})


def sums_of(digests: Mapping[str, str]) -> bytes:
    """SHA256SUMS from each record's path and hex digest: what :func:`sums_text` writes for them."""
    # Paths sorted alone, not (path, digest) pairs: half the time for 100,000 records.
    return sums_in_order((path, digests[path]) for path in sorted(digests))


def sums_in_order(pairs: Iterable[tuple[str, str]]) -> bytes:
    """SHA256SUMS from (path, hex digest) pairs already sorted by path."""
    return "".join([f"{digest}  {path}\n" for path, digest in pairs]).encode("utf-8")


def index_document(kit: str, entries: Iterable[Entry], provenance: Entry | None = None) -> dict[str, object]:
    """index.json as data: the kit's name, its files sorted by path, and provenance.json's size
    and digest.

    provenance.json is not a listed file (the pages are rendered from it), but its digest is
    recorded here so that ``kitbuild verify`` catches an edit to any of its bytes, including
    those no page shows (the tool's version, the allow list's reasons).
    """
    # The entries themselves, not dicts made of them: orjson writes a dataclass as the object of
    # its fields, in order, and templates read ``f.path`` from either; a kit of 100,000 files
    # would otherwise hold 100,000 dicts beside the entries.
    files = sorted(entries, key=lambda e: e.path)
    document: dict[str, object] = {"kit": kit, "files": files}
    if provenance is not None:
        document["provenance"] = provenance
    return document


def index_json(kit: str, entries: Iterable[Entry], provenance: Entry | None = None) -> bytes:
    """index.json's bytes (see :func:`index_document`)."""
    return dump_json(index_document(kit, entries, provenance))
