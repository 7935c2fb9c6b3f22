"""``kitbuild verify KIT``: a kit checked in reverse, from its own files alone.

What a reader runs on a kit they downloaded. Every claim the kit makes about itself (its schemas,
its file list, SHA256SUMS, each rule's firings, the digests its records print, that no private
path is in it, and its pages) is re-derived from the kit's files and compared; every finding is
collected, file by file, and reported. Nothing from the kit is imported or run: a template that
travels with it is rendered only in jinja2's sandbox, and every path it names goes through
:mod:`kitbuild.kitfs`, which never opens anything outside the kit.

Each file is read once (:mod:`kitbuild.filescan`), in worker processes when there is enough
to share; the small files the plan is made of (index.json, provenance.json, SHA256SUMS, a
travelling template) are read whole and scanned from memory. The workers start before the
checks that need no file's bytes (the schemas, the pages, SHA256SUMS): on the files below the
root as soon as the kit is listed and its two JSON files parsed, or, for a kit of many small
files, on a head start (:mod:`kitbuild.prescan`) sooner still. A file is read a second time only
to put line numbers on findings in it, or when that head start found something in it before the
plan was whole.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import os
import re
import sys
from typing import Any, Mapping, NamedTuple, Sequence

import orjson

from kitbuild import index as kit_index
from kitbuild.filescan import FileScan, ScanPlan, StartedScan, default_jobs, locate_in, scan_bytes, scan_files
from kitbuild.findings import Finding
from kitbuild.jsonfile import dump_json
from kitbuild.kitfs import DIR, FILE, OTHER, SYMLINK, ArchiveLimits, KitFS, Member, MemberError, NotAKitError, open_kit, refusal
from kitbuild.mapped import hexdigest as sha256_hex
from kitbuild.memory import collector_paused, keep_until_exit
from kitbuild.prescan import Prescan
from kitbuild.progress import SILENT, Progress
from kitbuild.schema import key_path, load_schema, schema_errors
from kitbuild.verify_report import VerifyReport, file_findings, new_checks

PAGES = (kit_index.README, kit_index.INDEX_PAGE)
BUILT_IN = kit_index.BUILT_IN
TEMPLATE_LIMIT = 1 << 20
_SUMS_LINE = re.compile(r"([0-9A-Fa-f]{64}) ([ *])(.+)")
_HEX = re.compile(r"[0-9a-f]{64}")
_DIGITS = re.compile(rb"[0-9]{1,19}")
_SCANNED_SIZE = operator.attrgetter("size")
_SHA256 = operator.attrgetter("sha256")
_KIND = operator.attrgetter("kind")
_PATH, _SIZE, _DIGEST = operator.itemgetter("path"), operator.itemgetter("size"), operator.itemgetter("sha256")


def _short(a: str, b: str) -> tuple[str, str]:
    """Both digests cut where they differ (at least 4 digits), as a person reads them."""
    n = 4
    while n < min(len(a), len(b)) and a[:n] == b[:n]:
        n += 1
    return a[:n] + "…", b[:n] + "…"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


class _Json:
    """A JSON file of the kit, read whole: its bytes, its document, and whether both are sound."""

    def __init__(self, path: str, data: bytes | None) -> None:
        self.path = path
        self.data = data
        self.document: Any = None
        self.parsed = False
        self.valid = False
        self.plain_files = False  # index.json: every entry passed _all_plain_entries


def _read_json(kit: KitFS, path: str, required: bool) -> _Json:
    """Read index.json or provenance.json whole (missing: raise if ``required``, else no data)."""
    try:
        return _Json(path, kit.read(path))
    except MemberError as exc:
        if required or exc.kind != "missing":
            raise NotAKitError(f"{kit.label}: {path} {exc.reason}; a kit has an index.json at its root.") from None
        return _Json(path, None)


def _parse_json(doc: _Json, findings: list[Finding], bad_json: str, schema: str) -> _Json:
    """Parse index.json or provenance.json, as read (checked against its schema and layout by
    :func:`_validate_json`, later: the pass over the files does not wait for that)."""
    data = doc.data
    if data is None:
        return doc
    try:
        doc.document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        findings.append(Finding(bad_json, doc.path, f"is not valid UTF-8 JSON: {exc.msg} (column {exc.colno})", line=exc.lineno))
        return doc
    doc.parsed = True
    doc.plain_files = schema == "index" and _all_plain_entries(doc.document)
    return doc


def _validate_json(doc: _Json, findings: list[Finding], codes: tuple[str, str], schema: str) -> None:
    """Check a parsed index.json or provenance.json against its schema and kitbuild's layout."""
    if not doc.parsed:
        return
    bad_schema, bad_layout = codes
    data, path = doc.data, doc.path
    assert data is not None
    errors = _schema_errors(doc.document, schema, doc.plain_files)
    for where, what in errors:
        findings.append(Finding(bad_schema, path, f"{key_path(where)}: {what}"))
    doc.valid = not errors
    canonical = dump_json(doc.document)
    if canonical != data:
        line = next((i for i, (a, b) in enumerate(zip(canonical.split(b"\n"), data.split(b"\n")), 1) if a != b), None)
        if line is None:
            line = min(canonical.count(b"\n"), data.count(b"\n")) + 1
        findings.append(Finding(bad_layout, path, "is not laid out as kitbuild writes it (two-space indent, keys in the order written, a final newline), so it was edited after the build", line=line))


