"""A read-only view of a kit that never opens anything outside it.

``kitbuild verify`` runs on kits downloaded from anywhere, so every path it uses comes from the
kit itself and is distrusted: a kit path is refused when it is absolute, holds '..', a backslash,
a NUL or an empty part, and a member is opened only when no part of its path is a symlink (on
POSIX, component by component with ``O_NOFOLLOW`` relative to the open parent, so a link swapped
in between a check and an open is refused too). Devices, FIFOs and sockets are listed, never opened.

:class:`KitFS` is the interface; :class:`FolderKit` reads a folder, :class:`TarGzKit` and
:class:`ZipKit` read the archives ``kitbuild publish`` writes (or any whose members sit under one
top folder) without extracting them, so the checks never know which they are reading.

An archive comes from anywhere too, and its headers are claims like any other. Its members are read
from the archive itself, never written to disk; a member is refused (and reported as a finding, see
:meth:`KitFS.findings`) when its name climbs out or is absolute, when it is a link, a device or a
FIFO, when its name occurs twice, when it declares more bytes than the archive can hold, or more
than :attr:`ArchiveLimits.member`. An archive whose members declare more than
:attr:`ArchiveLimits.total` in all is not read at all (exit 2). Declared sizes are checked against
what the compressed bytes can expand to (deflate never expands more than 1032-fold) before any
member is skipped or read, so a tiny archive claiming 10 GB costs nothing.
"""

from __future__ import annotations

import errno
import gzip
import io
import operator
import os
import stat
import tarfile
import zipfile
import zlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, Callable, Iterator, NamedTuple, cast

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
        self.kind = kind  # "refused", "missing", "special" or "unreadable"


class Member(NamedTuple):
    """One entry of a kit: its kit path ('/'-separated), its kind and, for a file, its size.

    A named tuple: a kit of 100,000 files lists 100,000 of them, and a tuple is built in C.
    """

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

    def open_fd(self, path: str) -> tuple[int, int] | None:
        """A raw descriptor of the regular file at ``path`` (the caller closes it) and the file's
        size when it was opened, or None when this reader has none to give (an archive member):
        use :meth:`open` then."""
        return None

    def folder_fd(self, folder: str) -> int | None:
        """A descriptor of the folder ``folder`` (a kit path; '' is the root), held by this
        reader, to open its files by name; None when this reader has none to give, or would
        refuse a path through it (its files are then opened one by one, and refused so)."""
        return None

    def close(self) -> None:
        """Let go of what the reader holds open between calls."""

    def read(self, path: str, limit: int | None = None) -> bytes:
        """The bytes of ``path`` (at most ``limit``; more raises :class:`MemberError`)."""
        with self.open(path) as stream:
            data = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise MemberError(path, f"is larger than {limit:,} bytes", "unreadable")
        return data


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


# -- archives ---------------------------------------------------------------------------------

GIB = 1 << 30
# deflate's largest expansion: 258 bytes from 2 bits. A member that claims more than this many
# times its compressed bytes (plus a little for headers) cannot hold what it claims.
DEFLATE_RATIO = 1032
_SLACK = 1 << 20
_HEADER_LIMIT = 1 << 20  # a tar header (pax or GNU long name) larger than this is refused
_CACHE_MEMBER = 1 << 20  # small files at the kit's top are kept from the listing pass ...
_CACHE_TOTAL = 32 << 20  # ... up to this much in all, so verify rewinds the stream less often


@dataclass(frozen=True)
class ArchiveLimits:
    """How much an archive may expand to before verify refuses to read it (documented in README.md)."""

    total: int = 64 * GIB  # all members together; more: the archive is not read (exit 2)
    member: int = 16 * GIB  # one member; more: that member is refused (KB116)
    members: int = 1_000_000  # members; more: the archive is not read (exit 2)


@dataclass(slots=True)
class _Raw:
    """An archive member as its header declares it, before its name is trusted."""

    name: str
    kind: str
    size: int = 0
    locator: Any = None  # where the format finds the bytes (a tar data offset, a ZipInfo)
    code: str | None = None  # a refusal found while listing (KB113, KB115)
    reason: str = ""
    data: bytes | None = None  # the bytes, when the listing pass kept them


@dataclass(slots=True)
class _Entry:
    kind: str
    size: int | None
    locator: Any = None
    reason: str = ""


def _gib(n: int) -> str:
    return f"{n / GIB:,.0f} GiB" if n >= GIB else f"{n:,} bytes"


