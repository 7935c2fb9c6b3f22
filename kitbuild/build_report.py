"""``kitbuild build`` for machines: its findings with codes (KB9xx), as JSON or annotations.

A build that passes has no findings; one the leak gate stops has one finding per piece of private
text (KB901 a string the config names, KB902 a generic private-path shape, KB903 the original
digest of a rewritten file), and one whose replacement cannot be written safely has KB904. Like
the text report, a finding names the kind of thing found and where, never the private text.
"""

from __future__ import annotations

from typing import Any, Iterable

from kitbuild.commands.build import BuildReport
from kitbuild.errors import EXIT_FINDINGS, EXIT_OK, LeakError, UnsafeRewriteError
from kitbuild.findings import Finding
# Imported under another name: ``from __future__ import annotations`` binds ``annotations`` here.
from kitbuild.formats import annotations as finding_annotations
from kitbuild.formats import findings_document, json_text
from kitbuild.leaks import GENERIC_SHAPES, LeakFinding, distinct

_SHAPES = {what for what, _ in GENERIC_SHAPES}


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
    return [leak_finding(leak) for leak in distinct(leaks)]


def error_findings(exc: LeakError | UnsafeRewriteError) -> list[Finding]:
    """The findings a stopped build reports: a LeakError carries its leaks as values, an
    UnsafeRewriteError its one place."""
    if isinstance(exc, UnsafeRewriteError):
        place = f"{exc.path}:{exc.line}:{exc.col}: "
        what = exc.message[len(place):] if exc.message.startswith(place) else exc.message
        return [Finding("KB904", exc.path, f"column {exc.col}: {what}", line=exc.line or None)]
    return leak_findings(exc.findings)


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
