"""The checks of a kit: one function, run by ``verify`` on a kit it read and by ``build`` on the
kit it staged, before it may swap it in.

Input: what the kit says about itself (:class:`~kitbuild.kitdocs.KitDocs`) and one
:class:`~kitbuild.observe.Observation` per file. Output: a :class:`VerifyReport`, every finding
with its stable code, grouped by check. Because build gates on exactly this function over exactly
the bytes it wrote, "build succeeded" and "the fresh kit verifies clean" are one statement.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import replace
from typing import Any, Mapping, Sequence

from kitbuild import index as kit_index
from kitbuild.findings import SHAPE_CODES, Finding
from kitbuild.kitdocs import KitDocs, first_difference, word_forms
from kitbuild.kitfs import DIR, FILE, OTHER, SYMLINK, KitFS, MemberError, refusal
from kitbuild.metadata import METADATA_FILES, check_metadata, hashed_by_pass
from kitbuild.lines import blocks_of, locate
from kitbuild.observe import Observation, Plan
from kitbuild.verify_report import VerifyReport, file_findings, new_checks

PAGES = (kit_index.README, kit_index.INDEX_PAGE)
TEMPLATE_LIMIT = 1 << 20
_DIFF_CONTEXT = 200


def _short(a: str, b: str) -> tuple[str, str]:
    """Both digests cut where they differ (at least 4 digits), as a person reads them."""
    n = 4
    while n < min(len(a), len(b)) and a[:n] == b[:n]:
        n += 1
    return a[:n] + "…", b[:n] + "…"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _times(n: int) -> str:
    return "once" if n == 1 else ("never" if n == 0 else f"{n:,} times")


def plan_for(docs: KitDocs) -> Plan:
    """What to look for in the kit's files, from what the kit says about itself alone."""
    parts = docs.provenance_parts()
    # (One set made once, not two joined: a kit of 100,000 files.)
    paths = frozenset(itertools.chain((e["path"] for e in docs.entries), (p for p, m in docs.members.items() if m.kind == FILE)))
    words = tuple(forms for r in parts["rules"] if (forms := word_forms(r)) is not None)
    return Plan(paths=paths, placeholders=parts["placeholders"], words=words, allow=parts["allow"])


def files_to_observe(docs: KitDocs) -> list[str]:
    """Every regular file of the kit, in path order."""
    return [p for p, m in docs.members.items() if m.kind == FILE]


class _Places:
    """Findings waiting for their line (and column): an observation keeps byte offsets."""

    def __init__(self, fs: KitFS) -> None:
        self.fs = fs
        self.waiting: list[tuple[str, int, Finding, bool]] = []

    def add(self, offset: int, finding: Finding, column: bool = False) -> None:
        """``finding`` gets the line of ``offset`` in its file (and, with ``column``, its column
        before its message) once the file's few offsets are placed together."""
        self.waiting.append((finding.path, offset, finding, column))

    def findings(self) -> list[Finding]:
        offsets: dict[str, set[int]] = {}
        for path, offset, _, _ in self.waiting:
            if offset >= 0:
                offsets.setdefault(path, set()).add(offset)
        places: dict[str, dict[int, tuple[int, int]]] = {}
        for path, wanted in sorted(offsets.items()):
            try:
                with self.fs.open(path) as stream:
                    places[path] = locate(blocks_of(stream), wanted)
            except (MemberError, OSError):
                places[path] = {}
        out = []
        for path, offset, finding, column in self.waiting:
            line, col = places.get(path, {}).get(offset, (None, None))
            out.append(replace(finding, line=line, message=f"column {col}: {finding.message}" if column and col else finding.message))
        return out