class _ArchiveKit(KitFS):
    """What the tar.gz and zip readers share: turning declared members into trusted kit paths."""

    sequential = True
    format_name = ""

    def __init__(self, path: Path, label: str, limits: ArchiveLimits) -> None:
        self.path = path
        self.label = label
        self.limits = limits
        self.name = path.name
        self._findings: list[Finding] = []
        self._entries: dict[str, _Entry] = {}
        self._cache: dict[str, bytes] = {}
        self._settle(self._list())

    @abstractmethod
    def _list(self) -> list[_Raw]:
        """Every member the archive declares, in archive order; raises NotAKitError when none can be."""

    @abstractmethod
    def _stream(self, entry: _Entry) -> BinaryIO:
        """The bytes of a regular member."""

    def _not_readable(self, why: str) -> NotAKitError:
        return NotAKitError(f"{self.label}: {why}. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.")

    def _refuse_name(self, name: str, why: str) -> None:
        self._findings.append(Finding("KB112", self.name, f"holds a member named {name!r}, which {why}; verify never reads it"))

    def _settle(self, raws: list[_Raw]) -> None:
        """Trust the names that are plain kit paths under one top folder; refuse the rest."""
        accepted: list[tuple[str, _Raw]] = []
        for raw in raws:
            name = raw.name
            while name.startswith("./"):
                name = name[2:]
            name = name.rstrip("/") if raw.kind == DIR else name
            if name in ("", "."):
                continue
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                self._refuse_name(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), "is not UTF-8")
                continue
            why = refusal(name)
            if why:
                self._refuse_name(name, why)
                continue
            accepted.append((name, raw))
        if not accepted:
            raise self._not_readable(f"holds no member verify can read as a kit ({self.format_name})")
        if any(name == "index.json" for name, _ in accepted):
            root = ""
        else:
            tops = sorted({name.split("/", 1)[0] for name, _ in accepted})
            if len(tops) != 1:
                shown = ", ".join(tops[:3]) + (", ..." if len(tops) > 3 else "")
                raise self._not_readable(f"its members do not sit under one top folder (they sit under {shown}) and there is no index.json at its root")
            root = tops[0] + "/"
        by_path: dict[str, list[_Raw]] = {}
        for name, raw in accepted:
            if name.startswith(root):  # else: the top folder's own entry
                by_path.setdefault(name[len(root):], []).append(raw)
        for path, group in by_path.items():
            raw = group[0]
            if all(r.kind == DIR for r in group):
                self._entries[path] = _Entry(DIR, None)
            elif len(group) > 1:
                self._refuse(path, "KB114", "is in the archive more than once; neither copy is read")
            elif raw.code is not None:
                self._refuse(path, raw.code, raw.reason)
            elif raw.kind == FILE and raw.size > self.limits.member:
                self._refuse(path, "KB116", f"declares {raw.size:,} bytes, more than the {_gib(self.limits.member)} verify reads of one archive member; it is never read")
            else:
                self._entries[path] = _Entry(raw.kind, raw.size if raw.kind == FILE else None, raw.locator)
                if raw.data is not None:
                    self._cache[path] = raw.data

    def _refuse(self, path: str, code: str, reason: str) -> None:
        self._findings.append(Finding(code, path, reason))
        self._entries[path] = _Entry(REFUSED, None, reason=reason)

    def _check_totals(self, count: int, declared: int) -> None:
        if count > self.limits.members:
            raise self._not_readable(f"holds more than {self.limits.members:,} members, more than verify reads from an archive; unpack it and verify the folder")
        if declared > self.limits.total:
            raise self._not_readable(
                f"its members declare more than {_gib(self.limits.total)} in all, more than verify reads from an archive; "
                "unpack it yourself if you trust it, and verify the folder"
            )

    def findings(self) -> list[Finding]:
        return list(self._findings)

    def members(self, sizes: bool = True) -> Iterator[Member]:
        found = {p: Member(p, e.kind, e.size) for p, e in self._entries.items()}
        for p in list(found):
            parts = p.split("/")
            for i in range(1, len(parts)):
                found.setdefault("/".join(parts[:i]), Member("/".join(parts[:i]), DIR))
        return iter(sorted(found.values(), key=lambda m: m.path))

    def open(self, path: str) -> BinaryIO:
        why = refusal(path)
        if why:
            raise MemberError(path, why, "refused")
        entry = self._entries.get(path)
        if entry is None:
            if any(p.startswith(path + "/") for p in self._entries):
                raise MemberError(path, "is not a regular file", "special")
            raise MemberError(path, "is not in the kit", "missing")
        if entry.kind == SYMLINK:
            raise MemberError(path, f"resolves through the symlink {path}", "refused")
        if entry.kind == REFUSED:
            raise MemberError(path, entry.reason, "refused")
        if entry.kind != FILE:
            raise MemberError(path, "is not a regular file", "special")
        if path in self._cache:
            return io.BytesIO(self._cache[path])
        return self._stream(entry)