def _pair_order(item: tuple[tuple[str, str, str], list[Any]]) -> tuple[int, tuple[str, str, str]]:
    """Pairs in the order their first records come (a JSON document's, without an offset, first)."""
    return (item[1][1] or 0, item[0])


def _size_hint(member: Member, entry: Mapping[str, Any] | None, page: bytes | None) -> int:
    """A file's size as listed, else as index.json records it, else as the page it should be,
    else 0: a hint, never checked."""
    if member.size is not None:
        return member.size
    if entry is not None:
        return int(entry["size"])
    return len(page) if page is not None else 0


def _listed(entries: list[dict[str, Any]], links: Sequence[str], findings: list[Finding]) -> tuple[dict[str, dict[str, Any]], bool]:
    """index.json's entries by path, those it may list and lists once; and whether it lists them
    in order. What it may not list is a finding."""
    paths = list(map(_PATH, entries))
    if not links and _plainly_listed(paths):
        return dict(zip(paths, entries)), True
    return _listed_one_by_one(entries, links, findings)


def _listed_one_by_one(entries: list[dict[str, Any]], links: Sequence[str], findings: list[Finding]) -> tuple[dict[str, dict[str, Any]], bool]:
    listed: dict[str, dict[str, Any]] = {}
    previous = None
    in_order = True  # index.json lists its files sorted by path (no KB110)
    for entry in entries:
        p = entry["path"]
        why = refusal(p)
        if why:
            findings.append(Finding("KB105", kit_index.INDEX, f"lists the path {p!r}, which {why}; verify does not open it"))
            continue
        if links and any(p == link or p.startswith(link + "/") for link in links):
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
            in_order = False
        previous = p
        listed[p] = entry
    return listed, in_order


def _plainly_listed(paths: list[str]) -> bool:
    """True when none of index.json's ``paths`` draws a finding from the loop that matches them
    to the kit (KB105, KB108, KB109, KB110), absent symlinks: none refused, none twice, none the
    build never lists, all in increasing order.

    Tested over all the paths at once, in C: matching 100,000 files so took 25 ms, the loop 50. Each
    path is wrapped in slashes as :func:`~kitbuild.kitfs.refusal` wraps it, and the wrapped paths
    are joined by line breaks: none of the parts it refuses ('/../', '/./', '//') holds a line
    break, so each is found in the joined text exactly when it is in one path's wrapping.
    """
    if not paths:
        return True
    wrapped = "/" + "/\n/".join(paths) + "/"
    if any(bad in wrapped for bad in ("/../", "/./", "//", "\0", "\\")):
        return False
    if ":" in wrapped and any(refusal(p) for p in paths):  # a drive letter: path by path
        return False
    return all(map(operator.lt, paths, itertools.islice(paths, 1, None))) and set(kit_index.UNLISTED).isdisjoint(paths)


def _all_plain_entries(document: Any) -> bool:
    """True when every entry of index.json's ``files`` surely meets index.schema.json's entry
    (a test stricter than the schema's: no float sizes, no digest with a final line break).

    Field by field over all entries, in C where it can be (the digests' characters tested all at
    once): entry by entry, the test cost a microsecond each, 0.1 s for 100,000 files.
    """
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, list):
        return False
    if not (set(map(type, files)) <= {dict} and set(map(len, files)) <= {3}):
        return False
    try:  # three keys each, so exactly these three
        paths, sizes, digests = list(map(_PATH, files)), list(map(_SIZE, files)), list(map(_DIGEST, files))
    except KeyError:
        return False
    if not (set(map(type, digests)) <= {str} and set(map(len, digests)) <= {64}):
        return False
    # Every digest a string 64 characters long, and all of them together hex: each one is.
    joined = "".join(digests)
    return (
        set(map(type, paths)) <= {str}
        and "" not in paths
        and set(map(type, sizes)) <= {int}
        and min(sizes, default=0) >= 0
        and joined.isascii()
        and not joined.encode("ascii").translate(None, b"0123456789abcdef")
    )


def _schema_errors(document: Any, schema: str, plain_files: bool = False) -> list[tuple[list[str | int], str]]:
    """Every schema violation of index.json or provenance.json.

    jsonschema spends tens of microseconds on each of index.json's entries, seconds for a kit of
    100,000 files; an entry that passes a plain stricter test needs no such check, so when all
    do (``plain_files``), only the rest of the document goes through jsonschema.
    """
    if plain_files:
        return list(schema_errors({**document, "files": []}, load_schema(schema)))
    if schema == "provenance" and _plain_firings(document):
        # The same for provenance.json's firings, one per rule and record file (6,000 on
        # workload B: 27 ms).
        return list(schema_errors({**document, "rules": [{**rule, "firings": {}} for rule in document["rules"]]}, load_schema(schema)))
    return list(schema_errors(document, load_schema(schema)))


def _plain_firings(document: Any) -> bool:
    """True when every rule's ``firings`` in provenance.json surely meets its schema (kit path to
    an integer of at least 1): a JSON object whose values are all such integers."""
    rules = document.get("rules") if isinstance(document, dict) else None
    if not isinstance(rules, list) or not all(isinstance(rule, dict) and isinstance(rule.get("firings"), dict) for rule in rules):
        return False
    return all(set(map(type, rule["firings"].values())) <= {int} and min(rule["firings"].values(), default=1) >= 1 for rule in rules)