def check(fs: KitFS, docs: KitDocs, observed: Mapping[str, Observation], label: str, *, render: bool = True) -> VerifyReport:
    """Every check of the kit ``fs``, from ``docs`` and the observation of each of its files."""
    checks = new_checks()
    findings: list[Finding] = list(fs.findings()) + list(docs.findings)
    index, provenance, members = docs.index, docs.provenance, docs.members
    parts = docs.provenance_parts()
    entries = docs.entries
    places = _Places(fs)

    # -- what is in the kit, and what index.json lists ------------------------------------
    on_disk = {p for p, m in members.items() if m.kind == FILE}
    links = sorted(p for p, m in members.items() if m.kind == SYMLINK)
    for p in links:
        findings.append(Finding("KB106", p, "is a symlink; a kit holds regular files only, and verify never follows a link"))
    filled: set[str] = set()  # the folders something lies in (a folder added empty is a change too)
    for folder in {p.rpartition("/")[0] for p, m in members.items() if m.kind != DIR}:
        while folder and folder not in filled:
            filled.add(folder)
            folder = folder.rpartition("/")[0]
    for p, m in members.items():
        if m.kind == OTHER:
            findings.append(Finding("KB107", p, "is a device, FIFO, socket or unreadable folder; a kit holds regular files only"))
        elif m.kind == DIR and p not in filled and (not (parent := p.rpartition("/")[0]) or parent in filled):  # the outermost
            findings.append(Finding("KB101", p, "is a folder with no file in it; a build writes none"))
    listed = _listed(entries, links, findings)
    folders = set(parts["folders"])
    template_paths = {p for p in listed if p.startswith(kit_index.TEMPLATES_DIR + "/")}
    records = {p for p in listed if p != kit_index.SUMS and p not in template_paths and p not in METADATA_FILES}
    if folders:
        for p in sorted(records):
            if p.partition("/")[0] not in folders:
                findings.append(Finding("KB306", kit_index.INDEX, f"lists {p}, which is in no source folder of provenance.json and not a file the build writes"))

    # -- schema ---------------------------------------------------------------------------
    checks["schema"].figures.append(
        f"index.json: {'matches its schema' if index.valid else 'does not match its schema'}, {_plural(len(entries), 'entry', 'entries')}; "
        + (f"provenance.json: {'matches its schema' if provenance.valid else 'does not match its schema'}, {_plural(len(parts['rules']), 'rule')}" if provenance.data is not None else "provenance.json: missing")
    )
    if index.valid and provenance.data is not None:
        recorded = index.document["provenance"]
        prov = observed.get(kit_index.PROVENANCE)
        if prov is not None and (recorded["size"], recorded["sha256"]) != (prov.size, prov.sha256):
            a, b = _short(recorded["sha256"], prov.sha256)
            findings.append(Finding("KB008", kit_index.PROVENANCE, f"index.json records {recorded['size']:,} bytes with sha256 {a}; the file here has {prov.size:,} bytes, {b}", expected=recorded["sha256"], found=prov.sha256))
    if index.valid and provenance.valid and index.document["kit"] != provenance.document["kit"]:
        findings.append(Finding("KB307", kit_index.INDEX, f"names the kit {index.document['kit']!r}; provenance.json names it {provenance.document['kit']!r}", expected=provenance.document["kit"], found=index.document["kit"]))

    # -- completeness ---------------------------------------------------------------------
    for p in sorted(p for p in on_disk if p in observed and observed[p].error is not None):
        findings.append(Finding("KB111", p, f"cannot be read: {observed[p].error}"))
    for p in sorted(on_disk.difference(listed, kit_index.UNLISTED)):
        findings.append(Finding("KB101", p, "is in the kit but not in index.json"))
    good = 0
    for p in sorted(listed):
        entry = listed[p]
        if p not in on_disk:
            if members.get(p) is None or members[p].kind == DIR:
                findings.append(Finding("KB102", p, "is listed in index.json but not in the kit"))
            continue
        obs = observed.get(p)
        if obs is None or obs.error is not None:
            continue
        ok = True
        if obs.size != entry["size"]:
            findings.append(Finding("KB103", p, f"has {obs.size:,} bytes; index.json says {entry['size']:,}", expected=str(entry["size"]), found=str(obs.size)))
            ok = False
        if obs.sha256 != entry["sha256"]:
            a, b = _short(entry["sha256"], obs.sha256)
            findings.append(Finding("KB104", p, f"has sha256 {b}; index.json says {a}", expected=entry["sha256"], found=obs.sha256))
            ok = False
        good += ok and p in records
    for page in PAGES:
        if page not in on_disk and (members.get(page) is None or members[page].kind == DIR):
            findings.append(Finding("KB603", page, f"is {'a folder' if page in members else 'missing'}; the build writes it beside index.json"))
    checks["completeness"].figures.append(f"{_plural(good, 'record file')} {'check' if good != 1 else 'checks'} against index.json (of {len(records):,} listed)")
    checks["completeness"].figures.append(f"{_plural(len(listed), 'file')} listed, {_plural(len(on_disk), 'file')} in the kit")

    # -- SHA256SUMS -------------------------------------------------------------------------
    # (Compared by the sha256 the pass read it with: only one that differs is read again, to
    # say how; a kit of 100,000 files does not hold its 10 MB.)
    seen = observed.get(kit_index.SUMS)
    readable = kit_index.SUMS in on_disk and seen is not None and seen.error is None
    as_written = readable and seen is not None and seen.sha256 == _sums_digest(listed, records).hex()
    sums: bytes | None = None
    if readable and not as_written:
        try:
            sums = fs.read(kit_index.SUMS, sha256=hashed_by_pass(observed, kit_index.SUMS))
        except MemberError as exc:
            if exc.kind == "changed":  # (what the pass read is not as written: that stands)
                findings.append(Finding("KB208", kit_index.SUMS, f"is not as kitbuild writes it, and it {exc.reason}"))
    if not as_written and sums is None:
        if kit_index.SUMS not in on_disk:
            findings.append(Finding("KB201", kit_index.SUMS, "is missing; the build writes it for sha256sum -c"))
        checks["sums"].skipped = "SHA256SUMS cannot be read"
    else:
        findings.extend(check_sums(sums, listed, records) if sums is not None else [])
        lines = sums.count(b"\n") if sums is not None else len(records)  # (as written: a line a record)
        checks["sums"].figures.append(f"{_plural(lines, 'line')} for {_plural(len(records), 'record file')}")

    # -- provenance in reverse ----------------------------------------------------------------
    rules_with_words = [(r, f) for r in parts["rules"] if (f := word_forms(r)) is not None]
    if not provenance.valid:
        checks["provenance"].skipped = "provenance.json is missing or does not match its schema"
    else:
        findings.extend(_check_provenance(provenance.document, records, observed, rules_with_words))
        rules = provenance.document["rules"]
        fired = sum(r["total"] for r in rules)
        files = len({p for r in rules for p in r["firings"]})
        checks["provenance"].figures.append(f"{_plural(len(rules), 'rule')}: {_plural(fired, 'firing')} in {_plural(files, 'file')}, re-observed in the records")
        skipped = [r["name"] for r in rules if word_forms(r) is None and r.get("primitive") != "digest"]
        if skipped:
            checks["provenance"].figures.append("the words of " + ", ".join(skipped) + " cannot be counted (a template, or nothing written)")

    # -- digests printed in records ---------------------------------------------------------
    _check_digests(checks, records, observed, parts["external"], places)

    # -- leaks --------------------------------------------------------------------------------
    from kitbuild.figures.verify import check_figures, pointer_leaks
    counts: dict[str, int] = {}
    pointers = pointer_leaks(fs, observed, provenance)  # a figure's JSON pointer, such as '/data/n'
    for p in sorted(p for p, o in observed.items() if o.leaks):
        for leak in observed[p].leaks:
            if leak.offset in pointers.get(p, ()) and leak.code in SHAPE_CODES:
                continue
            counts[leak.code] = counts.get(leak.code, 0) + 1
            places.add(leak.offset, Finding(leak.code, p, f"{leak.what}{_uncovered(leak.code)}"), column=True)
    findings.extend(places.findings())
    checks["leaks"].figures.append(
        f"{_plural(len(observed), 'file')} scanned: {_plural(counts.get('KB501', 0), 'private path')}, "
        f"{_plural(counts.get('KB502', 0), 'e-mail address', 'e-mail addresses')}, {_plural(counts.get('KB503', 0), 'private IPv4 address', 'private IPv4 addresses')}"
    )

    # -- pages and figures ------------------------------------------------------------------
    template = _check_pages(checks, findings, fs, docs, template_paths, on_disk, observed) if render else None
    if index.valid and provenance.valid:  # croissant.json and CITATION.cff (kitbuild.metadata)
        metadata_findings, metadata_lines = check_metadata(fs, docs, listed, observed, on_disk)
        findings.extend(metadata_findings)
        checks["pages"].figures.extend(metadata_lines)
    from kitbuild.figures.files import CheckedFiles

    # (Each file a figure reads again is checked against the sha256 it was observed with.)
    hashed = CheckedFiles(fs, lambda path: hashed_by_pass(observed, path))
    figures = check_figures(provenance.document if provenance.valid else None, hashed, index=index.document if index.valid else None, template=template)
    findings.extend(figures.findings)
    checks["figures"].figures.extend(figures.lines)
    checks["figures"].skipped = figures.skipped

    file_findings(checks, findings)
    report = VerifyReport(label, list(checks.values()))
    report.digest = index.digest
    return report


