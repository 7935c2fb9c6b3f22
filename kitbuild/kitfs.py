"""A read-only view of a kit that never opens anything outside it.

``kitbuild verify`` runs on kits downloaded from anywhere, so every path it uses comes from the
kit itself and is distrusted: a kit path is refused when it is absolute, holds '..', a backslash,
a NUL or an empty part, and a member is opened only when no part of its path is a symlink (on
POSIX, component by component with ``O_NOFOLLOW`` relative to the open parent, so a link swapped
in between a check and an open is refused too). Devices, FIFOs and sockets are listed, never opened.

:class:`KitFS` is the interface; :class:`FolderKit` reads a folder. An archive reader (tar.gz,
zip) implements the same three methods, so the checks never know which they are reading.
"""

from __future__ import annotations

import errno
import os
import stat
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from kitbuild.errors import EXIT_FINDINGS, EXIT_USAGE, KitbuildError

FILE, SYMLINK, DIR, OTHER = "file", "symlink", "dir", "other"


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
        self.kind = kind  # "refused", "missing", "special" or "unreadable"


@dataclass(frozen=True)
class Member:
    """One entry of a kit: its kit path ('/'-separated), its kind and, for a file, its size."""

    path: str
    kind: str
    size: int | None = None


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
    parts = path.split("/")
    if ".." in parts:
        return "climbs out of the kit with '..'"
    if "" in parts or "." in parts:
        return "has an empty or '.' part"
    return None


class KitFS(ABC):
    """What the checks may do with a kit: list it and read its regular files."""

    label: str

    @abstractmethod
    def members(self) -> Iterator[Member]:
        """Every entry below the kit's root, sorted by path; directories included."""

    @abstractmethod
    def open(self, path: str) -> BinaryIO:
        """A binary stream of the regular file at kit path ``path``; raises :class:`MemberError`."""

    def read(self, path: str, limit: int | None = None) -> bytes:
        """The bytes of ``path`` (at most ``limit``; more raises :class:`MemberError`)."""
        with self.open(path) as stream:
            data = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise MemberError(path, f"is larger than {limit:,} bytes", "unreadable")
        return data


class FolderKit(KitFS):
    """A kit that is a folder on disk."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.label = str(root)
        path = Path(root)
        if not path.exists():
            raise NotAKitError(f"{self.label}: no such folder. Give the folder a kit was unpacked into.")
        if not path.is_dir():
            raise NotAKitError(f"{self.label}: is not a folder. Give the folder a kit was unpacked into.")
        # The root the user names may itself be a link; what lies below it may not.
        self.root = path.resolve()
        try:
            os.listdir(self.root)
        except OSError as exc:
            raise NotAKitError(f"{self.label}: cannot be read ({exc.strerror}).") from None

    def members(self) -> Iterator[Member]:
        found: list[Member] = []

        def visit(folder: Path, rel: str) -> None:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                found.append(Member(rel, OTHER))
                return
            for entry in entries:
                path = f"{rel}/{entry.name}" if rel else entry.name
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    found.append(Member(path, SYMLINK))
                elif stat.S_ISDIR(st.st_mode):
                    found.append(Member(path, DIR))
                    visit(Path(entry.path), path)
                elif stat.S_ISREG(st.st_mode):
                    found.append(Member(path, FILE, st.st_size))
                else:
                    found.append(Member(path, OTHER))

        visit(self.root, "")
        return iter(sorted(found, key=lambda m: m.path))

    def open(self, path: str) -> BinaryIO:
        why = refusal(path)
        if why:
            raise MemberError(path, why, "refused")
        parts = path.split("/")
        if os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW"):
            return self._open_at(path, parts)
        return self._open_checked(path, parts)

    def _open_at(self, path: str, parts: list[str]) -> BinaryIO:
        nofollow = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                flags = os.O_RDONLY | nofollow | (os.O_NONBLOCK if last else getattr(os, "O_DIRECTORY", 0))
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except OSError as exc:
                    raise self._refused(path, "/".join(parts[: i + 1]), exc) from None
                os.close(fd)
                fd = child
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise MemberError(path, "is not a regular file", "special")
            # O_NONBLOCK kept a FIFO from blocking the open; a regular file reads the same without it.
            os.set_blocking(fd, True)
            stream = os.fdopen(fd, "rb")
            fd = -1
            return stream
        finally:
            if fd >= 0:
                os.close(fd)

    def _refused(self, path: str, reached: str, exc: OSError) -> MemberError:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", -1)):
            # O_NOFOLLOW gives ELOOP (EMLINK on some BSDs) on a link; O_DIRECTORY gives ENOTDIR.
            if os.path.islink(self.root / reached):
                return MemberError(path, f"resolves through the symlink {reached}", "refused")
            if exc.errno == errno.ENOTDIR:
                return MemberError(path, f"{reached} is not a folder", "missing")
        if exc.errno == errno.ENOENT:
            return MemberError(path, "is not in the kit", "missing")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return MemberError(path, "cannot be read (permission denied)", "unreadable")
        return MemberError(path, f"cannot be opened ({exc.strerror})", "unreadable")

    def _open_checked(self, path: str, parts: list[str]) -> BinaryIO:
        # Without dir_fd (Windows): check each part with lstat, then open; the check and the open
        # are not atomic there, which a folder on a reader's own disk can live with.
        current = self.root
        for i, part in enumerate(parts):
            current = current / part
            try:
                st = os.lstat(current)
            except OSError as exc:
                raise self._refused(path, "/".join(parts[: i + 1]), exc) from None
            if stat.S_ISLNK(st.st_mode):
                raise MemberError(path, f"resolves through the symlink {'/'.join(parts[: i + 1])}", "refused")
        if not stat.S_ISREG(os.lstat(current).st_mode):
            raise MemberError(path, "is not a regular file", "special")
        try:
            return open(current, "rb")
        except OSError as exc:
            raise self._refused(path, path, exc) from None


def open_kit(kit: str | os.PathLike[str]) -> KitFS:
    """The reader for ``kit``: a folder today; archives once a reader for them exists."""
    return FolderKit(kit)
