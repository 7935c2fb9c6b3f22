"""Build reports as text for a person."""

from __future__ import annotations

from kitbuild.commands.build import BuildReport
from kitbuild.leaks import distinct


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def build_text(report: BuildReport) -> str:
    lines = [
        f"built {report.config.kit} in {report.out}: {_plural(len(report.files), 'record file')}, "
        f"{report.record_bytes:,} bytes"
    ]
    for rule in report.rules:
        lines.append(f"  {rule['name']}: fired {_plural(rule['total'], 'time')} in {_plural(len(rule['firings']), 'file')}")
    if not report.rules:
        lines.append("  no rules: every record is copied byte for byte")
    return "\n".join(lines)


def dry_run_text(report: BuildReport) -> str:
    """File by file, each firing as ``line:col rule: before → after`` (it may show private text)."""
    names = [r["name"] for r in report.rules]
    lines = [f"dry run of {report.config.kit}: nothing was written; this output may show private text."]
    for path, events in sorted(report.events().items()):
        lines.append(f"{path}:")
        for e in events:
            lines.append(f"  {e.line}:{e.col} {names[e.rule]}: {e.before} → {e.after}")
    lines.append("")
    for rule in report.rules:
        lines.append(f"{rule['name']}: would fire {_plural(rule['total'], 'time')} in {_plural(len(rule['firings']), 'file')}")
    if report.leaks:
        shown = distinct(report.leaks)
        lines.append("")
        lines.append(f"the leak gate would stop the build: {_plural(len(shown), 'finding')}")
        lines.extend(f"  {leak}" for leak in shown)
    else:
        lines.append(f"the leak gate would pass {_plural(len(report.files), 'record file')}")
    return "\n".join(lines)
