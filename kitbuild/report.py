"""Build reports: text for a person, and JSON or GitHub annotations for machines.

A build that passes has no findings. One that is stopped has a finding per thing a reader's
verify would report (KB901 a string the config names, KB902 a private-path shape, KB903 the
original digest of a rewritten file, and verify's own codes), and one whose replacement cannot be
written safely has KB904. A finding names the kind of thing found and where, never the private text.
"""

from __future__ import annotations

from typing import Any

from kitbuild.commands.build import BuildReport
from kitbuild.gate import finding_advice
from kitbuild.errors import EXIT_FINDINGS, EXIT_OK, LeakError, UnsafeRewriteError
from kitbuild.findings import Finding
# Imported under another name: ``from __future__ import annotations`` binds ``annotations`` here.
from kitbuild.formats import annotations as finding_annotations
from kitbuild.formats import findings_document, json_text


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def build_text(report: BuildReport) -> str:
    lines = [f"built {report.config.kit} in {report.out}: {_plural(len(report.files), 'record file')}, {report.record_bytes:,} bytes"]
    for rule in report.rules:
        lines.append(f"  {rule['name']}: fired {_plural(rule['total'], 'time')} in {_plural(len(rule['firings']), 'file')}")
    if not report.rules:
        lines.append("  no rules: every record is copied byte for byte")
    lines.extend(f"  warning: {w}" for w in report.warnings)
    if report.digest:
        lines.append(f"  kit digest: {report.digest} (print it beside the kit; 'kitbuild verify KIT --digest' checks it)")
    return "\n".join(lines)


# A dry run's summary lists at most this many changed files (one screen with the rest); --verbose
# lists every firing of every file.
SUMMARY_FILES = 25


def dry_run_text(report: BuildReport, verbose: bool = False) -> str:
    """What a build would do: per rule, its firings and files; per changed file, the rules that
    fired in it; then the warnings and what the checks would find. It names kit paths and rule
    ids only, as a build's report does. ``verbose`` adds every firing, ``path:line:col: rule:
    before → after``, for the researcher's own terminal: the "before" is private text."""
    names = [r["name"] for r in report.rules]
    changed = _changed_files(report)
    lines = [f"dry run of {report.config.kit}: nothing was written."]
    sources = len(report.config.sources)
    lines.append(f"{_plural(len(report.files), 'record file')} from {_plural(sources, 'source')}; the rules would change {len(changed):,}.")
    if report.rules:
        lines.append("")
        lines.append("rules:")
        width = max(len(n) for n in names)
        for rule in report.rules:
            lines.append(f"  {rule['name']:<{width}}  {_plural(rule['total'], 'firing')} in {_plural(len(rule['firings']), 'file')}")
    else:
        lines.append("no rules: every record would be copied byte for byte.")
    if changed:
        lines.append("")
        lines.append("files the rules would change (firings per rule):")
        for path, fired in changed[:SUMMARY_FILES]:
            lines.append(f"  {path}: " + ", ".join(f"{name} {n}" for name, n in fired))
        if len(changed) > SUMMARY_FILES:
            lines.append(f"  … and {_plural(len(changed) - SUMMARY_FILES, 'more file')} (--verbose lists them all)")
    if verbose:
        lines.append("")
        lines.append("every firing, as path:line:col: rule: before → after (private text: for your eyes only, never for a log):")
        for path, events in sorted(report.events().items()):
            for e in sorted(events, key=lambda e: (e.line, e.col)):
                lines.append(f"  {path}:{e.line}:{e.col}: {names[e.rule]}: {e.before} → {e.after}")
    if report.warnings:
        lines.append("")
        lines.extend(f"warning: {w}" for w in report.warnings)
    lines.append("")
    if report.findings:
        lines.append(f"the build would be stopped: {_plural(len(report.findings), 'finding')}")
        lines.extend(f"  {f}" for f in report.findings)
        lines.extend(finding_advice(report.findings, {r.kit_path for r in report.files if r.observation.binary}))
    else:
        lines.append(f"the build would pass: {_plural(len(report.files), 'record file')}, and the kit would verify clean")
    if not verbose and changed:
        lines.append("each firing with its line, before and after: kitbuild build --dry-run --verbose (it shows private text)")
    return "\n".join(lines)


def _changed_files(report: BuildReport) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each file some rule fired in, sorted, with (rule id, firings) in the rules' order."""
    per_file: dict[str, list[tuple[str, int]]] = {}
    for rule in report.rules:
        for path, n in rule["firings"].items():
            per_file.setdefault(path, []).append((rule["name"], n))
    return sorted(per_file.items())


def error_findings(exc: LeakError | UnsafeRewriteError) -> list[Finding]:
    """The findings a stopped build reports: a LeakError carries its findings, an
    UnsafeRewriteError its one place."""
    if isinstance(exc, UnsafeRewriteError):
        place = f"{exc.path}:{exc.line}:{exc.col}: "
        what = exc.message[len(place):] if exc.message.startswith(place) else exc.message
        return [Finding("KB904", exc.path, f"column {exc.col}: {what}", line=exc.line or None)]
    return list(exc.findings)


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
        "digest": report.digest if report is not None and not dry_run and ok else None,
        "records": len(report.files) if report is not None else None,
        "bytes": report.record_bytes if report is not None else None,
        "rules": [{"name": r["name"], "total": r["total"], "files": len(r["firings"])} for r in report.rules] if report is not None else None,
        "findings": findings_document(findings),
        "warnings": findings_document(report.warnings if report is not None else []),
    }


def build_json(report: BuildReport | None, config: str, *, dry_run: bool, findings: list[Finding]) -> str:
    return json_text(build_document(report, config, dry_run=dry_run, findings=findings))


def build_github(findings: list[Finding], folder: str = "") -> str:
    return finding_annotations(findings, folder)
