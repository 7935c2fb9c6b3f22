"""The two files that describe a kit (index.json, provenance.json), read as a reader reads them:
whole, parsed, checked against the schemas kitbuild ships and against the exact bytes kitbuild
writes for the same content. (SHA256SUMS, which only restates index.json, is observed in the pass
like any file and compared by kitbuild.checks.)

``build`` reads its staged kit through the same code as ``verify`` reads a downloaded one, so a
kit whose description the build wrote is a kit this module accepts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping

import orjson

from kitbuild import index as kit_index
from kitbuild.findings import Finding
from kitbuild.jsonfile import dump_json, load_json_pieces
from kitbuild.kitfs import KitFS, Member, MemberError, NotAKitError
from kitbuild.schema import key_path, keys_out_of_order, load_schema, schema_errors

TEMPLATE_LIMIT = 1 << 20
_HEX = re.compile(r"[0-9a-f]{64}")


def kit_digest(index_bytes: bytes) -> str:
    """The one digest of a whole kit: the sha256 of its index.json.

    index.json pins every file of the kit but the pages (each with its size and sha256, and
    provenance.json's too), and its own bytes must be exactly what kitbuild writes for them; so
    no byte of a kit but the pages can change without changing this digest, and the pages are
    rendered from what it pins.
    """
    return "sha256:" + hashlib.sha256(index_bytes).hexdigest()


@dataclass
class JsonDoc:
    """index.json or provenance.json as read: its bytes, its document, and whether both are sound."""

    path: str
    data: bytes | None
    document: Any = None
    parsed: bool = False
    valid: bool = False
    canonical: bool = False  # its bytes are exactly what kitbuild writes for its document
    digest: str | None = None  # kit_digest of its bytes, kept when the bytes are let go

    def let_go(self) -> None:
        """Drop the bytes once they are observed: the checks need their digest, not them (16 MB
        of index.json for 100,000 files, held through every check)."""
        self.data = None


@dataclass
class KitDocs:
    """What a kit says about itself, read before its files are."""

    index: JsonDoc
    provenance: JsonDoc
    # (SHA256SUMS is not kept here: the pass observes it like any file, and the checks compare
    # its sha256, reading it again only to say how it differs: 10 MB for 100,000 files.)
    members: dict[str, Member]
    findings: list[Finding] = field(default_factory=list)
    template: tuple[str, bytes] | None = None

    @cached_property
    def entries(self) -> list[dict[str, Any]]:
        """index.json's well-formed entries, even when others are not (their findings are KB002)."""
        files = self.index.document.get("files") if isinstance(self.index.document, dict) else None
        return [
            e
            for e in (files if isinstance(files, list) else [])
            if isinstance(e, dict)
            and isinstance(e.get("path"), str)
            and isinstance(e.get("size"), int)
            and not isinstance(e.get("size"), bool)
            and isinstance(e.get("sha256"), str)
            and _HEX.fullmatch(e["sha256"])
        ]

    def provenance_parts(self) -> dict[str, Any]:
        """What the pass over the files needs from provenance.json, taken defensively when it
        fails its schema."""
        doc = self.provenance.document if isinstance(self.provenance.document, dict) else {}
        rules = [r for r in doc.get("rules", []) if isinstance(r, dict)] if isinstance(doc.get("rules"), list) else []
        raw_external, raw_allow, raw_sources = doc.get("external_digests"), doc.get("allow"), doc.get("sources")
        external = raw_external if isinstance(raw_external, dict) else {}
        allow = raw_allow if isinstance(raw_allow, list) else []
        sources = raw_sources if isinstance(raw_sources, list) else []
        return {
            "rules": rules,
            "placeholders": placeholders_of(rules),
            "external": {k.lower() for k in external if isinstance(k, str)},
            # (An allow text longer than the leak scan looks for cannot be one kitbuild wrote; the
            # schema reports it, and it allows nothing.)
            "allow": tuple(a["text"] for a in allow if isinstance(a, dict) and isinstance(a.get("text"), str) and a["text"] and len(a["text"].encode("utf-8")) <= 512),
            "folders": [s["as"] for s in sources if isinstance(s, dict) and isinstance(s.get("as"), str)],
        }


def placeholders_of(rules: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(sorted({r["placeholder"] for r in rules if r.get("primitive") == "digest" and isinstance(r.get("placeholder"), str) and r["placeholder"]}))


def word_forms(rule: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The spellings of the words a rule wrote that a file may hold, or None if they cannot be
    counted. In JSON a word is written as a string body, so its escaped form counts too; a regex
    rule's replacement with group references is a template, not a word."""
    if rule.get("primitive") == "digest":
        return None
    writes = rule.get("writes", [])
    if not isinstance(writes, list):  # (provenance.json fails its schema: KB006)
        return None
    words = [w for w in writes if isinstance(w, str) and w]
    if not words or (rule.get("primitive") == "regex" and any("\\" in w for w in words)):
        return None
    return tuple(sorted(set(words) | {orjson.dumps(w).decode("utf-8")[1:-1] for w in words}))


def read_docs(fs: KitFS, observed: Mapping[str, Any] | None = None) -> KitDocs:
    """Read and check index.json and provenance.json, and list the kit.

    ``observed``: the observation of each file by kit path, made as the caller wrote it (build),
    so index.json's bytes are let go once checked, before the kit is listed, the listing needs no
    sizes (verify observes index.json from the bytes in hand, and shares the work by size), and
    each entry shares its path and sha256 strings with the file's observation.
    Raises :class:`NotAKitError` when there is no readable index.json at all.
    """
    findings: list[Finding] = []
    index = JsonDoc(kit_index.INDEX, _read(fs, kit_index.INDEX, required=True))
    index.digest = kit_digest(index.data) if index.data is not None else None
    unreadable: list[str] = []
    provenance = JsonDoc(kit_index.PROVENANCE, _read(fs, kit_index.PROVENANCE, required=False, unreadable=unreadable))
    _parse(index, findings, "KB001", None if observed is None else _shared_with(observed))
    _parse(provenance, findings, "KB005")
    _validate(index, findings, ("KB002", "KB003"), "index")
    _validate(provenance, findings, ("KB006", "KB007"), "provenance")
    if observed is not None:
        index.let_go()
    # Listed after the bytes are let go, so as not to add to the peak with them.
    members = _listing(fs, observed is None, index.document)
    if provenance.data is None:
        # There but damaged (an archive member cut short) is not 'missing': say what it is.
        what = unreadable[0] if unreadable else "is missing"
        findings.append(Finding("KB004", kit_index.PROVENANCE, f"{what}; without it no rule's firings can be checked"))
    return KitDocs(index, provenance, members, findings)


def _listing(fs: KitFS, sizes: bool, index: Any) -> dict[str, Member]:
    """The kit's members by path. A path index.json lists is kept as the one string the parse
    made, not held twice (8 MB for 100,000 files)."""
    files = index.get("files") if isinstance(index, dict) else None
    same = {e["path"]: e["path"] for e in files if isinstance(e, dict) and isinstance(e.get("path"), str)} if isinstance(files, list) else {}
    members = {}
    for m in fs.members(sizes=sizes):
        path = same.get(m.path)
        if path is not None:
            m = Member(path, m.kind, m.size)
        members[m.path] = m
    return members


def _read(fs: KitFS, path: str, required: bool, unreadable: list[str] | None = None) -> bytes | None:
    try:
        return fs.read(path)
    except MemberError as exc:
        if required:
            raise NotAKitError(f"{fs.label}: {path} {exc.reason}; a kit has an index.json at its root.") from None
        if exc.kind == "unreadable" and unreadable is not None:
            unreadable.append(exc.reason)
        return None  # reported as missing (a folder, a link or a FIFO in its place is no such file)


def _shared_with(observed: Mapping[str, Any]) -> Callable[[list[Any]], None]:
    """What makes each entry's path and sha256, as a block of index.json is parsed, the very
    strings of the file's observation, where they are equal: a build holds both at its peak
    (100,000 files: 19 MiB less)."""

    def share(entries: list[Any]) -> None:
        for entry in entries:
            path = entry.get("path") if type(entry) is dict else None
            seen = observed.get(path) if isinstance(path, str) else None
            if seen is not None:
                entry["path"] = seen.path
                if entry.get("sha256") == seen.sha256:
                    entry["sha256"] = seen.sha256

    return share


def _parse(doc: JsonDoc, findings: list[Finding], code: str, each: Callable[[list[Any]], None] | None = None) -> None:
    if doc.data is None:
        return
    try:
        if doc.path == kit_index.INDEX:
            # In pieces, where it is laid out as kitbuild writes it: index.json of 100,000 files
            # is 16 MB, and orjson's parse of it whole takes 26 MB more while it runs.
            doc.document, doc.canonical = load_json_pieces(doc.data, "files", each)
        else:
            doc.document = orjson.loads(doc.data)
    except orjson.JSONDecodeError as exc:
        findings.append(Finding(code, doc.path, f"is not valid UTF-8 JSON: {exc.msg} (column {exc.colno})", line=exc.lineno))
        return
    doc.parsed = True


def _validate(doc: JsonDoc, findings: list[Finding], codes: tuple[str, str], schema: str) -> None:
    """Against its schema, and against the bytes kitbuild writes for the same document."""
    if not doc.parsed:
        return
    assert doc.data is not None
    bad_schema, bad_layout = codes
    rules = load_schema(schema)
    errors = list(schema_errors(doc.document, rules))
    for where, what in errors:
        findings.append(Finding(bad_schema, doc.path, f"{key_path(where)}: {what}"))
    doc.valid = not errors
    if not doc.canonical:  # else found so by the parse (index.json's, in pieces)
        try:
            canonical = dump_json(doc.document)
        except orjson.JSONEncodeError:
            # Nested deeper than kitbuild ever writes: it cannot be what a build wrote.
            canonical = b""
        doc.canonical = canonical == doc.data
        if not doc.canonical:
            findings.append(
                Finding(
                    bad_layout,
                    doc.path,
                    "is not laid out as kitbuild writes it (two-space indent, keys in the order written, a final newline), so it was edited after the build",
                    line=first_difference(canonical, doc.data),
                )
            )
            return
    # Dumped again, a parse keeps the file's own key order: the order is checked on its own.
    disorder = keys_out_of_order(doc.document, rules)
    if disorder is not None:
        doc.canonical = False
        findings.append(Finding(bad_layout, doc.path, f"{key_path(disorder)}: keys are not in the order kitbuild writes them, so it was edited after the build"))


def first_difference(want: bytes, found: bytes) -> int:
    """The first line (from 1) on which ``found`` differs from ``want``."""
    for number, (a, b) in enumerate(zip(want.split(b"\n"), found.split(b"\n")), 1):
        if a != b:
            return number
    return min(want.count(b"\n"), found.count(b"\n")) + 1
