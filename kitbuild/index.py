"""index.json and SHA256SUMS: every file of a kit, its size and digest.

index.json lists every file except itself, provenance.json and the rendered pages; SHA256SUMS
lists the record files (those copied from sources) in GNU coreutils' text format, so that
``sha256sum -c SHA256SUMS`` in the kit's root checks them.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from typing import Any, Iterable, Iterator, Mapping

from kitbuild.jsonfile import dump_json

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
CROISSANT = "croissant.json"
CITATION = "CITATION.cff"
# The files a build writes about the kit: what they print (every file's digest) is checked by
# their own checks, never as a record's digests or pairs.
WRITTEN = (INDEX, PROVENANCE, SUMS, README, INDEX_PAGE, CROISSANT, CITATION)


def sums_of(digests: Mapping[str, str]) -> bytes:
    """SHA256SUMS from each record's path and hex digest: what :func:`sums_text` writes for them."""
    # Paths sorted alone, not (path, digest) pairs: half the time for 100,000 records.
    return sums_in_order((path, digests[path]) for path in sorted(digests))


def sums_in_order(pairs: Iterable[tuple[str, str]]) -> bytes:
    """SHA256SUMS from (path, hex digest) pairs already sorted by path."""
    return "".join([f"{digest}  {path}\n" for path, digest in pairs]).encode("utf-8")


def sums_pieces(pairs: Iterable[tuple[str, str]]) -> Iterator[bytes]:
    """SHA256SUMS from (path, hex digest) pairs already sorted by path, a few thousand lines at a
    time: build writes it and verify hashes it so, never whole (9 MB for 100,000 files)."""
    pairs = iter(pairs)
    while batch := list(itertools.islice(pairs, 4096)):
        yield sums_in_order(batch)


def entry(path: str, data: bytes) -> dict[str, Any]:
    """A listed file: its path, size and sha256."""
    return {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def index_document(kit: str, entries: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> dict[str, Any]:
    """index.json: the kit's name, its files sorted by path, and provenance.json's size and digest.

    provenance.json is not a listed file (the pages are rendered from it), but its digest is
    recorded here so that an edit to any of its bytes, including those no page shows (the tool's
    version, the allow list's reasons), is caught.
    """
    # An entry made as entry() makes it is taken as it is, not copied: 100,000 of them are 20 MB.
    files = [e if type(e) is dict and tuple(e) == _ENTRY else {"path": e["path"], "size": e["size"], "sha256": e["sha256"]} for e in sorted(entries, key=_path)]
    return {"kit": kit, "files": files, "provenance": {"path": PROVENANCE, "size": provenance["size"], "sha256": provenance["sha256"]}}


def index_bytes(kit: str, entries: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any]) -> bytes:
    """index.json's bytes (see :func:`index_document`)."""
    return dump_json(index_document(kit, entries, provenance))


_ENTRY = ("path", "size", "sha256")
_path = operator.itemgetter("path")