def _uncovered(code: str) -> str:
    if code in SHAPE_CODES:
        return " that the allow list in provenance.json does not cover"
    return ""


def _listed(entries: list[dict[str, Any]], links: Sequence[str], findings: list[Finding]) -> dict[str, dict[str, Any]]:
    """index.json's entries by path: those it may list, once each. What it may not list is a finding."""
    listed: dict[str, dict[str, Any]] = {}
    previous = None
    for entry in entries:
        p = entry["path"]
        why = refusal(p)
        if why:
            findings.append(Finding("KB105", kit_index.INDEX, f"lists the path {p!r}, which {why}; verify does not open it"))
            continue
        if any(p == link or p.startswith(link + "/") for link in links):
            findings.append(Finding("KB105", kit_index.INDEX, f"lists {p}, which resolves through a symlink; verify does not open it"))
            continue
        if p in listed:
            findings.append(Finding("KB108", kit_index.INDEX, f"lists {p} twice"))
            continue
        if p in kit_index.UNLISTED:
            findings.append(Finding("KB109", kit_index.INDEX, f"lists {p}, which the build never lists"))
            continue
        if previous is not None and p < previous:
            findings.append(Finding("KB110", kit_index.INDEX, f"lists {p} after {previous}; the build sorts files by path"))
        previous = p
        listed[p] = entry
    return listed


