"""What ``kitbuild verify`` and ``kitbuild check`` found, as values, and as text, JSON or annotations.

The report is grouped by check, in a fixed order; each check has its figures (what was counted)
and its findings, sorted by path and line, so the same kit always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kitbuild.errors import EXIT_FINDINGS, EXIT_OK
from kitbuild.findings import CHECKS, Finding, check_of
# Imported under another name: ``from __future__ import annotations`` binds ``annotations`` here.
from kitbuild.formats import annotations as finding_annotations
from kitbuild.formats import findings_document, json_text

if TYPE_CHECKING:
    # For annotations only: kitbuild.commands.check imports this module at run time.
    from kitbuild.commands.check import CheckReport


@dataclass
class CheckResult:
    """One check: its id (see :data:`kitbuild.findings.CHECKS`), figures and findings."""

    id: str
    figures: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None  # why the check could not run, when it could not

    @property
    def title(self) -> str:
        return CHECKS[self.id]

    @property
    def ok(self) -> bool:
        return not self.findings and self.skipped is None


@dataclass
class VerifyReport:
    """Every check of one kit, and the kit's one digest (see kitbuild.kitdocs.kit_digest)."""

    kit: str
    checks: list[CheckResult]
    digest: str | None = None

    @property
    def findings(self) -> list[Finding]:
        """Every finding, in report order: by check, then by path and line."""
        return [f for c in self.checks for f in sorted(c.findings, key=Finding.sort_key)]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_FINDINGS

    def check(self, check_id: str) -> CheckResult:
        return next(c for c in self.checks if c.id == check_id)

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}


def new_checks() -> dict[str, CheckResult]:
    """One empty result per check, in report order."""
    return {check_id: CheckResult(check_id) for check_id in CHECKS}


def file_findings(checks: dict[str, CheckResult], findings: list[Finding]) -> None:
    """Put each finding under the check its code belongs to."""
    for finding in findings:
        # A build's gate scans for the config's private strings too (KB901, KB903): leaks.
        checks.get(check_of(finding.code), checks["leaks"]).findings.append(finding)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def verify_text(report: VerifyReport) -> str:
    """The report a person reads: ✓ or ✗ per check, its figures, then each finding."""
    n = len(report.findings)
    lines = [f"kitbuild verify {report.kit}: " + ("every check passes" if report.ok else f"{_plural(n, 'finding')}")]
    if report.digest:
        lines.append(f"kit digest: {report.digest}")
    for check in report.checks:
        mark = "✓" if check.ok else "✗"
        head = f"{mark} {check.title}"
        if check.skipped:
            head += f": not checked: {check.skipped}"
        elif check.figures:
            head += f": {check.figures[0]}"
        lines.append(head)
        lines.extend(f"    {figure}" for figure in check.figures[1:])
        lines.extend(f"  {finding}" for finding in sorted(check.findings, key=Finding.sort_key))
    if not report.ok:
        lines.append("Run `kitbuild explain CODE` (or see docs/findings.md) for what a code means.")
    return "\n".join(lines)


def verify_document(report: VerifyReport) -> dict[str, Any]:
    """The report as one JSON-ready document (report.schema.json, ``command`` 'verify')."""
    return {
        "command": "verify",
        "kit": report.kit,
        "digest": report.digest,
        "ok": report.ok,
        "exit_code": report.exit_code,
        "findings": findings_document(report.findings),
        "checks": [
            {
                "id": c.id,
                "title": c.title,
                "ok": c.ok,
                "skipped": c.skipped,
                "figures": list(c.figures),
                "findings": len(c.findings),
            }
            for c in report.checks
        ],
    }


def verify_json(report: VerifyReport) -> str:
    """``kitbuild verify --format json``."""
    return json_text(verify_document(report))


def verify_github(report: VerifyReport, folder: str = "") -> str:
    """``kitbuild verify --format github``: one annotation per finding."""
    return finding_annotations(report.findings, folder)


def check_findings(report: CheckReport) -> list[Finding]:
    """Every finding of a check run: its own (the fresh build, private strings), then verify's."""
    own = sorted(report.findings, key=Finding.sort_key)
    return own + (report.verify.findings if report.verify is not None else [])


def check_document(report: CheckReport) -> dict[str, Any]:
    """``kitbuild check --format json``: one document (``command`` 'check'), verify's nested in it."""
    return {
        "command": "check",
        "config": report.config,
        "ok": report.ok,
        "exit_code": report.exit_code,
        "findings": findings_document(check_findings(report)),
        "compared": report.compared,
        "scanned": report.scanned,
        "diffs": {path: list(lines) for path, lines in sorted(report.diffs.items())},
        "verify": verify_document(report.verify) if report.verify is not None else None,
    }


def stopped_check_document(config: str, findings: list[Finding]) -> dict[str, Any]:
    """``kitbuild check --format json`` when the rebuild itself stopped (the leak gate, an unsafe rewrite)."""
    return {
        "command": "check",
        "config": config,
        "ok": False,
        "exit_code": EXIT_FINDINGS,
        "findings": findings_document(findings),
        "compared": 0,
        "scanned": 0,
        "diffs": {},
        "verify": None,
    }


def check_text(report: CheckReport) -> str:
    """``kitbuild check``'s report: the comparison, the private-string scan, then verify's report."""
    from kitbuild.findings import Finding as _Finding

    lines = []
    rebuild = [f for f in report.findings if f.code in ("KB801", "KB802", "KB803", "KB805")]
    private = [f for f in report.findings if f.code == "KB804"]
    head = f"kitbuild check {report.config}: " + ("the kit is up to date, holds no private string and verifies" if report.ok else "the kit does not pass")
    lines.append(head)
    lines.append(f"{'✓' if not rebuild else '✗'} Fresh build: {_plural(report.compared, 'file')} compared byte for byte")
    for finding in sorted(rebuild, key=_Finding.sort_key):
        lines.append(f"  {finding}")
        lines.extend(f"    {d}" for d in report.diffs.get(finding.path, []))
    lines.append(f"{'✓' if not private else '✗'} Private strings: {_plural(report.scanned, 'file')} scanned for every private string the config names")
    lines.extend(f"  {finding}" for finding in sorted(private, key=_Finding.sort_key))
    if report.verify is not None:
        lines.append("")
        lines.append(verify_text(report.verify))
    if rebuild:
        lines.append("")
        lines.append(f"To fix: run `kitbuild build {report.config}` and commit the kit it writes.")
    elif private:
        lines.append("")
        lines.append("To fix: add a rule (or a map entry) that rewrites it, or exclude the file; then run `kitbuild build`.")
    return "\n".join(lines)
