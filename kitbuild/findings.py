"""Findings: what ``kitbuild verify``, ``check`` and ``build`` report, as values with stable codes.

A finding is never raised: a run collects every one, file by file, and reports them all. Each
code is stable and has one line of docs in :data:`CODES`, so that users can grep for a code,
``kitbuild explain CODE`` can print it, and ``docs/findings.md`` is rendered from this registry (a
test keeps the two equal).

Codes are grouped by the check that produces them:

- KB0xx  schema: index.json and provenance.json against the schemas the package ships
- KB1xx  completeness: the files in the kit against index.json, and what an archive's reader refuses
- KB2xx  SHA256SUMS
- KB3xx  provenance in reverse: each rule's recorded firings, re-observed in the files
- KB4xx  digests printed in records
- KB5xx  leaks
- KB6xx  pages
- KB7xx  figures: each figure recounted from the kit's files, its checks, the figures table
- KB8xx  check: the kit at ``out`` against a fresh build, and the config's private strings
- KB9xx  build: the leak gate and rewrites that cannot be written safely
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CODES: dict[str, str] = {
    # -- schema ---------------------------------------------------------------------------
    "KB001": "index.json is not valid UTF-8 JSON.",
    "KB002": "index.json does not match the schema kitbuild ships (kitbuild/schemas/index.schema.json).",
    "KB003": "index.json is not laid out as kitbuild writes it (two-space indent, keys in order, a final newline), so it was edited.",
    "KB004": "provenance.json is missing.",
    "KB005": "provenance.json is not valid UTF-8 JSON.",
    "KB006": "provenance.json does not match the schema kitbuild ships (kitbuild/schemas/provenance.schema.json).",
    "KB007": "provenance.json is not laid out as kitbuild writes it, so it was edited.",
    "KB008": "provenance.json's size or sha256 differs from what index.json records for it.",
    "KB009": "The kit's digest (the sha256 of its index.json) differs from the one given with --digest.",
    # -- completeness ---------------------------------------------------------------------
    "KB101": "A file in the kit is not in index.json (or a folder in it holds no file).",
    "KB102": "A file index.json lists is not in the kit.",
    "KB103": "A file's size differs from index.json's.",
    "KB104": "A file's sha256 differs from index.json's.",
    "KB105": "index.json lists a path that is refused: absolute, with '..', a backslash, a NUL or an empty part, or one that resolves through a symlink.",
    "KB106": "A symlink in the kit (verify never follows it).",
    "KB107": "A device, FIFO, socket or other special file in the kit (verify never opens it).",
    "KB108": "index.json lists the same path twice.",
    "KB109": "index.json lists a file the build never lists (itself, provenance.json, README.md or index.html).",
    "KB110": "index.json's files are not sorted by path.",
    "KB111": "A file in the kit cannot be read; in an archive, also a member that is encrypted or compressed by a method verify does not read (it is never read; the other members are).",
    "KB112": "An archive member's name is refused: absolute, with '..', a backslash, a NUL, an empty part or not UTF-8 (it is never read).",
    "KB113": "An archive member is a hard link (verify never follows it).",
    "KB114": "An archive holds two members with the same name (neither is read).",
    "KB115": "An archive member declares more bytes than the archive holds for it (it is never read; members after it cannot be found).",
    "KB116": "An archive member declares more bytes than the per-member limit (16 GiB; it is never read).",
    "KB117": "An archive is damaged part way (a header or the compressed stream); members after that point are not read.",
    # -- SHA256SUMS -----------------------------------------------------------------------
    "KB201": "SHA256SUMS is missing.",
    "KB202": "A SHA256SUMS line is not in GNU format ('<64 hex>  <path>' or '<64 hex> *<path>').",
    "KB203": "SHA256SUMS lists the same path twice.",
    "KB204": "A record file is not listed in SHA256SUMS.",
    "KB205": "SHA256SUMS lists a path that is not a record file of the kit.",
    "KB206": "A SHA256SUMS digest differs from index.json's for the same file.",
    "KB207": "SHA256SUMS lists a path that is refused: absolute, with '..', a backslash, a NUL or an empty part.",
    "KB208": "SHA256SUMS says what index.json says, but not as kitbuild writes it (sorted by path, lower-case hex, two spaces, a final newline), so it was edited.",
    # -- provenance in reverse ------------------------------------------------------------
    "KB301": "The placeholder occurs in a file a different number of times than digest-withheld fired there.",
    "KB302": "The words a rule wrote occur in a file fewer times than the rule fired there.",
    "KB303": "A rule's total is not the sum of its firings.",
    "KB304": "A rule's firings name a file that is not a record file here.",
    "KB305": "The record counts in provenance.json (records, sources[].files) differ from the record files here.",
    "KB306": "index.json lists a file that is neither in a source folder nor one the build writes (SHA256SUMS, the travelling template).",
    "KB307": "index.json and provenance.json name different kits.",
    # -- digests printed in records -------------------------------------------------------
    "KB401": "A record pairs a kit file's path with a digest that is neither that file's sha256 nor the placeholder.",
    "KB402": "A digest a record prints is unresolved: no file here has it, it is not withheld and provenance.json does not declare it external.",
    # -- leaks ----------------------------------------------------------------------------
    "KB501": "A private path shape (/home/..., /Users/..., /root/..., /mnt/..., C:\\Users\\..., file://...) that the allow list does not cover.",
    "KB502": "An e-mail address that the allow list does not cover.",
    "KB503": "A private IPv4 address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16) that the allow list does not cover.",
    "KB504": "A compressed file (gzip, bzip2, xz, zstandard, zip), or such data in base64 in a record, whose content the leak scan could not read whole: it expands past 1 GiB and 64 times its size, or needs more than 128 MiB of memory to decompress.",
    # -- pages ----------------------------------------------------------------------------
    "KB601": "A page (README.md, index.html) differs from the one its template renders from the kit's own data.",
    "KB602": "A page's template cannot be rendered in the sandbox (an error, a reach for Python internals, or a limit on time or size passed).",
    "KB603": "A page (README.md, index.html) is missing.",
    "KB604": "provenance.pages names a template that is not a listed file under _templates/ of the kit.",
    "KB605": "croissant.json is missing, or differs from the one kitbuild writes for the kit from its provenance.json, index.json and records (kits built by 0.3.0 or later), or a record file it reads changed while the kit was checked.",
    "KB606": "A FileObject in croissant.json disagrees with index.json (its sha256 or contentSize), or a file index.json lists has no FileObject there.",
    "KB607": "CITATION.cff is missing, or differs from the one kitbuild writes from provenance.json's title and authors (kits built by 0.3.0 or later).",
    # -- figures --------------------------------------------------------------------------
    "KB701": "A figure recounted from the kit's files differs from the value (or its 'of', or a part) provenance.json stores for it.",
    "KB702": "A figure cannot be recounted: a file, pointer or field it reads is missing from the kit or of the wrong kind, or a file changed while the kit was checked.",
    "KB703": "provenance.json's figure specs cannot be used here: a recount this installation lacks, or a spec its schema refuses.",
    "KB704": "An agrees_with check does not hold: stored per-row outcomes differ from the recount (the first rows are named).",
    "KB705": "An equals check does not hold: two figures that must be equal are not.",
    "KB706": "A page prints a figure's stored text where the kit's files recount another value.",
    "KB707": "A row of the figures table names a file that is not in the kit, or one that changed while the kit was checked.",
    "KB708": "A row of the figures table names a field that none of its files has (a JSON key, a key of some NDJSON row, a TSV column).",
    # -- check ----------------------------------------------------------------------------
    "KB801": "A file of the kit at 'out' differs from the same file of a fresh build.",
    "KB802": "A fresh build writes a file that the kit at 'out' lacks.",
    "KB803": "The kit at 'out' holds a file a fresh build does not write.",
    "KB804": "A private string the config names (a source path, a map key, a box name, an original digest) is in the kit.",
    "KB805": "There is no kit at the config's 'out'.",
    # -- build ----------------------------------------------------------------------------
    "KB901": "The leak gate found a private string the config names (a source path, a map key, a box name) that no rule rewrote; nothing was written.",
    "KB902": "The leak gate found a private path shape (/home/..., /Users/..., /root/..., /mnt/..., C:\\Users\\..., file://...) that no rule rewrote and the allow list does not cover; nothing was written.",
    "KB903": "The leak gate found the original sha256 of a file a rule rewrote (it would confirm a guess at the private text); nothing was written.",
    "KB904": "A rule's replacement cannot be written safely in its file's format (JSON, TSV, YAML); nothing was written.",
    "KB905": "A warning, not a stop: a map entry's path occurs in no file of the sources, so it rewrites nothing (almost always a typo).",
    "KB906": "A warning, not a stop: a rule never fired in any file (almost always a typo in its parameters).",
    "KB907": "A warning, not a stop: a Responsible-AI field of croissant.json (kit.yaml's rai:) is empty; the NeurIPS Evaluations & Datasets track asks for each.",
}
# The leak gate's generic shapes (a private path, an e-mail address, a private IPv4 address), as
# against the private strings a kit.yaml names, which only a build looks for.
SHAPE_CODES = frozenset({"KB501", "KB502", "KB503"})

# The check each group of codes belongs to, in report order.
CHECKS: dict[str, str] = {
    "schema": "Schema",
    "completeness": "Completeness",
    "sums": "SHA256SUMS",
    "provenance": "Provenance in reverse",
    "digests": "Digests printed in records",
    "leaks": "Leaks",
    "pages": "Pages",
    "figures": "Figures",
}
_COLUMN = re.compile(r"column (\d+): ")
_GROUP = {"0": "schema", "1": "completeness", "2": "sums", "3": "provenance", "4": "digests", "5": "leaks", "6": "pages", "7": "figures", "8": "check", "9": "build"}
# The title of each group of codes, as docs/findings.md and ``kitbuild explain`` show it.
GROUP_TITLES: dict[str, str] = {**CHECKS, "check": "kitbuild check", "build": "kitbuild build"}
# The command that reports each group.
REPORTED_BY: dict[str, str] = {**{check: "kitbuild verify (and kitbuild check, which runs it)" for check in CHECKS}, "check": "kitbuild check", "build": "kitbuild build (and kitbuild check, which rebuilds)"}


def check_of(code: str) -> str:
    """The id of the check a code belongs to (``KB104`` -> ``completeness``)."""
    return _GROUP[code[2]]


@dataclass(frozen=True)
class Finding:
    """One thing that does not hold, at a kit path (and a line, where it applies)."""

    code: str
    path: str
    message: str
    line: int | None = None
    expected: str | None = None
    found: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code!r}")

    @property
    def where(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"

    def __str__(self) -> str:
        return f"{self.code} {self.where}: {self.message}"

    def sort_key(self) -> tuple[str, int, str, int, str]:
        """File, line, code, then column: a message that starts 'column 18: ' sorts before one at
        column 125, as the line reads."""
        column = _COLUMN.match(self.message)
        return (self.path, self.line or 0, self.code, int(column.group(1)) if column else 0, self.message)


def findings_markdown() -> str:
    """docs/findings.md, rendered from :data:`CODES`."""
    titles = GROUP_TITLES
    lines = [
        "# Finding codes",
        "",
        "<!-- Generated from kitbuild/findings.py (CODES); tests/commands/verify_test.py keeps it equal. -->",
        "",
        "`kitbuild verify`, `kitbuild check` and `kitbuild build` report every finding with one of these",
        "stable codes, a kit path and, where it applies, a line; `--format json` and `--format github` carry",
        "the same codes. `kitbuild explain CODE` prints one code's line.",
    ]
    group = None
    for code, doc in CODES.items():
        if check_of(code) != group:
            group = check_of(code)
            lines += ["", f"## {titles[group]}", "", "| Code | What it means |", "|---|---|"]
        escaped = doc.replace("|", "\\|")
        lines.append(f"| {code} | {escaped} |")
    return "\n".join(lines) + "\n"
