"""``kitbuild explain [CODE]``: what a finding code means, from the registry the reports use.

The text comes from :data:`kitbuild.findings.CODES`, the same registry docs/findings.md is rendered
from, so the three can never disagree.
"""

from __future__ import annotations

from kitbuild.errors import KitbuildError
from kitbuild.findings import CODES, GROUP_TITLES, REPORTED_BY, check_of


def explain(code: str) -> str:
    """One code's documentation: its line, its group and the command that reports it.

    Raises :class:`KitbuildError` (exit 2) for a code that does not exist.
    """
    key = code.strip().upper()
    if key not in CODES:
        raise KitbuildError(f"no finding code {code!r}; run 'kitbuild explain' with no code to list every code.")
    group = check_of(key)
    return "\n".join(
        [
            f"{key}: {CODES[key]}",
            f"group: {GROUP_TITLES[group]} ({key[:3]}xx)",
            f"reported by: {REPORTED_BY[group]}",
        ]
    )


def explain_all() -> str:
    """Every code with its line, grouped as docs/findings.md groups them."""
    lines: list[str] = []
    group = None
    for code, doc in CODES.items():
        if check_of(code) != group:
            group = check_of(code)
            if lines:
                lines.append("")
            lines.append(f"{GROUP_TITLES[group]} ({code[:3]}xx)")
        lines.append(f"  {code}  {doc}")
    return "\n".join(lines)
