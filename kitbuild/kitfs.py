"""A read-only view of a kit that never opens anything outside it.

``kitbuild verify`` runs on kits downloaded from anywhere, so every path it uses comes from the
kit itself and is distrusted: a kit path is refused when it is absolute, holds '..', a backslash,
a NUL or an empty part, and a member is opened only when no part of its path is a symlink (on
POSIX, component by component with ``O_NOFOLLOW`` relative to the open parent, so a link swapped
in between a check and an open is refused too). Devices, FIFOs and sockets are listed, never opened.

:class:`KitFS` is the interface; :class:`FolderKit` reads a folder, and the readers in
:mod:`kitbuild.archivekit` read the archives ``kitbuild publish`` writes (or any whose members sit
under one top folder) without extracting them, so the checks never know which they are reading.
:func:`open_kit` picks the reader.
"""

from __future__ import annotations

import errno
import operator
import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from kitbuild.findings import Finding

# What every reader shares lives one floor down, in kitbuild.kitview, so that kitbuild.archivekit
# need not import this module; it is named here too, where the checks have always found it.
from kitbuild.kitview import (
    DIR,
    FILE,
    GIB,
    OTHER,
    REFUSED,
    SYMLINK,
    ArchiveLimits,
    KitFS,
    Member,
    MemberError,
    NotAKitError,
    is_url,
    refusal,
    shown,
)

__all__ = [
    "ARCHIVE_SUFFIXES",
    "DIR",
    "FILE",
    "GIB",
    "OTHER",
    "REFUSED",
    "SYMLINK",
    "ArchiveLimits",
    "FolderKit",
    "KitFS",
    "Member",
    "MemberError",
    "NotAKitError",
    "is_url",
    "open_kit",
    "refusal",
    "shown",
]


class FolderKit(KitFS):
    """A kit that is a folder on disk."""

    seekable = True

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.label = shown(str(root))
        self._not_utf8: list[str] = []  # entries whose names no index.json can hold, as shown
        path = Path(root)
        if not path.exists():
            raise NotAKitError(f"{self.label}: no such folder. Give the folder a kit was unpacked into.")
        if not path.is_dir():
            raise NotAKitError(f"{self.label}: is not a folder. Give the folder a kit was unpacked into.")
        # The root the user names may itself be a link; what lies below it may not.
        self.root = path.resolve()
        self._folder: tuple[str, int] | None = None  # see _folder_fd
        try:
            os.listdir(self.root)
        except OSError as exc:
            raise NotAKitError(f"{self.label}: cannot be read ({exc.strerror}).") from None

    def findings(self) -> list[Finding]:
        return [Finding("KB101", p, "is in the kit but not in index.json: its name is not UTF-8, which index.json cannot hold") for p in self._not_utf8]

    def members(self, sizes: bool = True) -> Iterator[Member]:
        found: list[Member] = []
        self._not_utf8 = []
        # The walk keeps its own stack: a kit nested thousands of folders deep is no error.
        stack: list[tuple[str, str]] = [(str(self.root), "")]
        while stack:
            folder, rel = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                found.append(Member(rel, OTHER))
                continue
            prefix = rel + "/" if rel else ""
            for entry in entries:
                path = prefix + entry.name
                if not entry.name.isascii() and shown(entry.name) != entry.name:
                    self._not_utf8.append(shown(path))  # neither read nor entered
                    found.append(Member(self._not_utf8[-1], REFUSED))
                    continue
                # An entry that cannot be looked at (its path longer than the system takes, or
                # gone since the listing) is 'other', not an error.
                try:
                    # Without sizes the listing's own file types do (no stat a file: a build's
                    # check of 100,000 files it has just written and observed).
                    mode = entry.stat(follow_symlinks=False).st_mode if sizes else _mode(entry)
                except OSError:
                    found.append(Member(path, OTHER))
                    continue
                if stat.S_ISREG(mode):
                    found.append(Member(path, FILE, entry.stat(follow_symlinks=False).st_size if sizes else None))
                elif stat.S_ISDIR(mode):
                    found.append(Member(path, DIR))
                    stack.append((entry.path, path))
                elif stat.S_ISLNK(mode):
                    found.append(Member(path, SYMLINK))
                else:
                    found.append(Member(path, OTHER))
        found.sort(key=operator.itemgetter(0))
        return iter(found)

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
        folder = "/".join(parts[:-1])
        fd = self._folder_fd(folder, path)
        try:
            child = os.open(parts[-1], os.O_RDONLY | nofollow | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            raise self._refused(path, path, exc) from None
        try:
            st = os.fstat(child)
            if not stat.S_ISREG(st.st_mode):
                raise MemberError(path, "is not a regular file", "special")
            # O_NONBLOCK kept a FIFO from blocking the open; a regular file reads the same without it.
            os.set_blocking(child, True)
            stream = os.fdopen(child, "rb")
            child = -1
            return stream
        finally:
            if child >= 0:
                os.close(child)

    def _folder_fd(self, folder: str, path: str) -> int:
        """A descriptor of the kit's folder ``folder``, reached one part at a time without following
        a link. The last one is kept: files are read in path order, so most share the folder of the
        one before (a kit of 100,000 small files spent a third of its time opening folders)."""
        if self._folder is not None and self._folder[0] == folder:
            return self._folder[1]
        self.close()
        flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.root, flags)
        parts = folder.split("/") if folder else []
        try:
            for i, part in enumerate(parts):
                try:
                    child = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    raise self._refused(path, "/".join(parts[: i + 1]), exc) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        self._folder = (folder, fd)
        return fd

    def close(self) -> None:
        if self._folder is not None:
            os.close(self._folder[1])
            self._folder = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_folder": None}  # a descriptor is this process's own

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


# -- which reader -----------------------------------------------------------------------------

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


def _mode(entry: os.DirEntry[str]) -> int:
    """An entry's file type as the listing gives it (a stat only where the file system does not)."""
    if entry.is_symlink():
        return stat.S_IFLNK
    if entry.is_dir(follow_symlinks=False):
        return stat.S_IFDIR
    if entry.is_file(follow_symlinks=False):
        return stat.S_IFREG
    return 0  # a socket, a device, a pipe: 'other'


def open_kit(kit: str | os.PathLike[str], limits: ArchiveLimits = ArchiveLimits(), timeout: float | None = None) -> KitFS:
    """The reader for ``kit``: a folder, a .tar.gz/.tgz/.zip archive (recognised by its first
    bytes), or the http(s) URL of a kit's folder or archive (:mod:`kitbuild.httpkit`; ``timeout``
    bounds each request).

    Raises :class:`NotAKitError` (exit 2) when ``kit`` is neither, or is an archive that cannot be
    read or expands past ``limits``.
    """
    label = str(kit)
    if is_url(kit):
        from kitbuild.httpkit import DEFAULT_TIMEOUT, open_url  # (urllib, ssl: for URLs only)

        return open_url(str(kit), limits, DEFAULT_TIMEOUT if timeout is None else timeout)
    path = Path(kit)
    if path.is_file():
        from kitbuild.archivekit import open_archive  # (tarfile, gzip, zipfile: for archives only)

        return open_archive(path, label, limits)
    if not path.exists() and not path.is_symlink() and label.endswith(ARCHIVE_SUFFIXES):
        raise NotAKitError(f"{label}: no such archive. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.")
    return FolderKit(kit)

