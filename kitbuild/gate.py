"""The leak gate's words: what a build that stops says, and how it keeps the private out of it.

A build runs verify's checks on its staged kit (kitbuild.checks) and refuses it on any finding;
this module turns those findings into what the researcher reads, with what to do about each kind,
and with every private string the config names replaced by what it is: a CI log would publish it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import Collection, Mapping, Sequence

from kitbuild.compressed import IN_COMPRESSED
from kitbuild.findings import Finding
from kitbuild.leaks import LeakScanner
from kitbuild.shapes import ANCHORS, EMAIL

__all__ = ["finding_advice", "gate_code", "gate_findings", "gate_message", "name_findings", "names_message", "scrub"]


def scrub(text: str, private: Mapping[str, str]) -> str:
    """``text`` with each private string in it (in any case) replaced by what it is, and so each
    private path, e-mail address and IPv4 address the gate looks for (kitbuild.shapes): a message
    may quote kit.yaml or a kit file (a figure's field, a template's line), and what it quotes
    may be private though kit.yaml does not list it."""
    for secret in sorted(private, key=len, reverse=True):
        if secret:
            shown = f"[{private[secret]}]".replace("\\", "\\\\")
            text = re.sub(re.escape(secret), shown, text, flags=re.IGNORECASE)
    return _scrub_shapes(text)


# Each shape the gate looks for, once.
_SHAPES = tuple(dict.fromkeys([shape for found in ANCHORS.values() for shape, _ in found] + [EMAIL]))
# How a finding names a shape: 'a private path (/home/…)'.
_ELLIPSIS = "…".encode()
# The rest of a path after the folder a shape ends with (a shape stops at the first name, so
# that an allow entry can pass one folder; a message is spared the whole path).
_PATH_REST = re.compile(rb"[A-Za-z0-9_.~+@%!$/\\\x80-\xff-]*")


def _scrub_shapes(text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    for shape in _SHAPES:
        pieces, at = [], 0
        for m in shape.pattern.finditer(data):
            # (A shape's own name, as a leak finding says it, is no path.)
            if m.start() < at or data.endswith(_ELLIPSIS, 0, m.end()) and data[m.end() - len(_ELLIPSIS) - 1] in b"/\\":
                continue
            rest = _PATH_REST.match(data, m.end()) if shape.code == "KB501" else None
            end = rest.end() if rest else m.end()
            # What it is, in words no shape matches again ('a private path', not its mount).
            pieces += [data[at : m.start()], b"[" + shape.what.split(" (")[0].encode() + b"]"]
            at = end
        if pieces:
            data = b"".join(pieces) + data[at:]
    return data.decode("utf-8", "surrogatepass")


# What a build calls the findings a reader's verify would call otherwise (docs/findings.md).
_BUILD_CODES = {"KB501": "KB902"}


def gate_code(code: str) -> str:
    return _BUILD_CODES.get(code, code)


def gate_findings(findings: list[Finding], private: Mapping[str, str]) -> list[Finding]:
    """verify's findings as a build reports them: its allow list is the one in kit.yaml, and a
    private string in a file's name or a message is never printed (a CI log would publish it)."""
    shown = [
        replace(
            f,
            code=gate_code(f.code),
            path=scrub(f.path, private),
            message=scrub(f.message.replace("the allow list in provenance.json", "the allow list in kit.yaml"), private),
        )
        for f in findings
    ]
    return sorted(shown, key=Finding.sort_key)


# How the description of a private string a rule names ends (kitbuild.config): 'a name that
# 'desktop' stands for (rules[1])'.
_NAMED_BY_A_RULE = " stands for (rules["

# The findings whose advice is a rule, which a binary file's copy is beyond.
_REWRITABLE = frozenset({"KB901", "KB902", "KB903", "KB502", "KB503"})

