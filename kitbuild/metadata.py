"""The kit's metadata files, croissant.json and CITATION.cff: written by build, written again and
compared by verify, from the same inputs (provenance.json, index.json's entries and the first
records of each tabular file), like the pages.

Both are files index.json lists (so the kit's digest pins them) and that SHA256SUMS does not (it
lists the record files). A kit built by kitbuild 0.3.1 or later has a croissant.json, and a
CITATION.cff when its provenance.json names authors; earlier kits have neither, and need none.
0.3.0 began to write them part way through its life: a kit it built holds them if index.json
lists either, and then as 0.3.0 wrote them at first or at last (:data:`EARLIER_READ`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from kitbuild import index as kit_index
from kitbuild.citation import citation_cff
from kitbuild.croissant import BOUNDED_SINCE, BYTES_READ, EARLIER_READ, RECORDS_READ, croissant_chunks
from kitbuild.findings import Finding
from kitbuild.hashing import HEADS
from kitbuild.index import CITATION, CROISSANT
from kitbuild.kitdocs import KitDocs, first_difference
from kitbuild.kitfs import KitFS, MemberError

if TYPE_CHECKING:
    from kitbuild.observe import Observation

# The files this module writes, as index.json lists them.
METADATA_FILES = (CITATION, CROISSANT)
METADATA_SINCE = (0, 3, 0)
# Every kit built by this version or later has them; 0.3.0 wrote them from a later commit on,
# under the same version number, so its earlier kits (no croissant.json) keep verifying.
METADATA_ALWAYS_SINCE = (0, 3, 1)


def description(provenance: Mapping[str, Any]) -> str | None:
    """croissant.json's description: the kit's summary as the README prints it (its figures cited)."""
    if not provenance.get("summary"):
        return None
    from kitbuild.pages import page_context

    try:
        text = page_context(provenance, {"files": []}).get("summary")
    except Exception:  # a summary the pages cannot render either: the title stands in, both ways
        return None
    return str(text) if text else None


def reader(fs: KitFS, size: int, observed: Mapping[str, Observation], changed: list[str]) -> Any:
    """read(path): the first ``size`` bytes of a kit file, as croissant.json's RecordSets read
    them, held to the digest the pass read them with (kitbuild.hashing.HEADS). A file whose
    bytes are not those goes into ``changed`` and reads as none, as one that cannot be read."""

    def read(path: str) -> bytes:
        seen = observed.get(path)
        if seen is None or seen.error is not None or not seen.sha256:
            hashed = None
        else:
            hashed = seen.sha256 if seen.size <= size else dict(zip(HEADS, seen.heads)).get(size)
        try:
            return fs.read(path, size, hashed, head=True)
        except MemberError as exc:
            if exc.kind == "changed":
                changed.append(path)
        except OSError:
            pass
        return b""

    return read


def write_citation(provenance: Mapping[str, Any]) -> bytes | None:
    return citation_cff(provenance)


def write_croissant(provenance: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], provenance_entry: Mapping[str, Any], fs: KitFS, observed: Mapping[str, Observation] = {}, changed: list[str] | None = None) -> bytes:
    """croissant.json for the files ``entries`` lists (every file index.json lists but
    croissant.json itself) and provenance.json."""
    return b"".join(croissant_pieces(provenance, entries, provenance_entry, fs, observed, [] if changed is None else changed))


def croissant_pieces(provenance: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], provenance_entry: Mapping[str, Any], fs: KitFS, observed: Mapping[str, Observation], changed: list[str], reading: tuple[int, int] = (RECORDS_READ, BYTES_READ)) -> Iterator[bytes]:
    """croissant.json in pieces; ``reading``: how many records of a tabular file, in how many of
    its first bytes, its RecordSet reads (:data:`EARLIER_READ` for a kit of 0.3.0's first weeks).
    ``observed``: the pass's observations, whose digests the bytes read are held to (see
    :func:`reader`); ``changed`` gets each file whose bytes are not those."""
    from kitbuild.pages import built_by

    described = [e for e in entries if e["path"] != CROISSANT] + [provenance_entry]
    records, size = reading
    read = reader(fs, size, observed, changed)
    return croissant_chunks(provenance, described, read, description(provenance), bounded=built_by(provenance) >= BOUNDED_SINCE, records=records)


def built_since(provenance: Mapping[str, Any], listed: Mapping[str, Any]) -> bool:
    """Whether the kit should hold the metadata files: built by 0.3.1 or later, or by 0.3.0 once
    it wrote them (then index.json lists croissant.json, and CITATION.cff with authors).
    ``listed``: index.json's entries by path."""
    from kitbuild.pages import built_by

    version = built_by(provenance)
    return version >= METADATA_ALWAYS_SINCE or (version >= METADATA_SINCE and any(name in listed for name in METADATA_FILES))


