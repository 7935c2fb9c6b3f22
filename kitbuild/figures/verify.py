"""Figures checked in reverse: what ``kitbuild verify`` does with provenance.json's figures (issue 4).

Every figure is recounted from the kit's own record files, with the spec provenance.json stores
for it, and compared with the value stored beside that spec; its ``agrees_with`` and ``equals``
checks are run again; a figure whose recount differs is looked for on the pages, which print the
stored text; and each row of the figures table must name files the kit has and fields those files
have. Nothing here trusts the stored values: they are only what the recount is compared with.

The codes (KB7xx) are documented in :data:`kitbuild.findings.CODES`.
"""

from __future__ import annotations

import copy
import functools
import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import orjson

from kitbuild.errors import KitbuildError
from kitbuild.figures.errors import FigureError, FigureSpecError
from kitbuild.findings import SHAPE_CODES, Finding
from kitbuild.kitview import MemberError

if TYPE_CHECKING:
    from kitbuild.figures.files import KitFiles
    from kitbuild.kitdocs import JsonDoc
    from kitbuild.kitfs import KitFS
    from kitbuild.observe import Observation

# The figure modules (values, tables, the record readers) are imported by the checks that use
# them: every verify runs check_figures, and most kits declare no figures.

PROVENANCE = "provenance.json"
PAGES = ("README.md", "index.html")
# Each differing figure costs one more rendering of the pages; past this many the kit is plainly
# not what its records say, and the KB701 findings already name every figure.
PAGE_LOOKUPS = 20


@dataclass
class FigureReport:
    """What the figure checks found (``findings``) and counted (``lines``, for verify's report)."""

    findings: list[Finding] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    skipped: str | None = None


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _json(record: Mapping[str, Any]) -> Any:
    # Compared as provenance.json holds them: a recount's Fraction is stored as its float.
    return orjson.loads(orjson.dumps(record))


def _shown(record: Mapping[str, Any]) -> str:
    of = record.get("of")
    return str(record.get("text")) + (f" of {of['text']}" if isinstance(of, Mapping) and "text" in of else "")


def _first_difference(stored: Mapping[str, Any], recount: Mapping[str, Any], trail: tuple[str, ...] = ()) -> tuple[tuple[str, ...], Any, Any] | None:
    """The first part (by path) whose value, text or of differs; the figure itself is the empty path."""
    if any(stored.get(key) != recount.get(key) for key in ("value", "text", "of")):
        return trail, stored, recount
    ours, theirs = stored.get("parts", {}), recount.get("parts", {})
    for name in [*ours, *(n for n in theirs if n not in ours)]:
        if name not in ours or name not in theirs:
            return (*trail, name), ours.get(name), theirs.get(name)
        found = _first_difference(ours[name], theirs[name], (*trail, name))
        if found:
            return found
    return None


def _difference_message(name: str, where: tuple[str, ...], stored: Any, recount: Any) -> tuple[str, str, str]:
    said = _shown(stored) if isinstance(stored, Mapping) else "nothing"
    found = _shown(recount) if isinstance(recount, Mapping) else "nothing"
    part = f" (its part {'.'.join(where)})" if where else ""
    return f"figure {name!r}{part}: provenance.json stores {said}; the kit's files recount {found}", said, found


def check_figures(
    provenance: Mapping[str, Any] | None,
    kit: KitFiles,
    *,
    index: Mapping[str, Any] | None = None,
    template: bytes | None = None,
) -> FigureReport:
    """Recount every figure of a kit's ``provenance`` from ``kit`` and report what does not hold.

    ``provenance`` must already match its schema (None: the check is skipped). With ``index``
    (index.json, for re-rendering) the pages are searched for the stored text of each figure whose
    recount differs; ``template`` is the bytes of a README template that travels with the kit.
    """
    report = FigureReport()
    if provenance is None:
        report.skipped = "provenance.json is missing or does not match its schema"
        return report
    stored: Mapping[str, Any] = provenance.get("figures", {})
    table = provenance.get("figures_table", [])
    if not stored and not table:
        report.lines.append("provenance.json declares no figures")
        return report
    if stored:
        _recount(report, provenance, stored, kit, index, template)
    if table:
        _table(report, table, kit)
    return report


