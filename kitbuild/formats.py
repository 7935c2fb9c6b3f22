"""Reports for machines: ``--format json`` and ``--format github``.

``json`` is one document per run, described by ``kitbuild/schemas/report.schema.json``
(``kitbuild schema report``), its ``command`` saying which of build, verify and check wrote it.
``github`` is one workflow command per finding, ``::error file=…,line=…,title=CODE::message``, so a
pull request shows each finding at its file and line; nothing else goes to stdout. Escaping follows
GitHub's rules for workflow commands: ``%``, CR and LF are percent-encoded everywhere, and ``:`` and
``,`` too inside a property, where they would end the value.
"""

# No ``from __future__ import annotations`` here: it would bind the name ``annotations``, which
# this module defines as a public function (every annotation below is valid at run time on 3.10).
import os
import posixpath
from pathlib import Path
from typing import Any, Iterable

import orjson

from kitbuild.errors import KitbuildError
from kitbuild.findings import Finding, check_of

FORMATS = ("text", "json", "github")


def check_format(fmt: str) -> str:
    """``fmt`` if it is a report format; raises :class:`KitbuildError` (exit 2) otherwise."""
    if fmt not in FORMATS:
        raise KitbuildError(f"--format: {fmt!r} is not a report format; choose one of: {', '.join(FORMATS)}.")
    return fmt


def finding_document(finding: Finding) -> dict[str, Any]:
    """A finding as the report schema's ``finding``."""
    return {
        "code": finding.code,
        "check": check_of(finding.code),
        "path": finding.path,
        "line": finding.line,
        "message": finding.message,
        "expected": finding.expected,
        "found": finding.found,
    }


def findings_document(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    return [finding_document(f) for f in findings]


def json_text(document: dict[str, Any]) -> str:
    """The document as printed: two-space indent, keys in the order written (no final newline)."""
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode("utf-8")


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (file, title): data escaping plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, folder: str = "") -> str:
    """One ``::error`` workflow command for ``finding``; ``folder`` is prefixed to its kit path."""
    path = posixpath.join(folder, finding.path) if folder else finding.path
    props = [f"file={escape_property(path)}"]
    if finding.line is not None:
        props.append(f"line={finding.line}")
    props.append(f"title={escape_property(finding.code)}")
    return f"::error {','.join(props)}::{escape_data(finding.message)}"


def annotations(findings: Iterable[Finding], folder: str = "") -> str:
    """Every finding's annotation, one per line ('' when there is none)."""
    return "\n".join(annotation(f, folder) for f in findings)


def repo_folder(kit: str | os.PathLike[str]) -> str:
    """The kit folder as a path relative to the current folder, for annotations' ``file=``; '' if it is not below it.

    GitHub places an annotation at a file named relative to the checkout, which is where a workflow
    runs; a kit outside it, or an archive, gets bare kit paths. The folder need not exist yet (a
    build the leak gate stopped wrote nothing).
    """
    path = Path(kit)
    if path.is_file():
        return ""  # an archive
    try:
        rel = path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return ""
    text = rel.as_posix()
    return "" if text == "." else text