def check_metadata(fs: KitFS, docs: KitDocs, listed: Mapping[str, Mapping[str, Any]], observed: Mapping[str, Observation], on_disk: set[str]) -> tuple[list[Finding], list[str]]:
    """croissant.json and CITATION.cff against what build writes for this kit, and each of
    croissant.json's FileObjects against index.json. Returns the findings and the report's lines.

    croissant.json is compared by its sha256 as the pass over the kit ``observed`` it: what
    build would write is hashed as it is made, never held whole (33 MB for 100,000 files), and
    read again only to say where it differs. ``on_disk``: the kit's regular files."""
    provenance, index = docs.provenance.document, docs.index.document
    if not built_since(provenance, listed):
        return [], []
    findings: list[Finding] = []
    lines: list[str] = []
    want_cff = citation_cff(provenance)
    if want_cff is not None or CITATION in on_disk:
        findings += _compare(fs, CITATION, want_cff, on_disk, "CITATION.cff", hashed_by_pass(observed, CITATION))
        lines.append("CITATION.cff written again from provenance.json and compared")
    seen = observed.get(CROISSANT)
    changed: list[str] = []
    # (Made only when there is a croissant.json to compare: making it reads up to 200 records.)
    if CROISSANT in on_disk and seen is not None and seen.error is None and any(
        seen.sha256 == _sha256(croissant_pieces(provenance, list(listed.values()), index["provenance"], fs, observed, changed, reading)) for reading in _readings(provenance)
    ) or changed:
        found = []  # (or made from bytes the pass did not hash: the files that changed are the findings)
    else:
        found = _compare(fs, CROISSANT, write_croissant(provenance, list(listed.values()), index["provenance"], fs, observed, changed), on_disk, "croissant.json", hashed_by_pass(observed, CROISSANT))
    # A tabular file whose first bytes, read for its RecordSet, are not the ones the pass hashed:
    # croissant.json is not judged by them (a server that answers twice, a writer on the disk).
    findings += [Finding("KB605", path, "changed while the kit was checked: croissant.json's RecordSet for it reads its first bytes, and these are not the bytes hashed when it was first read; check the kit again") for path in dict.fromkeys(changed)]
    findings += found
    if found and CROISSANT in on_disk:
        # The bytes kitbuild writes hold index.json's sha256 and size for each file: a
        # croissant.json equal to them agrees with index.json, and only one that differs is
        # parsed, to name each FileObject that does not (a kit of 100,000 files: 40 MB less).
        findings += _file_objects(fs, listed, index["provenance"], hashed_by_pass(observed, CROISSANT))
    lines.append(f"croissant.json written again from the kit and compared; its {len(listed) - (CROISSANT in listed) + 1:,} FileObjects checked against index.json")
    return findings, lines