_SUMS_LINE = re.compile(r"([0-9A-Fa-f]{64}) ([ *])(.+)")


def check_sums(data: bytes, listed: Mapping[str, Mapping[str, Any]], records: set[str]) -> list[Finding]:
    """SHA256SUMS must be exactly what the build writes for the record files with index.json's
    digests: any other spelling (lines reordered, ' *' markers, upper-case hex) is a finding, so
    that every byte of the kit is pinned. Each line that differs is named, with why."""
    if hashlib.sha256(data).digest() == _sums_digest(listed, records):
        return []
    expected = kit_index.sums_of({p: listed[p]["sha256"] for p in records})
    findings = []
    seen: set[str] = set()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            findings.append(Finding("KB202", kit_index.SUMS, "is not UTF-8", line=number))
            continue
        m = _SUMS_LINE.fullmatch(text[1:] if text.startswith("\\") else text)
        if not m:
            findings.append(Finding("KB202", kit_index.SUMS, "is not '<64 hex>  <path>' or '<64 hex> *<path>'", line=number))
            continue
        digest, path = m.group(1).lower(), m.group(3)
        if text.startswith("\\"):
            # GNU escapes a name holding a backslash or a line break: '\\' and '\n'.
            path = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), path)
        why = refusal(path)
        if why:
            findings.append(Finding("KB207", kit_index.SUMS, f"lists the path {path!r}, which {why}", line=number))
            continue
        if path in seen:
            findings.append(Finding("KB203", kit_index.SUMS, f"lists {path} a second time", line=number))
            continue
        seen.add(path)
        if path not in records:
            findings.append(Finding("KB205", kit_index.SUMS, f"lists {path}, which is not a record file index.json lists", line=number))
            continue
        if digest != listed[path]["sha256"]:
            a, b = _short(listed[path]["sha256"], digest)
            findings.append(Finding("KB206", kit_index.SUMS, f"says {b} for {path}; index.json says {a}", line=number, expected=listed[path]["sha256"], found=digest))
    for path in sorted(records - seen):
        findings.append(Finding("KB204", path, "is a record file that SHA256SUMS does not list"))
    if not findings:
        # Every line says what the build says, in another spelling or order.
        findings.append(Finding("KB208", kit_index.SUMS, "is not written as kitbuild writes it (sorted by path, '<64 lower-case hex>  <path>', one line each, a final newline), so it was edited after the build", line=first_difference(expected, data)))
    return findings


