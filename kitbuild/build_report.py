"""``kitbuild build`` for machines: its findings with codes (KB9xx), as JSON or annotations.

A build that passes has no findings; one the leak gate stops has one finding per piece of private
text (KB901 a string the config names, KB902 a generic private-path shape, KB903 the original
digest of a rewritten file), and one whose replacement cannot be written safely has KB904. Like
the text report, a finding names the kind of thing found and where, never the private text.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from kitbuild.commands.build import BuildReport
from kitbuild.errors import EXIT_FINDINGS, EXIT_OK, LeakError, UnsafeRewriteError
from kitbuild.findings import Finding
# Imported under another name: ``from __future__ import annotations`` binds ``annotations`` here.
from kitbuild.formats import annotations as finding_annotations
from kitbuild.formats import findings_document, json_text
from kitbuild.leaks import GENERIC_SHAPES, LeakFinding

_SHAPES = {what for what, _ in GENERIC_SHAPES}
# How a leak or an unsafe rewrite names its place: 'kit/path:line:col: what'.
_PLACE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<what>.+)$")


def leak_code(what: str) -> str:
    """The code of a leak gate finding, from the kind of thing it found."""
    if what in _SHAPES:
        return "KB902"
    if what.startswith("the original sha256 of "):
        return "KB903"
    return "KB901"


def leak_finding(leak: LeakFinding) -> Finding:
    """A leak gate finding as a coded finding."""
    return Finding(leak_code(leak.what), leak.path, f"column {leak.col}: {leak.what}", line=leak.line)


def leak_findings(leaks: Iterable[LeakFinding]) -> list[Finding]:
    """Each distinct leak once, sorted by path, line and column."""
    shown = sorted(set(leaks), key=lambda f: (f.path, f.line, f.col, f.what))
    return [leak_finding(leak) for leak in shown]


def error_findings(exc: LeakError | UnsafeRewriteError) -> list[Finding]:
    """The findings a stopped build reports.

    A LeakError lists its findings one per line, as :class:`~kitbuild.leaks.LeakFinding` prints
    them, between its first line and its advice; an UnsafeRewriteError names one place.
    """
    attached = getattr(exc, "findings", None)
    if attached:
        return leak_findings(attached)
    if isinstance(exc, UnsafeRewriteError):
        m = _PLACE.match(exc.message.split("\n", 1)[0])
        if m:
            return [Finding("KB904", m["path"], f"column {m['col']}: {m['what']}", line=int(m["line"]))]
        return [Finding("KB904", "", exc.message)]
    leaks = []
    for line in exc.message.split("\n")[1:]:
        m = _PLACE.match(line)
        if m:
            leaks.append(LeakFinding(m["path"], int(m["line"]), int(m["col"]), m["what"]))
    return leak_findings(leaks) or [Finding("KB902", "", exc.message)]


def build_document(report: BuildReport | None, config: str, *, dry_run: bool, findings: list[Finding]) -> dict[str, Any]:
    """``kitbuild build --format json`` (report.schema.json, ``command`` 'build').

    ``report`` is None when the build stopped; then nothing was written and only the findings say why.
    """
    ok = not findings
    return {
        "command": "build",
        "config": config,
        "dry_run": dry_run,
        "ok": ok,
        "exit_code": EXIT_OK if ok else EXIT_FINDINGS,
        "written": report is not None and not dry_run and ok,
        "kit": report.config.kit if report is not None else None,
        "out": str(report.out) if report is not None else None,
        "records": len(report.files) if report is not None else None,
        "bytes": report.record_bytes if report is not None else None,
        "rules": (
            [{"name": r["name"], "total": r["total"], "files": len(r["firings"])} for r in report.rules]
            if report is not None
            else None
        ),
        "findings": findings_document(findings),
    }


def build_json(report: BuildReport | None, config: str, *, dry_run: bool, findings: list[Finding]) -> str:
    return json_text(build_document(report, config, dry_run=dry_run, findings=findings))


def build_github(findings: list[Finding], folder: str = "") -> str:
    return finding_annotations(findings, folder)
