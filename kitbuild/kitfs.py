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
from typing import Any, BinaryIO, Iterator

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
    refusal,
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
    "open_kit",
    "refusal",
]

# The listing in C (kitbuild/_listing.c), where it was compiled: verify lists a kit before its
# workers start, and os.scandir with a named tuple per entry cost 0.16-0.35 s for 100,000 files.
_listing: Any = None
if not os.environ.get("KITBUILD_PURE_PYTHON"):
    try:
        from kitbuild import _listing as _compiled_listing
    except ImportError:  # installed without a C compiler: the walk below serves
        pass
    else:
        _listing = _compiled_listing if hasattr(_compiled_listing, "tree") else None
_KINDS = (FILE, DIR, SYMLINK, OTHER)  # the order of kitbuild/_listing.c's kinds


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

    def members(self, sizes: bool = True) -> Iterator[Member]:
        if not sizes and _listing is not None:
            listed, in_order = _listing.tree(os.fsencode(self.root), Member, _KINDS)
            if not in_order:
                listed.sort(key=operator.itemgetter(0))
            return iter(listed)
        found: list[Member] = []

        def visit(folder: str, rel: str) -> None:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                found.append(Member(rel, OTHER))
                return
            prefix = rel + "/" if rel else ""
            for entry in entries:
                path = prefix + entry.name
                # Without sizes, the kind comes from the folder listing itself (the file system's
                # d_type, where it keeps one): a kit of 100,000 files lists in a fifth of the time.
                # An entry that cannot be looked at (its path longer than the system takes, or
                # gone since the listing) is 'other', as kitbuild/_listing.c has it, not an error.
                try:
                    if not sizes:
                        kind = FILE if entry.is_file(follow_symlinks=False) else DIR if entry.is_dir(follow_symlinks=False) else SYMLINK if entry.is_symlink() else OTHER
                        found.append(Member(path, kind))
                        if kind == DIR:
                            visit(entry.path, path)
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    found.append(Member(path, OTHER))
                    continue
                mode = st.st_mode
                if stat.S_ISREG(mode):
                    found.append(Member(path, FILE, st.st_size))
                elif stat.S_ISDIR(mode):
                    found.append(Member(path, DIR))
                    visit(entry.path, path)
                elif stat.S_ISLNK(mode):
                    found.append(Member(path, SYMLINK))
                else:
                    found.append(Member(path, OTHER))

        visit(str(self.root), "")
        # By path, which no two members share: a sort on the path alone, not on whole tuples,
        # takes half the time for 100,000 members.
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

    # At most this many folders are kept open for open_fd (far below any descriptor limit).
    _HELD_DIRS = 256

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_dirs", None)  # descriptors belong to this process
        return state

    # Whether files can be opened relative to a folder's descriptor without following a link.
    _AT = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
    _FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)

    def open_fd(self, path: str) -> tuple[int, int] | None:
        """A descriptor of the regular file at ``path``, opened relative to its folder's, and its size.

        The same refusals as :meth:`open`; the folders on the way are opened once each (without
        following links) and kept, so a kit of 100,000 files costs one open per file, not one per
        path part. The size comes from the one ``fstat`` that checks the file is regular.
        """
        if not self._AT:
            return None
        why = refusal(path)
        if why:
            raise MemberError(path, why, "refused")
        folder, _, name = path.rpartition("/")
        parent = self._held_dir(path, folder)
        try:
            fd = os.open(name, self._FILE_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise self._refused(path, path, exc) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise MemberError(path, "is not a regular file", "special")
        except BaseException:
            os.close(fd)
            raise
        # O_NONBLOCK kept a FIFO from blocking the open; a regular file reads the same with it.
        return fd, st.st_size

    def folder_fd(self, folder: str) -> int | None:
        if not self._AT or refusal(folder + "/x" if folder else "x"):
            return None
        try:
            return self._held_dir(folder, folder)
        except MemberError:
            return None

    def _held_dir(self, path: str, folder: str) -> int:
        """The descriptor of ``folder``, opened (see :meth:`_dir_fd`) if not held yet."""
        held = self.__dict__.get("_dirs")
        parent = held.get(folder) if held else None
        if parent is None:
            if len(held or ()) + folder.count("/") + 2 > self._HELD_DIRS:
                self.close()  # room for every folder on this path, which the walk below may open
            parent = self._dir_fd(path, folder)
        return parent

    def _dir_fd(self, path: str, folder: str) -> int:
        dirs: dict[str, int] = self.__dict__.setdefault("_dirs", {})
        held = dirs.get(folder)
        if held is not None:
            return held
        flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
        if not folder:
            fd = os.open(self.root, flags)
        else:
            above, _, part = folder.rpartition("/")
            parent = self._dir_fd(path, above)
            try:
                fd = os.open(part, flags | os.O_NOFOLLOW, dir_fd=parent)
            except OSError as exc:
                raise self._refused(path, folder, exc) from None
        dirs[folder] = fd
        return fd

    def close(self) -> None:
        for fd in self.__dict__.pop("_dirs", {}).values():
            os.close(fd)

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


# -- which reader -----------------------------------------------------------------------------

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


def open_kit(kit: str | os.PathLike[str], limits: ArchiveLimits = ArchiveLimits()) -> KitFS:
    """The reader for ``kit``: a folder, or a .tar.gz/.tgz/.zip archive (recognised by its first bytes).

    Raises :class:`NotAKitError` (exit 2) when ``kit`` is neither, or is an archive that cannot be
    read or expands past ``limits``.
    """
    label = str(kit)
    path = Path(kit)
    if path.is_file():
        from kitbuild.archivekit import TarGzKit, ZipKit  # (tarfile, gzip, zipfile: for archives only)

        try:
            with open(path, "rb") as stream:
                magic = stream.read(4)
        except OSError as exc:
            raise NotAKitError(f"{label}: cannot be read ({exc.strerror}).") from None
        if magic[:2] == b"\x1f\x8b":
            return TarGzKit(path, label, limits)
        if magic in (b"PK\x03\x04", b"PK\x05\x06"):
            return ZipKit(path, label, limits)
        raise NotAKitError(f"{label}: is neither a folder nor a .tar.gz or .zip archive. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.")
    if not path.exists() and not path.is_symlink() and label.endswith(ARCHIVE_SUFFIXES):
        raise NotAKitError(f"{label}: no such archive. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.")
    return FolderKit(kit)
