"""The leak gate: private text that must never reach a kit.

Two kinds of finding: the private strings a config names (source paths, ``map`` keys, box names,
the original digests of changed files), known only to the build; and generic shapes of private
paths (home folders, ``/root``, ``/mnt``, Windows user folders, ``file://`` addresses), which a
reader's verify can look for too. A finding says where and what kind of thing was found, never the
private text itself, so that a CI log of the report publishes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

# Shapes of paths that name a person or a machine's private folders, as bytes patterns. Each
# matches the shape plus its next path component, so an allow entry can pass one folder only.
_SEP = rb"(?:/|\\/)"  # a JSON encoder may escape '/' as '\/'
GENERIC_SHAPES: tuple[tuple[str, bytes], ...] = (
    ("a home folder path (/home/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"home" + _SEP + rb"[^/\\\s\"'<>|]+"),
    ("a home folder path (/Users/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"Users" + _SEP + rb"[^/\\\s\"'<>|]+"),
    ("a root home path (/root/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"root" + _SEP + rb"[^/\\\s\"'<>|]*"),
    ("a mounted volume path (/mnt/...)", rb"(?<![A-Za-z0-9_.~-])" + _SEP + rb"mnt" + _SEP + rb"[^/\\\s\"'<>|]*"),
    ("a Windows user folder path (C:\\Users\\...)", rb"\b[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)[^/\\\s\"'<>|]+"),
    ("a file:// address", rb"\bfile://[^\s\"'<>]*"),
)


@dataclass(frozen=True)
class LeakFinding:
    """Private text found in a kit file: ``path:line:col: what``."""

    path: str
    line: int
    col: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.what}"


class LeakScanner:
    """Scans byte chunks that end at line ends; keeps the line count across chunks."""

    def __init__(
        self,
        private: Mapping[str, str],
        digests: Mapping[str, str] | None = None,
        allow: Iterable[str] = (),
        shapes: Iterable[tuple[str, bytes]] = GENERIC_SHAPES,
    ) -> None:
        self._what: dict[bytes, str] = {}
        for text, what in private.items():
            if text:
                self._what.setdefault(text.encode("utf-8"), what)
                # A JSON encoder may write '/' as '\/'; the rules do not rewrite that spelling,
                # so the gate must still see it.
                if "/" in text:
                    self._what.setdefault(text.replace("/", "\\/").encode("utf-8"), what)
        alternatives = [re.escape(k) for k in sorted(self._what, key=lambda k: (-len(k), k))]
        self._digests = {d.lower(): what for d, what in (digests or {}).items()}
        # Private strings get a pattern of their own: in one alternation with the shapes, a shape
        # that starts earlier (file://...) would swallow a private path inside it, and the finding
        # would read as a generic shape, which an allow entry may pass.
        self._private_re = re.compile(b"|".join(alternatives)) if alternatives else None
        patterns = []
        self._shape_whats = []
        for what, shape in shapes:
            patterns.append(b"(?:" + shape + b")")
            self._shape_whats.append(what)
        self._literal = re.compile(b"|".join(patterns)) if patterns else None
        self._shape_res = [re.compile(shape) for _, shape in shapes]
        self._digest_re = (
            re.compile(b"|".join(re.escape(d.encode()) for d in sorted(self._digests)), re.IGNORECASE)
            if self._digests
            else None
        )
        self._allow = [a.encode("utf-8") for a in allow if a]

    def _classify(self, text: bytes) -> tuple[str, bool]:
        """(description, whether it is a generic shape, which an allow entry may pass)."""
        if text in self._what:
            return self._what[text], False
        for what, shape in zip(self._shape_whats, self._shape_res):
            if shape.fullmatch(text):
                return what, True
        return "private text", True

    def _allowed(self, chunk: bytes, start: int, end: int) -> bool:
        if not self._allow:
            return False
        line_start = chunk.rfind(b"\n", 0, start) + 1
        line_end = chunk.find(b"\n", end)
        line = chunk[line_start : line_end if line_end >= 0 else len(chunk)]
        s, e = start - line_start, end - line_start
        for text in self._allow:
            pos = line.find(text)
            while pos >= 0:
                if pos <= s and e <= pos + len(text):
                    return True
                pos = line.find(text, pos + 1)
        return False

    def scan(self, path: str, chunk: bytes, first_line: int) -> list[LeakFinding]:
        """Findings in ``chunk``, whose first byte is at the start of line ``first_line``."""
        hits: list[tuple[int, int, str, bool]] = []
        if self._private_re is not None:
            for m in self._private_re.finditer(chunk):
                hits.append((m.start(), m.end(), self._what[m.group(0)], False))
        if self._literal is not None:
            for m in self._literal.finditer(chunk):
                hits.append((m.start(), m.end(), *self._classify(m.group(0))))
        if self._digest_re is not None:
            for m in self._digest_re.finditer(chunk):
                hits.append((m.start(), m.end(), self._digests[m.group(0).lower().decode()], False))
        findings = []
        # Only generic shapes can be allowed: a string the config itself names private never is.
        for start, end, what, allowable in sorted(hits):
            if allowable and self._allowed(chunk, start, end):
                continue
            line = first_line + chunk.count(b"\n", 0, start)
            col = start - (chunk.rfind(b"\n", 0, start) + 1) + 1
            findings.append(LeakFinding(path, line, col, what))
        return findings


# What a reader's ``kitbuild verify`` looks for besides GENERIC_SHAPES. The build's gate does not
# use these: a record may name a public contact or a documentation address on purpose, and the
# build's allow list exists to say so; verify reports them unless that list covers them.
_OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
READER_SHAPES: tuple[tuple[str, bytes], ...] = (
    ("an e-mail address", rb"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"),
    (
        "a private IPv4 address",
        rb"(?<![0-9.])(?:10(?:\." + _OCTET + rb"){3}|172\.(?:1[6-9]|2[0-9]|3[01])(?:\." + _OCTET + rb"){2}"
        rb"|192\.168(?:\." + _OCTET + rb"){2})(?![0-9]|\.[0-9])",
    ),
)