def _readings(provenance: Mapping[str, Any]) -> Iterator[tuple[int, int]]:
    """How the kit's builder may have read its tabular files' records, made one at a time (the
    second only when the first differs): 0.3.0 read 1,000 records in 1 MiB at first, and 100 in
    64 KiB later, under the same version number."""
    from kitbuild.pages import built_by

    yield RECORDS_READ, BYTES_READ
    if built_by(provenance)[:3] == METADATA_SINCE:
        yield EARLIER_READ


def _sha256(chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def hashed_by_pass(observed: Mapping[str, Observation], path: str) -> str | None:
    """The sha256 the pass read ``path`` with (None if it could not): a check that reads a file
    again holds it to that (see KitFS.read), and judges the bytes that were hashed."""
    seen = observed.get(path)
    return seen.sha256 or None if seen is not None and seen.error is None else None


def _compare(fs: KitFS, name: str, want: bytes | None, on_disk: set[str], what: str, hashed: str | None) -> list[Finding]:
    code = "KB605" if name == CROISSANT else "KB607"
    if name not in on_disk:
        return [Finding(code, name, f"is missing; kitbuild writes it for every kit built by 0.3.0 or later{' that names authors' if name == CITATION else ''}")]
    if want is None:
        return [Finding(code, name, "is here, but provenance.json names no authors, so kitbuild writes none")]
    if hashed is not None and hashlib.sha256(want).hexdigest() == hashed:
        return []
    try:
        found = fs.read(name, sha256=hashed)  # again, only to say where it differs
    except MemberError as exc:
        if exc.kind == "changed":
            return [Finding(code, name, f"differs from the {what} kitbuild writes for this kit, and it {exc.reason}")]
        return [Finding(code, name, f"cannot be read: {exc.reason}")]
    if found == want:
        return []
    return [Finding(code, name, f"differs from the {what} kitbuild writes for this kit from its provenance.json, index.json and records", line=first_difference(want, found))]


def _file_objects(fs: KitFS, listed: Mapping[str, Mapping[str, Any]], provenance_entry: Mapping[str, Any], hashed: str | None) -> list[Finding]:
    """Each FileObject's sha256 and contentSize against index.json, file for file."""
    import orjson

    try:
        doc = orjson.loads(fs.read(CROISSANT, sha256=hashed))
    except MemberError as exc:
        if exc.kind == "changed":
            return []  # (said once, by the comparison before)
        return [Finding("KB606", CROISSANT, "is not valid UTF-8 JSON, so its FileObjects cannot be checked")]
    except orjson.JSONDecodeError:
        return [Finding("KB606", CROISSANT, "is not valid UTF-8 JSON, so its FileObjects cannot be checked")]
    expect = {p: e for p, e in listed.items() if p != CROISSANT}
    expect[kit_index.PROVENANCE] = provenance_entry
    objects = doc.get("distribution") if isinstance(doc, dict) else None
    seen: set[str] = set()
    findings = []
    for obj in objects if isinstance(objects, list) else []:
        if not isinstance(obj, dict) or obj.get("@type") != "cr:FileObject":
            continue
        path = obj.get("@id")
        if not isinstance(path, str) or path not in expect:
            findings.append(Finding("KB606", CROISSANT, f"has a FileObject {path!r} that index.json does not list"))
            continue
        seen.add(path)
        entry = expect[path]
        if obj.get("sha256") != entry["sha256"]:
            findings.append(Finding("KB606", CROISSANT, f"says sha256 {str(obj.get('sha256'))[:12]}… for {path}; index.json says {entry['sha256'][:12]}…", expected=entry["sha256"], found=str(obj.get("sha256"))))
        if obj.get("contentSize") != f"{entry['size']} B":
            findings.append(Finding("KB606", CROISSANT, f"says contentSize {obj.get('contentSize')!r} for {path}; index.json says {entry['size']:,} bytes", expected=f"{entry['size']} B", found=str(obj.get("contentSize"))))
    for path in sorted(expect.keys() - seen):
        findings.append(Finding("KB606", CROISSANT, f"has no FileObject for {path}, which index.json lists"))
    return findings