def _recount(
    report: FigureReport,
    provenance: Mapping[str, Any],
    stored: Mapping[str, Any],
    kit: KitFiles,
    index: Mapping[str, Any] | None,
    template: bytes | None,
) -> None:
    from kitbuild.figures.evaluation import evaluate, failed_checks
    from kitbuild.figures.files import RecordFiles

    specs = {name: record["spec"] for name, record in stored.items()}
    errors: list[FigureError] = []
    try:
        values = evaluate(specs, RecordFiles(kit), where=lambda path: PROVENANCE, errors=errors)
    except FigureSpecError as exc:
        # The specs as a whole cannot be used here (a recount this installation lacks, a key its
        # schema refuses): nothing can be recounted, and each stored value stands unchecked.
        message = exc.message.removeprefix(f"{PROVENANCE}: ")
        report.findings.append(Finding("KB703", PROVENANCE, f"the figures cannot be recounted: {message}"))
        report.lines.append(f"{_plural(len(specs), 'figure')} stored; none can be recounted here")
        return
    for error in errors:
        report.findings.append(Finding("KB702", PROVENANCE, error.message))

    differing: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        recount = _json(value.record())
        kept = {key: item for key, item in stored[name].items() if key != "spec"}
        found = _first_difference(kept, recount)
        if found is None:
            continue
        message, said, got = _difference_message(name, *found)
        report.findings.append(Finding("KB701", PROVENANCE, message, expected=got, found=said))
        differing[name] = {"spec": stored[name]["spec"], **recount}

    checks = [check for value in values.values() for check in value.checks]
    for check in failed_checks(values):
        code = "KB704" if check.kind == "agrees_with" else "KB705"
        # Check messages start with the bare name; findings quote it, as the others here do.
        report.findings.append(Finding(code, PROVENANCE, f"figure {check.figure!r}: {check.message()[len(check.figure) + 2:]}"))
    if differing and index is not None:
        report.findings.extend(_on_pages(provenance, index, differing, template))

    same = len(values) - len(differing)
    line = f"{_plural(len(specs), 'figure')} recounted from the kit's files: {same:,} as provenance.json stores {'it' if same == 1 else 'them'}"
    if errors:
        line += f", {len(errors):,} cannot be recounted"
    if checks:
        held = sum(1 for check in checks if check.holds)
        line += f"; {_plural(len(checks), 'check')} (agrees_with, equals): {held:,} hold"
    report.lines.append(line)


def _on_pages(
    provenance: Mapping[str, Any],
    index: Mapping[str, Any],
    differing: Mapping[str, Mapping[str, Any]],
    template: bytes | None,
) -> list[Finding]:
    """A finding for each page that prints a figure's stored text where the recount differs.

    A figure is on a page when putting its recount in place of its stored record changes the
    rendered page; the line named is the first that changes.
    """
    from kitbuild.pages import page_context, render_pages

    try:
        custom = {"README.md.j2": template.decode("utf-8")} if template is not None else {}
        baseline = render_pages(page_context(provenance, index), custom)
    except (KitbuildError, KeyError, TypeError, ValueError):  # UnicodeDecodeError is a ValueError
        return []  # the pages check reports a page that cannot be rendered
    findings = []
    for name in list(differing)[:PAGE_LOOKUPS]:
        swapped = copy.deepcopy(dict(provenance))
        swapped["figures"][name] = differing[name]
        try:
            pages = render_pages(page_context(swapped, index), custom)
        except (KitbuildError, KeyError, TypeError, ValueError):
            continue  # a part the page names is gone from the recount; KB701 names it
        for page in PAGES:
            if pages[page] == baseline[page]:
                continue
            line = next(
                (i for i, (a, b) in enumerate(zip(baseline[page].split(b"\n"), pages[page].split(b"\n")), 1) if a != b),
                None,
            )
            said, got = _shown(provenance["figures"][name]), _shown(differing[name])
            findings.append(
                Finding("KB706", page, f"prints figure {name!r} as provenance.json stores it, {said}; the kit's files recount {got}", line=line, expected=got, found=said)
            )
    return findings


