"""``kitbuild check [kit.yaml]``: the pre-release gate, run in CI where the private sources are.

It rebuilds the kit into a temporary folder and compares it byte for byte with the kit at the
config's ``out`` (every differing, missing or extra file, with a short diff for text files, as
``cog --check --diff`` does), scans that kit for every private string the config names, and runs
``kitbuild verify`` on it. It passes only when all three hold.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitbuild.commands.build import build
from kitbuild.commands.verify import verify
from kitbuild.config import DEFAULT_CONFIG, load_config
from kitbuild.errors import EXIT_FINDINGS, EXIT_OK
from kitbuild.findings import Finding
from kitbuild.commands.verify import observe_member
from kitbuild.kitfs import FILE, FolderKit, NotAKitError
from kitbuild.lines import blocks_of, locate
from kitbuild.observe import Plan
from kitbuild.private import private_strings
from kitbuild.progress import SILENT, Progress
from kitbuild.formats import findings_document
from kitbuild.verify_report import VerifyReport, plural as _plural, verify_document, verify_text

DIFF_LINES = 20
_DIFF_LIMIT = 1 << 20  # larger text files are reported as differing, without a diff


@dataclass
class CheckReport:
    """What ``check`` found: the comparison with a fresh build, private strings, and verify's report."""

    config: str
    out: Path
    findings: list[Finding] = field(default_factory=list)
    diffs: dict[str, list[str]] = field(default_factory=dict)
    compared: int = 0
    scanned: int = 0
    verify: VerifyReport | None = None

    @property
    def ok(self) -> bool:
        return not self.findings and (self.verify is None or self.verify.ok)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_FINDINGS


def _files(root: Path) -> dict[str, int]:
    try:
        return {m.path: m.size or 0 for m in FolderKit(root).members() if m.kind == FILE}
    except NotAKitError:
        return {}


def _same(a: Path, b: Path) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def _diff(path: str, kit: Path, fresh: Path) -> list[str]:
    """A short unified diff (kit -> fresh build) for a text file, or nothing."""
    if max(kit.stat().st_size, fresh.stat().st_size) > _DIFF_LIMIT:
        return []
    try:
        old = kit.read_bytes().decode("utf-8").splitlines()
        new = fresh.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return []
    lines = list(difflib.unified_diff(old, new, f"{path} (kit)", f"{path} (fresh build)", lineterm="", n=1))
    return lines[:DIFF_LINES] + ([f"… {len(lines) - DIFF_LINES} more diff lines"] if len(lines) > DIFF_LINES else [])


def check(config_path: str | os.PathLike[str] = DEFAULT_CONFIG, *, jobs: int | None = None, progress: Progress = SILENT) -> CheckReport:
    """Rebuild, compare, scan for private strings and verify the kit a config describes.

    Raises what :func:`~kitbuild.commands.build.build` raises when the rebuild itself fails (a bad
    config: exit 2; the leak gate: exit 1). The rebuild and verify run ``jobs`` worker processes
    (default: one per core). ``progress`` is told each stage's files and bytes.
    """
    config = load_config(config_path)
    report = CheckReport(str(config_path), config.out)
    if not (config.out / "index.json").is_file():
        report.findings.append(Finding("KB805", str(config.out.name), f"there is no kit at {config.label}'s out; run `kitbuild build {config.label}` first"))
        return report

    scratch = Path(tempfile.mkdtemp(prefix=".kitbuild-check-"))
    try:
        fresh_root = scratch / "kit"
        fresh_build = build(config_path, fresh_root, jobs=jobs, progress=progress)
        kit_files, fresh_files = _files(config.out), _files(fresh_root)
        both = set(kit_files) & set(fresh_files)
        progress.begin("comparing", len(both), sum(kit_files[p] for p in both))
        for path in sorted(set(kit_files) | set(fresh_files)):
            if path not in kit_files:
                report.findings.append(Finding("KB802", path, "a fresh build writes this file; the kit lacks it"))
            elif path not in fresh_files:
                report.findings.append(Finding("KB803", path, "is in the kit; a fresh build does not write it"))
            else:
                report.compared += 1
                if kit_files[path] != fresh_files[path] or not _same(config.out / path, fresh_root / path):
                    report.findings.append(Finding("KB801", path, "differs from the same file of a fresh build"))
                    diff = _diff(path, config.out / path, fresh_root / path)
                    if diff:
                        report.diffs[path] = diff
                progress.advance(1, kit_files[path])
        progress.end()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    # The original digests of changed files are private too: they would confirm a guess.
    changed = {r.source_sha256: f"the original sha256 of {r.kit_path}, which a rule rewrote" for r in fresh_build.files if r.changed}
    plan = Plan(private=private_strings(config), withheld=changed)
    with FolderKit(config.out) as kit:
        progress.begin("private strings", len(kit_files), sum(kit_files.values()))
        for path in sorted(kit_files):
            obs = observe_member((kit, plan), path)
            private = [leak for leak in obs.leaks if leak.code in ("KB901", "KB903")]
            if private:
                with kit.open(path) as stream:
                    places = locate(blocks_of(stream), [leak.offset for leak in private])
                for leak in private:
                    line, col = places.get(leak.offset, (None, None))
                    report.findings.append(Finding("KB804", path, f"column {col}: {leak.what}" if col else leak.what, line=line))
            report.scanned += 1
            progress.advance(1, obs.size)
    progress.end()

    # A diff would print the private string it found into a CI log: show none for such a file.
    for path in {f.path for f in report.findings if f.code == "KB804"} & set(report.diffs):
        report.diffs[path] = ["(no diff shown: the kit's copy holds a private string; see KB804 below)"]
    report.verify = verify(config.out, jobs=jobs, progress=progress)
    return report


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