def _sums_digest(listed: Mapping[str, Mapping[str, Any]], records: set[str]) -> bytes:
    """The sha256 of the SHA256SUMS the build writes, hashed a piece at a time: whole, with its
    lines, it took 35 MB for a kit of 100,000 files, at verify's peak."""
    digest = hashlib.sha256()
    for piece in kit_index.sums_pieces((p, listed[p]["sha256"]) for p in sorted(records)):
        digest.update(piece)
    return digest.digest()


def _check_provenance(doc: Mapping[str, Any], records: set[str], observed: Mapping[str, Observation], counted: Sequence[tuple[Mapping[str, Any], tuple[str, ...]]]) -> list[Finding]:
    """Each rule's recorded firings, re-observed in the record files."""
    findings = []
    rules = doc["rules"]
    for i, rule in enumerate(rules):
        total = sum(rule["firings"].values())
        if total != rule["total"]:
            findings.append(Finding("KB303", kit_index.PROVENANCE, f"rules[{i}] ({rule['name']}) has total {rule['total']:,}; its firings add up to {total:,}", expected=str(total), found=str(rule["total"])))
        for path in sorted(rule["firings"].keys() - records):
            findings.append(Finding("KB304", kit_index.PROVENANCE, f"rules[{i}] ({rule['name']}) fired in {path!r}, which is not a record file here"))
    # The record files read without error, in path order (a list: a kit of 100,000 files).
    readable = sorted(p for p in records if p in observed and observed[p].error is None)
    # The placeholder is the one word whose count must be exact: it replaced each withheld
    # digest, and nothing else in a record may look like it.
    placeholders = sorted({r["placeholder"] for r in rules if r["primitive"] == "digest"})
    for k, placeholder in enumerate(placeholders):
        fired: dict[str, int] = {}
        for rule in rules:
            if rule["primitive"] == "digest" and rule["placeholder"] == placeholder:
                for path, n in rule["firings"].items():
                    fired[path] = fired.get(path, 0) + n
        for path in readable:
            seen = observed[path].placeholders[k] if k < len(observed[path].placeholders) else 0
            if seen != fired.get(path, 0):
                findings.append(Finding("KB301", path, f"holds the placeholder {placeholder} {_times(seen)}; digest-withheld fired here {_times(fired.get(path, 0))}", expected=str(fired.get(path, 0)), found=str(seen)))
    for j, (rule, _) in enumerate(counted):
        i = next(n for n, r in enumerate(rules) if r is rule or r == rule)
        for path, n in sorted(rule["firings"].items()):
            obs = observed.get(path) if path in records else None
            if obs is not None and obs.error is None and j < len(obs.words) and obs.words[j] < n:
                findings.append(Finding("KB302", path, f"holds the words rules[{i}] ({rule['name']}) wrote {_times(obs.words[j])}; it fired here {_times(n)}", expected=f">= {n}", found=str(obs.words[j])))
    by_folder = {name: sum(1 for p in records if p.startswith(name + "/") or p == name) for name in {s["as"] for s in doc["sources"]}}
    if doc["records"] != len(records):
        findings.append(Finding("KB305", kit_index.PROVENANCE, f"records says {doc['records']:,}; index.json lists {len(records):,} record files", expected=str(len(records)), found=str(doc["records"])))
    for i, source in enumerate(doc["sources"]):
        n = by_folder.get(source["as"], 0)
        if source["files"] != n:
            findings.append(Finding("KB305", kit_index.PROVENANCE, f"sources[{i}] ({source['as']}) says {source['files']:,} files; index.json lists {n:,} in {source['as']}/", expected=str(n), found=str(source["files"])))
    return findings