def _table(report: FigureReport, table: list[Mapping[str, Any]], kit: KitFiles) -> None:
    from kitbuild.figures.table import table_problems

    problems = table_problems(table, kit)
    for problem in problems:
        code = "KB707" if problem.kind == "file" else "KB708"
        report.findings.append(Finding(code, PROVENANCE, f"figures_table[{problem.row}]: {problem.detail}"))
    files = {path for row in table for path in row["files"]}
    fields = sum(len(row.get("fields", [])) for row in table)
    missing = len(problems)
    tail = "each is in the kit" if not missing else f"{missing:,} not in the kit"
    report.lines.append(f"figures table: {_plural(len(table), 'row')} naming {_plural(len(files), 'file')} and {_plural(fields, 'field')}: {tail}")


def pointer_leaks(fs: KitFS, observed: Mapping[str, Observation], provenance: JsonDoc) -> dict[str, set[int]]:
    """Where a leak the gate's shapes found (KB501-KB503) is a figure's JSON pointer (see
    :func:`pointer_at`), by file: the offsets in provenance.json and in each page."""
    out: dict[str, set[int]] = {}
    pointers = _pointers(provenance.document) if provenance.valid and isinstance(provenance.document, dict) else set()
    if not pointers:
        return out
    for path in (PROVENANCE, *PAGES):
        seen = observed.get(path)
        offsets = {leak.offset for leak in seen.leaks if leak.code in SHAPE_CODES} if seen is not None else set()
        if not offsets:
            continue
        try:
            data = provenance.data or b"" if path == PROVENANCE else fs.read(path, sha256=seen.sha256 if seen is not None else None)
        except (MemberError, OSError):
            continue  # (the pass read it: the checks report a file that changed since)
        out[path] = {o for o in offsets if pointer_at(data, o, pointers, page=path != PROVENANCE)}
    return out


def pointer_at(data: bytes, offset: int, pointers: set[str], page: bool = False) -> bool:
    """Whether ``data[offset]`` lies in one of ``pointers`` (provenance.json's figures' JSON
    pointers), in ``data``: provenance.json's bytes (a JSON string), or with ``page`` a page's (the
    pointer as it prints it, with no path going on around it). A pointer may read like a private
    path ('/data/n', '/home/total') but names keys of the kit's own records: a figure whose pointer
    does not resolve is not built, and verify reports it. So the leak gate's shapes pass it there."""
    for pointer in pointers:
        for spelt in {pointer.encode(), html.escape(pointer, quote=False).encode()} if page else {orjson.dumps(pointer)}:
            # (Only an occurrence that holds the offset: the search never reads past it.)
            start = data.find(spelt, max(0, offset - len(spelt) + 1), offset + len(spelt))
            while start >= 0:
                end = start + len(spelt)
                if not page or (data[start - 1 : start] not in _GOES_ON and data[end : end + 1] not in _GOES_ON):
                    return True
                start = data.find(spelt, start + 1, offset + len(spelt))
    return False


# What goes on with a path, before or after it (the gate's own path characters; no empty bytes).
_GOES_ON = {bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~/-"}


def _pointers(provenance: dict[str, Any]) -> set[str]:
    keys = _pointer_keys()
    found: set[str] = set()

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, str) and key in keys and value.startswith("/"):
            found.add(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    figures = provenance.get("figures")
    for figure in figures.values() if isinstance(figures, dict) else ():
        walk(figure.get("spec") if isinstance(figure, dict) else None, None)
    walk(provenance.get("figures_table"), None)
    return found


@functools.lru_cache(maxsize=1)
def _pointer_keys() -> frozenset[str]:
    """The keys of a figure's spec whose values are JSON pointers (in the figures schema, those
    that lead to '#/$defs/pointer'), and a figures table's fields, which may be one."""
    from kitbuild.schema import load_schema

    schema = load_schema("figures")

    def is_pointer(node: Any, depth: int = 0) -> bool:
        if not isinstance(node, dict) or depth > 8:
            return False
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            if ref == "#/$defs/pointer":
                return True
            target: Any = schema
            for step in ref[2:].split("/"):
                target = target.get(step) if isinstance(target, dict) else None
            return is_pointer(target, depth + 1)
        return any(is_pointer(item, depth + 1) for item in node.get("oneOf", []))

    keys = {"fields"}
    work: list[Any] = [schema]
    while work:
        node = work.pop()
        if isinstance(node, dict):
            properties = node.get("properties")
            keys.update(name for name, sub in (properties.items() if isinstance(properties, dict) else ()) if is_pointer(sub))
            work += node.values()
        elif isinstance(node, list):
            work += node
    return frozenset(keys)
