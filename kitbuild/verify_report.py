"""What ``kitbuild verify`` and ``kitbuild check`` found, as values, and as text, JSON or annotations.

The report is grouped by check, in a fixed order; each check has its figures (what was counted)
and its findings, sorted by path and line, so the same kit always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kitbuild.errors import EXIT_FINDINGS, EXIT_OK
from kitbuild.findings import CHECKS, Finding, check_of
# Imported under another name: ``from __future__ import annotations`` binds ``annotations`` here.
from kitbuild.formats import annotations as finding_annotations
from kitbuild.formats import findings_document, json_text



# A kit's own names reach the report: a member named 'x\r✓ every check passes' or holding a
# terminal's escape (clear the screen) would write over the lines around its finding.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {c: f"\\u{c:04x}" for c in (0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def printable(text: str) -> str:
    """``text`` with control characters, line separators and bidirectional overrides as escapes."""
    return text.translate(_CONTROLS)


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


def plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def verify_text(report: VerifyReport) -> str:
    """The report a person reads: ✓ or ✗ per check, its figures, then each finding."""
    n = len(report.findings)
    lines = [f"kitbuild verify {report.kit}: " + ("every check passes" if report.ok else f"{plural(n, 'finding')}")]
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
        lines.extend(f"  {printable(str(finding))}" for finding in sorted(check.findings, key=Finding.sort_key))
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