def _entries(index: _Json) -> list[dict[str, Any]]:
    """index.json's well-formed entries, even when others are not (their findings are KB002)."""
    files = index.document.get("files") if isinstance(index.document, dict) else None
    if index.plain_files and isinstance(files, list):
        # Every entry passed _all_plain_entries, a stricter test than the one below.
        for entry in files:
            entry["sha256"] = sys.intern(entry["sha256"])
        return list(files)
    out = []
    for entry in files if isinstance(files, list) else []:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("path"), str)
            and isinstance(entry.get("size"), int)
            and not isinstance(entry.get("size"), bool)
            and isinstance(entry.get("sha256"), str)
            and _HEX.fullmatch(entry["sha256"])
        ):
            # Interned, as the scans' digests are (kitbuild.filescan): a kit of 100,000 files
            # then holds each digest once, not once from index.json and once from its scan.
            entry["sha256"] = sys.intern(entry["sha256"])
            out.append(entry)
    return out


def _provenance_parts(provenance: _Json) -> dict[str, Any]:
    """What the scan needs from provenance.json, taken defensively when it fails its schema."""
    doc = provenance.document if isinstance(provenance.document, dict) else {}
    rules = [r for r in doc.get("rules", []) if isinstance(r, dict)] if isinstance(doc.get("rules"), list) else []
    placeholders = tuple(sorted({r["placeholder"] for r in rules if r.get("primitive") == "digest" and isinstance(r.get("placeholder"), str) and r["placeholder"]}))
    raw_external, raw_allow, raw_sources = doc.get("external_digests"), doc.get("allow"), doc.get("sources")
    external = raw_external if isinstance(raw_external, dict) else {}
    allow = raw_allow if isinstance(raw_allow, list) else []
    sources = raw_sources if isinstance(raw_sources, list) else []
    return {
        "rules": rules,
        "placeholders": placeholders,
        "external": {k.lower() for k in external if isinstance(k, str)},
        "allow": tuple(a["text"] for a in allow if isinstance(a, dict) and isinstance(a.get("text"), str) and a["text"]),
        "folders": [s["as"] for s in sources if isinstance(s, dict) and isinstance(s.get("as"), str)],
    }


