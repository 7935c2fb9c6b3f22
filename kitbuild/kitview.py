"""What every reader of a kit shares: the interface the checks use, a member, its refusals.

:mod:`kitbuild.kitfs` (a folder, and :func:`~kitbuild.kitfs.open_kit`, which picks the reader)
and :mod:`kitbuild.archivekit` (a .tar.gz or .zip) both build on this module, which imports
neither: so the folder reader can hand an archive to the archive readers without the two
modules importing each other.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import BinaryIO, Iterator, NamedTuple

from kitbuild.errors import EXIT_FINDINGS, EXIT_USAGE, KitbuildError
from kitbuild.findings import Finding

# REFUSED: an archive member the reader will not read (a hard link, a duplicate name, a size it
# cannot hold); its finding comes from KitFS.findings(), not from the checks.
FILE, SYMLINK, DIR, OTHER, REFUSED = "file", "symlink", "dir", "other", "refused"


class NotAKitError(KitbuildError):
    """KIT is not a kit at all: no such folder, no index.json, or unreadable (exit 2)."""

    exit_code = EXIT_USAGE


class MemberError(KitbuildError):
    """A kit path cannot be opened: refused, missing or not a regular file (a finding in verify)."""

    exit_code = EXIT_FINDINGS

    def __init__(self, path: str, reason: str, kind: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.kind = kind  # "refused", "missing", "special", "unreadable" or "changed"


class Member(NamedTuple):
    """One entry of a kit: its kit path ('/'-separated), its kind and, for a file, its size.

    A named tuple: a kit of 100,000 files lists 100,000 of them, and a tuple is built in C.
    """

    path: str
    kind: str
    size: int | None = None


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(kit: object) -> bool:
    """Whether ``kit`` names a kit by URL (``https://...``, any scheme) rather than by a path on disk."""
    return isinstance(kit, str) and _URL.match(kit) is not None


def with_folders(found: dict[str, Member]) -> Iterator[Member]:
    """``found`` and the folders its paths imply, in path order: an archive or a URL lists files
    only, and a folder's members are listed with the folders they lie in."""
    for p in list(found):
        parts = p.split("/")
        for i in range(1, len(parts)):
            folder = "/".join(parts[:i])
            found.setdefault(folder, Member(folder, DIR))
    return iter(sorted(found.values(), key=lambda m: m.path))


def shown(name: str) -> str:
    """A name as it can be printed (and written in a JSON report): bytes that are not UTF-8,
    which os.listdir gives as lone surrogates, as \\x escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def refusal(path: str) -> str | None:
    """Why ``path`` may not name a kit member, or None when it is a plain relative kit path."""
    if not path:
        return "is empty"
    if "\0" in path:
        return "holds a NUL byte"
    if "\\" in path:
        return "holds a backslash"
    if path.startswith("/") or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        return "is absolute"
    # Each part between slashes, seen with its slashes: a part '..' is '/../' here, an empty part
    # '//' and a part '.' '/./' (a fifth less time than splitting, for verify's 100,000 paths).
    between = "/" + path + "/"
    if "/../" in between:
        return "climbs out of the kit with '..'"
    if "//" in between or "/./" in between:
        return "has an empty or '.' part"
    return None


class KitFS(ABC):
    """What the checks may do with a kit: list it and read its regular files."""

    label: str
    # A reader over one compressed stream reads best in order, from one process.
    sequential = False
    # Whether a file can be read from any offset at no cost (kitbuild.parts: workers share one
    # large file).
    seekable = False
    # Whether members() sees every file the kit holds: a web server cannot be listed, so a kit
    # read over HTTP knows only the files its index.json names (and the build's own files).
    listable = True

    def findings(self) -> list[Finding]:
        """What the reader itself refused while listing the kit (an archive's hostile members)."""
        return []

    @abstractmethod
    def members(self, sizes: bool = True) -> Iterator[Member]:
        """Every entry below the kit's root, sorted by path; directories included.

        With ``sizes=False`` a reader may leave a file's size out (None) where it would cost a
        system call per file to learn it: verify learns each size as it reads the file.
        """

    @abstractmethod
    def open(self, path: str) -> BinaryIO:
        """A binary stream of the regular file at kit path ``path``; raises :class:`MemberError`."""

    def close(self) -> None:
        """Let go of what the reader holds open between calls."""

    def __enter__(self) -> "KitFS":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def workers(self, jobs: int) -> int:
        """How many files to read at once, given ``jobs`` cores: one per core for a local reader."""
        return jobs

    def read(self, path: str, limit: int | None = None, sha256: str | None = None, head: bool = False) -> bytes:
        """The bytes of ``path`` (at most ``limit``; more raises :class:`MemberError`, but with
        ``head``, which reads the first ``limit`` of them). With ``sha256``, the digest the kit's
        pass read them with: other bytes raise MemberError too. (A check that reads a file again
        must judge the bytes that were hashed, not what a server or a writer put there since.)"""
        with self.open(path) as stream:
            try:
                data = stream.read() if limit is None else stream.read(limit + (not head))
            except OSError as exc:
                # Opened, but its bytes cannot be had whole (an archive member whose compressed
                # data is damaged or cut short, a disk's read error): a finding on that file, as
                # when it cannot be opened, never an error of verify's own.
                raise MemberError(path, f"cannot be read ({exc.strerror or exc})", "unreadable") from None
        if limit is not None and len(data) > limit:  # (never with head)
            raise MemberError(path, f"is larger than {limit:,} bytes", "unreadable")
        if sha256 and hashlib.sha256(data).hexdigest() != sha256:
            raise MemberError(path, "changed while the kit was checked (these are not the bytes hashed when it was first read); check the kit again", "changed")
        return data


GIB = 1 << 30


@dataclass(frozen=True)
class ArchiveLimits:
    """How much an archive may expand to before verify refuses to read it (documented in docs/verify.md)."""

    total: int = 64 * GIB  # all members together; more: the archive is not read (exit 2)
    member: int = 16 * GIB  # one member; more: that member is refused (KB116)
    members: int = 1_000_000  # members; more: the archive is not read (exit 2)