# What to do about each kind of finding, said once after the findings of that kind.
_ADVICE = {
    "KB901": "add a rule (or a map entry) that rewrites it, or exclude the file",
    "KB902": "add a map entry that rewrites the path, exclude the file, or, for a path that names no person or machine, an 'allow' entry with its reason",
    "KB903": "add the digest-withheld rule, or exclude the file that prints the digest (the rule rewrites a digest printed in hex, never one in base64)",
    "KB502": "add an 'allow' entry for the address with its reason (a public contact), a rule that rewrites it, or exclude the file",
    "KB503": "add an 'allow' entry with its reason, a rule that rewrites it, or exclude the file",
    "KB504": "decompress the file in the bench (the rules then rewrite it, and the gate reads it whole), or exclude it",
    "KB401": "the record states a digest the copy here does not have: fix the record, or add the digest-withheld rule if a rule rewrote the file",
    "KB402": "declare the digest under 'external_digests' in kit.yaml with what the file is, or include the file it belongs to",
    "KB301": "the placeholder already occurs in a record: choose a placeholder no record holds",
    "KB302": "a rule's words were rewritten again by a later rule: order the rules so none rewrites what another wrote",
    "KB601": "the README template must render the same page from provenance.json and index.json alone",
}


def finding_advice(findings: list[Finding], copied: Collection[str] = ()) -> list[str]:
    """What to do about each kind of finding, once per code: ``CODE: what to add or change.``
    ``copied``: the kit paths of binary files, which a build copies as they are."""
    advice = [f"{code}: {_ADVICE[code]}." for code in sorted({f.code for f in findings}) if code in _ADVICE]
    if any(f.path in copied and f.code in _REWRITABLE and not IN_COMPRESSED.match(f.message) for f in findings):
        advice.append("A rule never rewrites inside a binary file (a SQLite database, a pickle, a NumPy array: build copies it as it is): make the file again in the bench without the private text, or exclude it.")
    if any(f.code == "KB901" and _NAMED_BY_A_RULE in f.message and f.path not in copied for f in findings):
        advice.append(
            "A finding that names a rule (rules[N]) is a string that rule rewrites, written here in a form it does not: in another case of its letters (add that spelling to its 'names' or 'map'), "
            "inside a longer name or path (add that one whole), outside the rule's 'fields', or encoded in a way no rule rewrites (base64, UTF-16, HTML's '&#47;': write the record again in the bench, or exclude the file)."
        )
    zlib = [f for f in findings if IN_COMPRESSED.match(f.message) and "in its zlib content" in f.message]
    if zlib:
        advice.append("A PDF's streams, a PNG's text chunks and git's objects are read decompressed too, and a rule never rewrites inside them: make the file again without the private text (a figure's title or labels, the metadata its program wrote), or exclude the file (a .git folder: 'exclude: [\".git/**\"]' on its source).")
    if any(IN_COMPRESSED.match(f.message) for f in findings if f not in zlib):
        advice.append("A rule never rewrites inside compressed data (a compressed file, or a tar holding one, is copied as it is, and base64 is not decoded): decompress it in the bench, so the rules rewrite what it holds, or exclude the file.")
    return advice


def gate_message(findings: list[Finding], copied: Collection[str] = ()) -> str:
    lines = [f"the build was stopped: the staged kit has {len(findings)} finding{'s' if len(findings) != 1 else ''} that a reader's 'kitbuild verify' would report; nothing was written."]
    lines += [str(f) for f in findings]
    lines += finding_advice(findings, copied)
    return "\n".join(lines)


def name_findings(paths: Sequence[str], scanner: LeakScanner, private: Mapping[str, str]) -> list[Finding]:
    """A private string in a file's name (a log named after the machine it ran on), which
    index.json, SHA256SUMS and the pages would all print: one finding a file, its name
    scrubbed. The names are scanned as one text, a line each (100,000 files: one search)."""
    encoded = [path.encode("utf-8", "surrogateescape") for path in paths]
    text, starts = b"\n".join(encoded), [0]
    for name in encoded[:-1]:
        starts.append(starts[-1] + len(name) + 1)
    named: dict[int, str] = {}
    for leak in scanner.scan(text, binary=False):
        if leak.code in ("KB901", "KB903"):
            named.setdefault(bisect.bisect_right(starts, leak.offset) - 1, leak.what)
    return [
        Finding("KB901", scrub(paths[i], private), f"its name holds {what}: a rule never rewrites a file's name; rename the file in the bench, or exclude it")
        for i, what in sorted(named.items())
    ]


def names_message(findings: list[Finding]) -> str:
    lines = [f"the build was stopped: {len(findings)} file name{'s hold' if len(findings) != 1 else ' holds'} a private string kit.yaml names, which index.json, SHA256SUMS and the pages would print; nothing was written."]
    return "\n".join(lines + [str(f) for f in findings])