def _word_forms(rule: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The spellings of the words a rule wrote that a file may hold, or None if not re-observable.

    In JSON a word is written as a string body, so its escaped form counts too. A regex rule's
    replacement with group references is a template, not a word: its output cannot be counted.
    """
    if rule.get("primitive") == "digest":
        return None
    words = [w for w in rule.get("writes", []) if isinstance(w, str) and w]
    if not words or (rule.get("primitive") == "regex" and any("\\" in w for w in words)):
        return None
    forms = set(words) | {orjson.dumps(w).decode("utf-8")[1:-1] for w in words}
    return tuple(sorted(forms))


class _Places:
    """Findings waiting for their line (and column): a scan keeps byte offsets, not lines."""

    def __init__(self, kit: KitFS, in_memory: Mapping[str, bytes]) -> None:
        self.kit = kit
        self.in_memory = in_memory
        self.waiting: list[tuple[str, int | None, Any]] = []

    def add(self, path: str, offset: int | None, make: Any) -> None:
        """``make(line, col)`` builds the finding once the line at ``offset`` is known."""
        self.waiting.append((path, offset, make))

    def findings(self) -> list[Finding]:
        offsets: dict[str, set[int]] = {}
        for path, offset, _ in self.waiting:
            if offset is not None:
                offsets.setdefault(path, set()).add(offset)
        places = {path: locate_in(self.kit, path, wanted, self.in_memory.get(path)) for path, wanted in sorted(offsets.items())}
        return [make(*(places[path][offset] if offset is not None else (None, None))) for path, offset, make in self.waiting]


def verify(
    kit: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    progress: Progress = SILENT,
    limits: ArchiveLimits = ArchiveLimits(),
) -> VerifyReport:
    """Check the kit at ``kit`` (a folder, or a .tar.gz/.zip archive) in reverse and report every finding.

    Raises :class:`~kitbuild.kitfs.NotAKitError` (exit 2) when ``kit`` is not a kit at all: no such
    folder or archive, no index.json, unreadable, or an archive that expands past ``limits``.
    Anything else wrong, an archive's hostile members included, is a finding in the report.
    ``jobs`` worker processes read the files (default: one per core); the report is the same
    for any number. ``progress`` is told the files and bytes read as they are read.
    """
    with collector_paused():
        return _verify(open_kit(kit, limits), str(kit), jobs, progress)


class _Start(NamedTuple):
    """What verify learns before index.json is checked: enough for a head start (kitbuild.prescan)."""

    index_json: _Json  # read, not yet parsed
    provenance_json: _Json  # read and parsed (checked against its schema in _check)
    provenance_findings: list[Finding]
    parts: dict[str, Any]
    word_rules: list[tuple[dict[str, Any], tuple[str, ...] | None]]
    # The forms of the words each countable rule wrote: one tuple for the head start's plan and
    # the full one, which must look for the same words for a quiet file to be quiet in both.
    words: tuple[tuple[str, ...], ...]
    members: dict[str, Member]


def _verify(fs: KitFS, kit: str, jobs: int | None, progress: Progress) -> VerifyReport:
    # index.json first, so that a folder without one fails before any worker starts.
    index = _read_json(fs, kit_index.INDEX, True)
    provenance_findings: list[Finding] = []
    provenance = _parse_json(_read_json(fs, kit_index.PROVENANCE, False), provenance_findings, "KB005", "provenance")
    parts = _provenance_parts(provenance)
    word_rules = [(r, _word_forms(r)) for r in parts["rules"]]
    words = tuple(forms for _, forms in word_rules if forms is not None)
    members = {m.path: m for m in fs.members(sizes=False)}
    start = _Start(index, provenance, provenance_findings, parts, word_rules, words, members)
    workers = jobs or default_jobs()
    # The files below the root: those at the root are the pages and the files read whole.
    small = [p for p, m in members.items() if m.kind == FILE and "/" in p]
    with contextlib.ExitStack() as cleanup:  # stops whatever workers _check started, however it ends
        prescan = None
        if Prescan.wanted(len(small), workers, fs.sequential, _size_sample(index.data)):
            # Placeholders and words: what the quiet test looks for, all from provenance.json.
            prescan = Prescan(fs, small, ScanPlan(records=frozenset(), paths=frozenset(), placeholders=parts["placeholders"], words=words), workers)
            cleanup.callback(prescan.cancel)
        return _check(fs, kit, workers, progress, start, prescan, cleanup)


def _size_sample(data: bytes | None) -> list[int]:
    """The sizes of up to 256 of the files index.json lists, spread over them, read off its bytes
    (``"size": N`` as the build writes it) without parsing it: what :meth:`Prescan.wanted` judges
    the kit's files by, before the head start that parsing 100,000 entries would delay. Sizes
    from a file that may be wrong, or laid out otherwise, only choose the faster way; the report
    is the same either way."""
    out: list[int] = []
    if not data:
        return out
    step = max(1, len(data) // 256)
    for at in range(0, len(data), step):
        i = data.find(b'"size": ', at)
        if i < 0:
            break
        digits = _DIGITS.match(data, i + 8)
        if digits is not None:
            out.append(int(digits.group()))
    return out


def _check(
    fs: KitFS, kit: str, jobs: int, progress: Progress, start: _Start, prescan: Prescan | None, cleanup: contextlib.ExitStack
) -> VerifyReport:
    """Every check, from what :func:`_verify` read first; ``prescan``, if running, is joined for
    the pass over the files. Workers started here are stopped by ``cleanup`` if a check fails."""
    index, provenance, provenance_findings, parts, word_rules, words, members = start
    checks = new_checks()
    findings: list[Finding] = []

    _parse_json(index, findings, "KB001", "index")
    # The schemas are checked after the head start below, if there is one; with the small
    # files' own head start (prescan), now, before the sets of 100,000 paths below are made:
    # the canonical copy of index.json it compares against would add its size to the peak.
    validated = prescan is not None
    if validated:
        _validate_json(index, findings, ("KB002", "KB003"), "index")
        _validate_json(provenance, findings, ("KB006", "KB007"), "provenance")

    # -- what is in the kit, and what index.json lists -------------------------------------
    findings.extend(fs.findings())
    on_disk = {p for p, m in members.items() if m.kind == FILE}
    kinds = set(map(_KIND, members.values()))  # a kit holds no link and nothing else odd, mostly
    links = sorted(p for p, m in members.items() if m.kind == SYMLINK) if SYMLINK in kinds else []
    for p in links:
        findings.append(Finding("KB106", p, "is a symlink; a kit holds regular files only, and verify never follows a link"))
    for p, m in members.items() if OTHER in kinds else ():  # in path order: fs.members() lists them so
        if m.kind == OTHER:
            findings.append(Finding("KB107", p, "is a device, FIFO, socket or unreadable folder; a kit holds regular files only"))

    entries = _entries(index)
    listed, in_order = _listed(entries, links, findings)

    folders = set(parts["folders"])
    # Each of these a C-level pass over the paths (a comprehension each cost 10 ms for 100,000).
    template_paths = set(filter(operator.methodcaller("startswith", kit_index.TEMPLATES_DIR + "/"), listed))
    records = set(listed).difference((kit_index.SUMS,), template_paths)
    in_folder = operator.methodcaller("startswith", tuple(f + "/" for f in folders if "/" not in f))
    outside = sorted(p for p in itertools.filterfalse(in_folder, records) if p.partition("/")[0] not in folders) if folders else []
    for p in outside:
        findings.append(Finding("KB306", kit_index.INDEX, f"lists {p}, which is in no source folder of provenance.json and not a file the build writes"))

    # -- a head start for the files below the root -----------------------------------------
    # Their plan is the whole plan but for the pages, which lie at the root: they can be read
    # while this process checks the schemas and renders the pages, which takes a fifth of the
    # run on a kit of large records (kitbuild.filescan.StartedScan). The modules those checks
    # need are imported only then: the workers start as copies of this process, and a copy
    # made sooner is made faster.
    plan = ScanPlan(
        records=frozenset(records),
        paths=frozenset(itertools.chain(listed, on_disk)),
        placeholders=parts["placeholders"],
        words=words,
        allow=parts["allow"],
    )
    early: StartedScan | None = None
    if prescan is None:
        below = [p for p, m in members.items() if m.kind == FILE and "/" in p and not p.startswith(kit_index.TEMPLATES_DIR + "/")]
        early = StartedScan(fs, below, [_size_hint(members[p], listed.get(p), None) for p in below], plan, jobs)
        cleanup.callback(early.cancel)
    from kitbuild.figures.verify import check_figures

    # -- schema ---------------------------------------------------------------------------
    if not validated:
        _validate_json(index, findings, ("KB002", "KB003"), "index")
        _validate_json(provenance, findings, ("KB006", "KB007"), "provenance")
    findings.extend(provenance_findings)
    if provenance.data is None:
        findings.append(Finding("KB004", kit_index.PROVENANCE, "is missing; without it no rule's firings can be checked"))
    checks["schema"].figures.append(
        f"index.json: {'matches its schema' if index.valid else 'does not match its schema'}, {_plural(len(entries), 'entry', 'entries')}; "
        + (f"provenance.json: {'matches its schema' if provenance.valid else 'does not match its schema'}, {_plural(len(parts['rules']), 'rule')}" if provenance.data is not None else "provenance.json: missing")
    )
    if index.valid and provenance.data is not None:
        recorded = index.document["provenance"]
        size, digest = len(provenance.data), sha256_hex(provenance.data)
        if (recorded["size"], recorded["sha256"]) != (size, digest):
            a, b = _short(recorded["sha256"], digest)
            findings.append(Finding("KB008", kit_index.PROVENANCE, f"index.json records {recorded['size']:,} bytes with sha256 {a}; the file here has {size:,} bytes, {b}", expected=recorded["sha256"], found=digest))
    if index.valid and provenance.valid and index.document["kit"] != provenance.document["kit"]:
        findings.append(Finding("KB307", kit_index.INDEX, f"names the kit {index.document['kit']!r}; provenance.json names it {provenance.document['kit']!r}", expected=provenance.document["kit"], found=index.document["kit"]))

    # -- the plan, and the pages it compares against --------------------------------------
    expect: dict[str, bytes] = {}
    pages_check = checks["pages"]
    custom_template: tuple[str, bytes] | None = None
    if not (index.valid and provenance.valid):
        pages_check.skipped = "index.json and provenance.json must both match their schemas"
    else:
        pages = provenance.document["pages"]
        custom: dict[str, str] = {}
        usable = True
        if pages[kit_index.INDEX_PAGE] != BUILT_IN:
            findings.append(Finding("KB604", kit_index.PROVENANCE, f"pages.index.html names {pages[kit_index.INDEX_PAGE]!r}; only the built-in index page template exists"))
            usable = False
        source = pages[kit_index.README]
        if source != BUILT_IN:
            if source not in template_paths:
                findings.append(Finding("KB604", kit_index.PROVENANCE, f"pages.README.md names {source!r}, which is not a file index.json lists under {kit_index.TEMPLATES_DIR}/"))
                usable = False
            else:
                try:
                    raw = fs.read(source, TEMPLATE_LIMIT)
                    custom_template = (source, raw)
                    custom["README.md.j2"] = raw.decode("utf-8")
                except MemberError as exc:
                    findings.append(Finding("KB604", kit_index.PROVENANCE, f"pages.README.md names {source}, which {exc.reason}"))
                    usable = False
                except UnicodeDecodeError:
                    findings.append(Finding("KB602", source, "is not UTF-8, so it cannot be rendered"))
                    usable = False
        if usable:
            # (Imported here, not at the top: jinja2's import would weigh on verify's start.)
            from kitbuild.pages import TemplateError, page_context, render_pages

            try:
                expect = render_pages(page_context(provenance.document, index.document), custom)
            except TemplateError as exc:
                findings.append(Finding("KB602", source if source != BUILT_IN else kit_index.README, f"cannot be rendered in the sandbox: {exc.message}"))
            except (KeyError, TypeError, ValueError) as exc:
                findings.append(Finding("KB602", kit_index.README, f"the pages cannot be rendered from this provenance.json and index.json ({type(exc).__name__})"))
        if expect:
            names = "the built-in templates" if source == BUILT_IN else f"{source} and the built-in index page template"
            pages_check.figures.append(f"README.md and index.html re-rendered from provenance.json and index.json with {names}, in the sandbox")

    counted = [(r, forms) for r, forms in word_rules if forms is not None]
    plan = plan.replace(expect=expect)

    # -- the one pass over every file ------------------------------------------------------
    in_memory: dict[str, bytes] = {kit_index.INDEX: index.data or b""}
    if provenance.data is not None:
        in_memory[kit_index.PROVENANCE] = provenance.data
    if custom_template is not None:
        in_memory[custom_template[0]] = custom_template[1]
    sums_data: bytes | None = None
    if kit_index.SUMS in on_disk:
        try:
            sums_data = fs.read(kit_index.SUMS)
            in_memory[kit_index.SUMS] = sums_data
        except MemberError:
            pass
    scans = {p: scan_bytes(p, data, plan) for p, data in in_memory.items()}
    # index.json's bytes are parsed and scanned now: holding them through the pass over a kit of
    # 100,000 files would cost as much as the file (a finding in it is placed by reading it again).
    index_size = len(in_memory.pop(kit_index.INDEX))
    index.data = None
    # -- SHA256SUMS (against index.json: checked while a head start's workers scan) ----------
    sums_check = checks["sums"]
    if sums_data is None:
        if kit_index.SUMS not in on_disk:
            findings.append(Finding("KB201", kit_index.SUMS, "is missing; the build writes it for sha256sum -c"))
        sums_check.skipped = "SHA256SUMS cannot be read"
    else:
        findings.extend(_check_sums(sums_data, listed, records))
        sums_lines = sums_data.count(b"\n")
        sums_check.figures.append(f"{_plural(sums_lines, 'line')} for {_plural(len(records), 'record file')}")

    # In path order, as members lists them.
    rest = [p for p, m in members.items() if m.kind == FILE and p not in scans]
    # The bytes to read, for the progress bar: a folder kit's files are listed without their
    # sizes (a system call each), so index.json's stand in, summed in C (a look-up per file cost
    # 50 ms for 100,000), less those of the files read already, plus the pages'.
    read = index_size + sum(len(d) for d in in_memory.values())
    to_read = sum(map(_SIZE, listed.values())) - sum(listed[p]["size"] for p in scans if p in listed)
    to_read += sum(len(page) for p, page in expect.items() if p in on_disk and p not in listed)
    progress.begin("verifying", len(rest) + len(scans), read + to_read)
    progress.advance(len(scans), read)
    # The scans with more than a size and a digest in them; the few that the loops below over
    # a kit of 100,000 files need to look at (the small files above are all counted in).
    loud = list(scans)
    if prescan is not None:
        prescan.finish(plan, set(scans), progress, scans, loud)
        rest = [p for p in rest if p not in scans]
    if early is not None:
        ahead = set(early.paths)
        rest = [p for p in rest if p not in ahead]
    # The same sizes, file by file, balance the workers.
    sizes = [_size_hint(members[p], listed.get(p), expect.get(p)) for p in rest]
    scans.update(scan_files(fs, rest, sizes, plan, jobs, progress, loud))
    if early is not None:
        scans.update(early.collect(progress, loud))
    progress.end()
    places = _Places(fs, in_memory)
    unreadable = {p: error for p in loud if (error := scans[p].error) is not None}

    # -- completeness ---------------------------------------------------------------------
    good_records = 0
    for p in sorted(unreadable):
        findings.append(Finding("KB111", p, f"cannot be read: {unreadable[p].reason}"))
    for p in sorted(on_disk.difference(listed, kit_index.UNLISTED)):
        findings.append(Finding("KB101", p, "is in the kit but not in index.json"))
    # Most often every listed file is here and as index.json records it (an unreadable one never
    # is): that is tested at once, in C (file by file, the loop below cost 60 ms for 100,000 files).
    # (An unreadable file's scan has no digest, so it never agrees.)
    agree = on_disk.issuperset(listed) and (
        list(map(_DIGEST, listed.values())) == list(map(_SHA256, listed_scans := list(map(scans.__getitem__, listed))))
        and list(map(_SIZE, listed.values())) == list(map(_SCANNED_SIZE, listed_scans))
    )
    if agree:
        good_records = len(records)  # every record is a listed file
    for p, entry in () if agree else listed.items() if in_order else sorted(listed.items()):
        if p not in on_disk:
            if members.get(p) is None or members[p].kind == DIR:
                findings.append(Finding("KB102", p, "is listed in index.json but not in the kit"))
            continue
        scan = scans[p]
        if scan.error is not None:
            continue
        ok = True
        if scan.size != entry["size"]:
            findings.append(Finding("KB103", p, f"has {scan.size:,} bytes; index.json says {entry['size']:,}", expected=str(entry["size"]), found=str(scan.size)))
            ok = False
        if scan.sha256 != entry["sha256"]:
            a, b = _short(entry["sha256"], scan.sha256)
            findings.append(Finding("KB104", p, f"has sha256 {b}; index.json says {a}", expected=entry["sha256"], found=scan.sha256))
            ok = False
        if ok and p in records:
            good_records += 1
    for page in PAGES:
        if page not in on_disk and members.get(page, None) is None:
            findings.append(Finding("KB603", page, "is missing; the build writes it beside index.json"))
    checks["completeness"].figures.append(f"{_plural(good_records, 'record file')} {'check' if good_records != 1 else 'checks'} against index.json (of {len(records):,} listed)")
    checks["completeness"].figures.append(f"{_plural(len(listed), 'file')} listed, {_plural(len(on_disk), 'file')} in the kit")

    # -- provenance in reverse ------------------------------------------------------------
    prov_check = checks["provenance"]
    if not provenance.valid:
        prov_check.skipped = "provenance.json is missing or does not match its schema"
    else:
        findings.extend(_check_provenance(provenance.document, records, scans, loud, counted))
        rules = provenance.document["rules"]
        fired = sum(r["total"] for r in rules)
        files = len({p for r in rules for p in r["firings"]})
        prov_check.figures.append(f"{_plural(len(rules), 'rule')}: {_plural(fired, 'firing')} in {_plural(files, 'file')}, re-observed in the records")
        skipped = [r["name"] for r, forms in word_rules if forms is None and r.get("primitive") != "digest"]
        if skipped:
            prov_check.figures.append("the words of " + ", ".join(skipped) + " cannot be counted (a template, or nothing written)")

    # -- digests printed in records ---------------------------------------------------------
    tally = {"here": 0, "withheld": 0, "external": 0, "unresolved": 0}
    pairs_ok = pairs_total = unread = 0
    # Only records that print a digest or hold a placeholder add to these counts.
    # (Over the scans in their order, most of them in path order, rather than the set of records.)
    printing = sorted(p for p in loud if ((s := scans[p]).digests or s.pairs or s.pairs_unread or any(s.placeholders)) and p in records)
    # Every file's digest, made only where some record prints one (20 ms for 100,000 files).
    digest_of = {p: s.sha256 for p, s in scans.items() if s.error is None} if printing else {}
    here = set(digest_of.values())
    for p in printing:
        scan = scans[p]
        tally["withheld"] += sum(scan.placeholders)
        unread += scan.pairs_unread
        printed = scan.digests
        # Most records print one digest or none: sorting those would be a tenth of this loop.
        for hexdigest, (count, first) in printed.items() if len(printed) < 2 else sorted(printed.items()):
            kind = "here" if hexdigest in here else "external" if hexdigest in parts["external"] else "unresolved"
            tally[kind] += count
            if kind == "unresolved":
                message = f"prints sha256 {hexdigest[:12]}… {'once' if count == 1 else f'{count:,} times'}: no file here has it, it is not withheld and provenance.json does not declare it external"
                places.add(p, first, lambda line, _, p=p, m=message, h=hexdigest: Finding("KB402", p, m, line=line, found=h))
        # A pair is counted only where a record prints a digest: one that prints the placeholder
        # always holds, and is not parsed at all (see kitbuild.filescan).
        paired = scan.pairs
        for (key, target, said_digest), (count, first) in paired.items() if len(paired) < 2 else sorted(paired.items(), key=_pair_order):
            pairs_total += count
            copy_digest = digest_of.get(target)
            if copy_digest is None or said_digest == copy_digest:
                pairs_ok += count
                continue
            said, has = _short(said_digest, copy_digest)
            message = f"{key} says {said} for {target}; the copy here has {has}" + (f" ({count:,} records say so; the first is on this line)" if count > 1 else "")
            where = first if first is not None else scan.digests.get(said_digest, [0, None])[1]
            places.add(p, where, lambda line, _, p=p, m=message, a=copy_digest, f=said_digest: Finding("KB401", p, m, line=line, expected=a, found=f))
    total = sum(tally.values())
    checks["digests"].figures.append(
        f"{_plural(total, 'digest')} printed in records: {tally['here']:,} check against the copy here, "
        f"{tally['withheld']:,} withheld, {tally['external']:,} external, {tally['unresolved']:,} unresolved"
    )
    checks["digests"].figures.append(f"{_plural(pairs_total, 'printed digest')} paired with a file here: {pairs_ok:,} agree with its copy")
    if unread:
        checks["digests"].figures.append(f"{_plural(unread, 'JSON record')} too large or not parseable to read pairs from")

    # -- leaks ------------------------------------------------------------------------------
    counts = {"KB501": 0, "KB502": 0, "KB503": 0}
    for p in sorted(p for p in loud if scans[p].leaks):
        scan = scans[p]
        for leak in scan.leaks:
            counts[leak.code] += 1
            places.add(p, leak.offset, lambda line, col, p=p, leak=leak: Finding(leak.code, p, f"column {col}: {leak.what} that the allow list in provenance.json does not cover", line=line))
    findings.extend(places.findings())
    checks["leaks"].figures.append(
        f"{_plural(len(scans), 'file')} scanned: {_plural(counts['KB501'], 'private path')}, "
        f"{_plural(counts['KB502'], 'e-mail address', 'e-mail addresses')}, {_plural(counts['KB503'], 'private IPv4 address', 'private IPv4 addresses')}"
    )

    # -- pages ------------------------------------------------------------------------------
    for page in PAGES:
        page_scan = scans.get(page)
        if page_scan is not None and page_scan.page_diff is not None:
            line, want, found = page_scan.page_diff
            findings.append(Finding("KB601", page, "differs from the page its template renders from provenance.json and index.json", line=line, expected=want, found=found))

    # -- figures (kitbuild.figures.verify: every figure recounted from the kit's own files) ----
    figures = check_figures(provenance.document if provenance.valid else None, fs, index=index.document if index.valid else None, template=custom_template[1] if custom_template else None)
    findings.extend(figures.findings)
    checks["figures"].figures.extend(figures.lines)
    checks["figures"].skipped = figures.skipped

    file_findings(checks, findings)
    # Everything made here for the kit's files, left alive where the process ends right after
    # the report (see keep_until_exit): freeing it object by object would take longer than most
    # of the checks above.
    keep_until_exit(locals())
    return VerifyReport(kit, list(checks.values()))


# Lines of SHA256SUMS written and compared at a time: the whole text for 100,000 records, built
# at once, raised verify's peak memory by 15 MiB.
_SUMS_LINES = 4096


def _sums_as_written(data: bytes, listed: Mapping[str, Mapping[str, Any]], records: set[str]) -> bool:
    """Whether ``data`` is the SHA256SUMS the build writes for ``records`` with index.json's digests.

    The records are taken in index.json's order, sorted as the build writes them unless KB110
    says otherwise (the answer is then no, and the line-by-line check runs): in that order, not
    looked up from the set, they cost a third of the time for 100,000 files. A path holding a
    line break is left to the line-by-line check too, which finds the line it breaks.
    """
    paths = [p for p in listed if p in records]
    view = memoryview(data)
    at = 0
    for i in range(0, len(paths), _SUMS_LINES):
        block = paths[i : i + _SUMS_LINES]
        if any("\n" in p for p in block):
            return False
        text = kit_index.sums_in_order((p, listed[p]["sha256"]) for p in block)
        if view[at : at + len(text)] != text:
            return False
        at += len(text)
    return at == len(data)


def _check_sums(data: bytes, listed: Mapping[str, Mapping[str, Any]], records: set[str]) -> list[Finding]:
    """SHA256SUMS in GNU format, listing exactly the record files with index.json's digests."""
    if _sums_as_written(data, listed, records):
        # What the build writes for these records: every line is well formed and agrees with
        # index.json (a line-by-line check costs 2 µs a file).
        return []
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
        escaped = text.startswith("\\")
        m = _SUMS_LINE.fullmatch(text[1:] if escaped else text)
        if not m:
            findings.append(Finding("KB202", kit_index.SUMS, "is not '<64 hex>  <path>' or '<64 hex> *<path>'", line=number))
            continue
        digest, path = m.group(1).lower(), m.group(3)
        if escaped:
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
    return findings


def _check_provenance(
    doc: Mapping[str, Any],
    records: set[str],
    scans: Mapping[str, FileScan],
    loud: Sequence[str],
    counted: Sequence[tuple[Mapping[str, Any], tuple[str, ...] | None]],
) -> list[Finding]:
    """Each rule's recorded firings, re-observed in the record files (``loud``: the paths whose
    scans hold more than a size and a digest, see :func:`~kitbuild.filescan.scan_files`)."""
    findings = []
    rules = doc["rules"]
    placeholders = sorted({r["placeholder"] for r in rules if r["primitive"] == "digest"})
    # This runs after every worker is done, on one core: the paths that agree, nearly all of
    # them, are passed over in any order, and only the others sorted (for 2,000 records, sorting
    # them all took about half of this function's 4 ms).
    for i, rule in enumerate(rules):
        if sum(rule["firings"].values()) != rule["total"]:
            findings.append(Finding("KB303", kit_index.PROVENANCE, f"rules[{i}] ({rule['name']}) has total {rule['total']:,}; its firings add up to {sum(rule['firings'].values()):,}", expected=str(sum(rule["firings"].values())), found=str(rule["total"])))
        for path in sorted(rule["firings"].keys() - records):
            findings.append(Finding("KB304", kit_index.PROVENANCE, f"rules[{i}] ({rule['name']}) fired in {path!r}, which is not a record file here"))
    # The placeholder is the one word a rule writes whose count must be exact: it replaced each
    # withheld digest, and nothing else in a record may look like it.
    for k, placeholder in enumerate(placeholders):
        fired: dict[str, int] = {}
        for rule in rules:
            if rule["primitive"] == "digest" and rule["placeholder"] == placeholder:
                for path, n in rule["firings"].items():
                    fired[path] = fired.get(path, 0) + n
        # A record that holds none and where none fired agrees: only the others are looked at.
        holding = (p for p in loud if scans[p].error is None and scans[p].placeholders[k])
        looked = {p for p in itertools.chain(holding, fired) if p in records and p in scans}
        for path in sorted(p for p in looked if scans[p].error is None and scans[p].placeholders[k] != fired.get(p, 0)):
            seen = scans[path].placeholders[k]
            findings.append(Finding("KB301", path, f"holds the placeholder {placeholder} {_times(seen)}; digest-withheld fired here {_times(fired.get(path, 0))}", expected=str(fired.get(path, 0)), found=str(seen)))
    for j, (rule, _) in enumerate(counted):
        i = rules.index(rule)
        short = [p for p, n in rule["firings"].items() if (fired_scan := scans.get(p)) is not None and fired_scan.error is None and p in records and fired_scan.words[j] < n]
        for path in sorted(short):
            n, words = rule["firings"][path], scans[path].words[j]
            findings.append(Finding("KB302", path, f"holds the words rules[{i}] ({rule['name']}) wrote {_times(words)}; it fired here {_times(n)}", expected=f">= {n}", found=str(words)))
    # Per source folder, the records in it: one C-level pass over the paths for each of the few
    # folders (a split and a dict update per path cost 45 ms for 100,000, after every worker was done).
    by_folder = {
        name: sum(map(operator.methodcaller("startswith", name + "/"), records)) + (name in records)
        for name in {source["as"] for source in doc["sources"]}
    }
    if doc["records"] != len(records):
        findings.append(Finding("KB305", kit_index.PROVENANCE, f"records says {doc['records']:,}; index.json lists {len(records):,} record files", expected=str(len(records)), found=str(doc["records"])))
    for i, source in enumerate(doc["sources"]):
        if source["files"] != by_folder.get(source["as"], 0):
            findings.append(Finding("KB305", kit_index.PROVENANCE, f"sources[{i}] ({source['as']}) says {source['files']:,} files; index.json lists {by_folder.get(source['as'], 0):,} in {source['as']}/", expected=str(by_folder.get(source["as"], 0)), found=str(source["files"])))
    return findings


def _times(n: int) -> str:
    return "once" if n == 1 else ("never" if n == 0 else f"{n:,} times")