class _GuardedStream:
    """The decompressed tar stream as tarfile sees it: a header may not ask for more than 1 MiB.

    tarfile reads a pax header's or GNU long name's payload whole, at the size the header claims;
    without this guard a forged header would have it hold gigabytes in memory.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0 or n > _HEADER_LIMIT:
            raise _HeaderTooLarge(n)
        return self._stream.read(n)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._stream.seek(offset, whence)

    def tell(self) -> int:
        return self._stream.tell()


class _HeaderTooLarge(Exception):
    pass


_STREAM_ERRORS = (EOFError, zlib.error, OSError, ValueError, tarfile.TarError, zipfile.BadZipFile, RuntimeError, NotImplementedError)


class _MemberStream(io.RawIOBase):
    """One member's bytes, read from the archive; a short read is an error, never silent."""

    def __init__(self, read_at: Callable[[int, int], bytes], size: int) -> None:
        super().__init__()
        self._read_at = read_at
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self._size - self._pos)
        if want <= 0:
            return 0
        try:
            data = self._read_at(self._pos, want)
        except _STREAM_ERRORS as exc:
            raise OSError(errno.EIO, f"the archive's data for it is damaged ({_why(exc)})") from None
        if not data:
            raise OSError(errno.EIO, "the archive ends inside it")
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


def _member_stream(read_at: Callable[[int, int], bytes], size: int) -> BinaryIO:
    """A buffered stream over a member: read, readline and iteration, as a file gives them."""
    return cast(BinaryIO, io.BufferedReader(_MemberStream(read_at, size), buffer_size=1 << 16))


class TarGzKit(_ArchiveKit):
    """A kit in a .tar.gz (or .tgz), read member by member from the compressed stream."""

    format_name = "a .tar.gz"

    def __init__(self, path: Path, label: str, limits: ArchiveLimits = ArchiveLimits()) -> None:
        self._gz: gzip.GzipFile | None = None
        super().__init__(path, label, limits)

    def _gzip(self) -> gzip.GzipFile:
        if self._gz is None:
            self._gz = gzip.GzipFile(fileobj=open(self.path, "rb"), mode="rb")
        return self._gz

    def _list(self) -> list[_Raw]:
        # Every byte the tar holds came out of the gzip stream, so no member can end past this.
        bound = self.path.stat().st_size * DEFLATE_RATIO + _SLACK
        gz = self._gzip()
        try:
            tar = tarfile.open(fileobj=cast(IO[bytes], _GuardedStream(cast(IO[bytes], gz))), mode="r:")
        except (_HeaderTooLarge, *_STREAM_ERRORS) as exc:
            raise self._not_readable(f"is not a readable .tar.gz ({_why(exc)})") from None
        raws: list[_Raw] = []
        declared = cached = 0
        while True:
            try:
                info = tar.next()
            except (_HeaderTooLarge, *_STREAM_ERRORS) as exc:
                last = raws[-1] if raws else None
                if isinstance(exc, tarfile.ReadError) and str(exc) == "unexpected end of data" and last is not None and last.kind == FILE:
                    last.code, last.reason = "KB115", f"declares {last.size:,} bytes; the archive ends before them"
                else:
                    after = f" after the member {last.name!r}" if last is not None else ""
                    self._findings.append(Finding("KB117", self.name, f"is damaged{after} ({_why(exc)}); members after that point are not read"))
                break
            if info is None:
                break
            raw = _Raw(info.name, _tar_kind(info), info.size)
            if info.islnk():
                raw.code, raw.reason = "KB113", "is a hard link; a kit holds regular files only, and verify never follows a link"
            raws.append(raw)
            if raw.kind == FILE or info.type not in tarfile.SUPPORTED_TYPES:
                end = info.offset_data + info.size
                if end > bound:
                    raw.code = "KB115"
                    raw.reason = f"declares {info.size:,} bytes, more than the archive can hold ({self.path.stat().st_size:,} compressed bytes); members after it cannot be found"
                    break
                declared += info.size
            self._check_totals(len(raws), declared)
            if raw.kind != FILE:
                continue
            raw.locator = info.offset_data
            parts = info.name.split("/")
            if info.size <= _CACHE_MEMBER and cached + info.size <= _CACHE_TOTAL and (len(parts) <= 2 or "_templates" in parts):
                try:
                    gz.seek(info.offset_data)
                    data = gz.read(info.size)
                except _STREAM_ERRORS:
                    data = b""
                if len(data) == info.size:
                    raw.data = data
                    cached += info.size
        return raws

    def _stream(self, entry: _Entry) -> BinaryIO:
        offset: int = entry.locator
        assert entry.size is not None

        def read_at(pos: int, n: int) -> bytes:
            gz = self._gzip()
            if gz.tell() != offset + pos:
                gz.seek(offset + pos)
            return gz.read(n)

        return _member_stream(read_at, entry.size)