def _check_digests(checks: Any, records: set[str], observed: Mapping[str, Observation], external: set[str], places: _Places) -> None:
    """Every digest a record prints resolves (a file here, withheld, or declared external), and
    every (path, digest) pair a record states holds for the copy here."""
    tally = {"here": 0, "withheld": 0, "external": 0, "unresolved": 0}
    pairs_ok = pairs_total = unread = 0
    # Made when a record first prints a digest: a kit of 100,000 files that print none should
    # not hold a map and a set of 100,000 digests for nothing (10 MB at build's peak).
    digest_of: dict[str, str] = {}
    here: set[str] = set()
    for p in sorted(records):
        obs = observed.get(p)
        if obs is None or obs.error is not None or obs.binary:
            continue
        if not digest_of and (obs.digests or obs.pairs):
            digest_of = {p: o.sha256 for p, o in observed.items() if o.error is None}
            here = set(digest_of.values())
        tally["withheld"] += sum(obs.placeholders)
        unread += obs.pairs_unread
        for hexdigest, (count, first) in sorted(obs.digests.items()):
            kind = "here" if hexdigest in here else "external" if hexdigest in external else "unresolved"
            tally[kind] += count
            if kind == "unresolved":
                message = f"prints sha256 {hexdigest[:12]}… {'once' if count == 1 else f'{count:,} times'}: no file here has it, it is not withheld and provenance.json does not declare it external"
                places.add(first, Finding("KB402", p, message, found=hexdigest))
        for (key, target, said), (count, first) in sorted(obs.pairs.items(), key=lambda item: (item[1][1], item[0])):
            pairs_total += count
            copy = digest_of.get(target)
            if copy is None or said == copy:
                pairs_ok += count
                continue
            a, b = _short(said, copy)
            message = f"{key} says {a} for {target}; the copy here has {b}" + (f" ({count:,} records say so; the first is on this line)" if count > 1 else "")
            where = first if first >= 0 else obs.digests.get(said, [0, -1])[1]
            places.add(where, Finding("KB401", p, message, expected=copy, found=said))
    total = sum(tally.values())
    checks["digests"].figures.append(
        f"{_plural(total, 'digest')} printed in records: {tally['here']:,} check against the copy here, "
        f"{tally['withheld']:,} withheld, {tally['external']:,} external, {tally['unresolved']:,} unresolved"
    )
    checks["digests"].figures.append(f"{_plural(pairs_total, 'printed digest')} paired with a file here: {pairs_ok:,} agree with its copy")
    if unread:
        checks["digests"].figures.append(f"{_plural(unread, 'JSON record')} too large or not parseable to read pairs from")