class ZipKit(_ArchiveKit):
    """A kit in a .zip, read member by member through the zip's central directory."""

    format_name = "a .zip"

    def __init__(self, path: Path, label: str, limits: ArchiveLimits = ArchiveLimits()) -> None:
        self._zip: zipfile.ZipFile | None = None
        super().__init__(path, label, limits)

    def _list(self) -> list[_Raw]:
        try:
            self._zip = zipfile.ZipFile(self.path)
            infos = self._zip.infolist()
        except _STREAM_ERRORS as exc:
            raise self._not_readable(f"is not a readable .zip ({_why(exc)})") from None
        self._check_totals(len(infos), 0)
        # Member data lies before the central directory; a member claiming to run past it holds less.
        start_dir = getattr(self._zip, "start_dir", self.path.stat().st_size)
        raws: list[_Raw] = []
        declared = 0
        for info in infos:
            mode = info.external_attr >> 16 if info.create_system == 3 else 0
            kind = _mode_kind(mode) if stat.S_IFMT(mode) else (DIR if info.is_dir() else FILE)
            raw = _Raw(info.filename, kind, info.file_size, info)
            raws.append(raw)
            if kind != FILE:
                continue
            declared += info.file_size
            if info.header_offset + info.compress_size > start_dir:
                raw.code, raw.reason = "KB115", f"declares {info.compress_size:,} compressed bytes, which run past the end of the archive's data"
            elif info.compress_type == zipfile.ZIP_STORED and info.file_size > info.compress_size:
                raw.code, raw.reason = "KB115", f"declares {info.file_size:,} bytes but holds {info.compress_size:,}"
            elif info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > info.compress_size * DEFLATE_RATIO + _SLACK:
                raw.code, raw.reason = "KB115", f"declares {info.file_size:,} bytes, more than its {info.compress_size:,} compressed bytes can hold"
        self._check_totals(len(infos), declared)
        return raws

    def _stream(self, entry: _Entry) -> BinaryIO:
        info = entry.locator
        assert self._zip is not None
        archive = self._zip

        opened: list[IO[bytes]] = []

        def read_at(pos: int, n: int) -> bytes:
            # One member stream per open; the checks read each member front to back.
            if not opened:
                opened.append(archive.open(info))
            return opened[0].read(n)

        return _member_stream(read_at, info.file_size)


def _why(exc: BaseException) -> str:
    if isinstance(exc, _HeaderTooLarge):
        return f"a header claims more than {_HEADER_LIMIT:,} bytes"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _mode_kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return DIR
    if stat.S_ISLNK(mode):
        return SYMLINK
    return OTHER


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.issparse():
        return OTHER  # its declared size is not the bytes it holds
    if info.isreg():
        return FILE
    if info.isdir():
        return DIR
    if info.issym():
        return SYMLINK
    if info.islnk():
        return REFUSED
    return OTHER


ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


def open_kit(kit: str | os.PathLike[str], limits: ArchiveLimits = ArchiveLimits()) -> KitFS:
    """The reader for ``kit``: a folder, or a .tar.gz/.tgz/.zip archive (recognised by its first bytes).

    Raises :class:`NotAKitError` (exit 2) when ``kit`` is neither, or is an archive that cannot be
    read or expands past ``limits``.
    """
    label = str(kit)
    path = Path(kit)
    if path.is_file():
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