def _check_pages(checks: Any, findings: list[Finding], fs: KitFS, docs: KitDocs, template_paths: set[str], on_disk: set[str], observed: Mapping[str, Observation]) -> bytes | None:
    """Render README.md and index.html again from provenance.json and index.json, and compare
    (by the sha256 the pass read each page with). Returns the bytes of a travelling README
    template, if the kit has one."""
    check = checks["pages"]
    index, provenance = docs.index, docs.provenance
    if not (index.valid and provenance.valid):
        check.skipped = "index.json and provenance.json must both match their schemas"
        return None
    pages = provenance.document["pages"]
    custom: dict[str, str] = {}
    template: bytes | None = None
    if pages[kit_index.INDEX_PAGE] != kit_index.BUILT_IN:
        findings.append(Finding("KB604", kit_index.PROVENANCE, f"pages.index.html names {pages[kit_index.INDEX_PAGE]!r}; only the built-in index page template exists"))
        return None
    source = pages[kit_index.README]
    if source != kit_index.BUILT_IN:
        if source not in template_paths:
            findings.append(Finding("KB604", kit_index.PROVENANCE, f"pages.README.md names {source!r}, which is not a file index.json lists under {kit_index.TEMPLATES_DIR}/"))
            return None
        try:
            template = fs.read(source, TEMPLATE_LIMIT, sha256=hashed_by_pass(observed, source))
            custom["README.md.j2"] = template.decode("utf-8")
        except MemberError as exc:
            findings.append(Finding("KB604", kit_index.PROVENANCE, f"pages.README.md names {source}, which {exc.reason}"))
            return None
        except UnicodeDecodeError:
            findings.append(Finding("KB602", source, "is not UTF-8, so it cannot be rendered"))
            return template
    from kitbuild.pages import TemplateError, page_context, render_pages

    try:
        expect = render_pages(page_context(provenance.document, index.document, index.digest if index.canonical else None), custom)
    except TemplateError as exc:
        if exc.template is not None:  # the kit's own template: at its line, where one is at fault
            findings.append(Finding("KB602", source, f"cannot be rendered in the sandbox: {exc.reason}", line=exc.line))
        else:
            findings.append(Finding("KB602", source if source != kit_index.BUILT_IN else kit_index.README, f"cannot be rendered in the sandbox: {exc.message}"))
        return template
    except (KeyError, TypeError, ValueError) as exc:
        findings.append(Finding("KB602", kit_index.README, f"the pages cannot be rendered from this provenance.json and index.json ({type(exc).__name__})"))
        return template
    names = "the built-in templates" if source == kit_index.BUILT_IN else f"{source} and the built-in index page template"
    check.figures.append(f"README.md and index.html re-rendered from provenance.json and index.json with {names}, in the sandbox")
    for page in PAGES:
        if page not in on_disk:
            continue
        want = expect.get(page, b"")
        hashed = hashed_by_pass(observed, page)
        if hashed is not None and hashlib.sha256(want).hexdigest() == hashed:
            continue
        try:
            found = fs.read(page, sha256=hashed)  # again, only to say where it differs
        except MemberError as exc:
            if exc.kind == "changed":
                findings.append(Finding("KB601", page, f"differs from the page its template renders, and it {exc.reason}"))
            continue
        if found != want:
            line, a, b = _page_diff(want, found)
            findings.append(Finding("KB601", page, "differs from the page its template renders from provenance.json and index.json", line=line, expected=a, found=b))
    return template


def _page_diff(want: bytes, found: bytes) -> tuple[int, str, str]:
    """The first line that differs, as expected and as found."""
    at = next((i for i, (a, b) in enumerate(zip(want, found)) if a != b), min(len(want), len(found)))
    line = want.count(b"\n", 0, at) + 1

    def around(data: bytes) -> str:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        text = data[start : end if end >= 0 else len(data)]
        return text[:_DIFF_CONTEXT].decode("utf-8", "replace") + ("…" if len(text) > _DIFF_CONTEXT else "")

    return line, around(want), around(found)
