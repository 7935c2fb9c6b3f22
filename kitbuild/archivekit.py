"""The archive kits: a .tar.gz or .zip kit read in place, for ``kitbuild verify``.

An archive comes from anywhere, and its headers are claims like any other. Its members are read
from the archive itself, never written to disk; a member is refused (and reported as a finding, see
:meth:`~kitbuild.kitview.KitFS.findings`) when its name climbs out or is absolute, when it is a link,
a device or a FIFO, when its name occurs twice, when it declares more bytes than the archive can
hold, or more than :attr:`~kitbuild.kitview.ArchiveLimits.member`. An archive whose members declare
more than :attr:`~kitbuild.kitview.ArchiveLimits.total` in all is not read at all (exit 2). Declared
sizes are checked against what the compressed bytes can expand to (deflate never expands more
than 1032-fold) before any member is skipped or read, so a tiny archive claiming 10 GB costs
nothing.

:func:`kitbuild.kitfs.open_kit` imports this module only for an archive: a folder kit's verify
need not import tarfile, gzip and zipfile before its workers start.
"""

from __future__ import annotations

import errno
import gzip
import io
import stat
import tarfile
import zipfile
import zlib
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, Callable, Iterator, cast

from kitbuild.findings import Finding
# kitbuild.kitview, not kitbuild.kitfs: kitfs.open_kit imports this module, and the import goes one way.
from kitbuild.ziplayout import end_gap, local_mismatches, unzip_name
from kitbuild.kitview import DIR, FILE, GIB, OTHER, REFUSED, SYMLINK, ArchiveLimits, KitFS, Member, MemberError, NotAKitError, refusal, with_folders

# deflate's largest expansion: 258 bytes from 2 bits. A member that claims more than this many
# times its compressed bytes (plus a little for headers) cannot hold what it claims.
DEFLATE_RATIO = 1032
_SLACK = 1 << 20
_HEADER_LIMIT = 1 << 20  # a tar header (pax or GNU long name) larger than this is refused
_CACHE_MEMBER = 1 << 20  # small files at the kit's top are kept from the listing pass ...
_CACHE_TOTAL = 32 << 20  # ... up to this much in all, so verify rewinds the stream less often
# What ends a tar: zero blocks, padded to its record (10 KiB, or a few MiB at GNU tar's largest
# blocking factor). More zeros than this are no padding a tar writes, and not read.
_END_BLOCK = 1 << 16
_END_LIMIT = 16 << 20
# A zip member verify can read: not encrypted (bits 0 and 6 of its flags: traditional and
# strong), not patched data (bit 5), and compressed by a method zipfile decodes.
# Refused while listing, each as a finding, rather than failing with zipfile's own words
# (a ZipInfo's repr) when read: the other members are still read and checked.
_ENCRYPTED = 0x1 | 0x40
_PATCHED = 0x20
_ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})




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
        return with_folders({p: Member(p, e.kind, e.size) for p, e in self._entries.items()})

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
                # tarfile ends at the first block that is no header; tar -x may not.
                self._check_end(gz, tar.offset)
                break
            raw = _Raw(info.name, _tar_kind(info), info.size)
            if info.islnk():
                raw.code, raw.reason = "KB113", "is a hard link; a kit holds regular files only, and verify never follows a link"
            raws.append(raw)
            if raw.kind == FILE or info.type not in tarfile.SUPPORTED_TYPES:
                declared += info.size
            # The totals first: an archive whose members claim more than verify reads in all is
            # not read at all (exit 2), even when the claim is also more than it can hold.
            self._check_totals(len(raws), declared)
            if raw.kind == FILE or info.type not in tarfile.SUPPORTED_TYPES:
                end = info.offset_data + info.size
                if end > bound:
                    raw.code = "KB115"
                    raw.reason = f"declares {info.size:,} bytes, more than the archive can hold ({self.path.stat().st_size:,} compressed bytes); members after it cannot be found"
                    break
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

    def _check_end(self, gz: gzip.GzipFile, offset: int) -> None:
        """What follows the last member must be the zero blocks that end a tar, and then the end
        of the gzip stream, whole. Anything else is a header tarfile could not read (GNU tar skips
        it and extracts the members after it), members after the end (``tar -i`` extracts them),
        or a stream cut short or with bytes after it: none of which verify reads, so a finding."""
        where = f"after its last member (at byte {offset:,} of the tar)"
        try:
            gz.seek(offset)
            seen = 0
            while block := gz.read(_END_BLOCK):
                if block.count(0) != len(block):
                    self._findings.append(Finding("KB117", self.name, f"holds data {where} that is not the zero blocks that end a tar: a damaged header, or members tar -x may still extract; verify does not read them"))
                    return
                seen += len(block)
                if seen > _END_LIMIT:
                    self._findings.append(Finding("KB117", self.name, f"holds more than {_END_LIMIT:,} zero bytes {where}; verify does not read on"))
                    return
        except _STREAM_ERRORS as exc:
            self._findings.append(Finding("KB117", self.name, f"is damaged {where} ({_why(exc)})"))

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
            # A folder is what its name says ('/' at its end), as unzip and zipfile read it: a
            # member whose mode alone says folder is extracted as a file, so it is read as one.
            kind = DIR if info.is_dir() else FILE if not stat.S_IFMT(mode) or stat.S_ISDIR(mode) else _mode_kind(mode)
            raw = _Raw(unzip_name(info), kind, info.file_size, info)
            raws.append(raw)
            if kind != FILE:
                continue
            declared += info.file_size
            if info.flag_bits & _ENCRYPTED:
                raw.code, raw.reason = "KB111", "is encrypted; verify reads no encrypted member (kitbuild publish writes none)"
            elif info.flag_bits & _PATCHED:
                raw.code, raw.reason = "KB111", "is compressed patched data, a zip feature verify does not read"
            elif info.compress_type not in _ZIP_METHODS:
                raw.code, raw.reason = "KB111", f"is compressed by method {info.compress_type}, which verify does not read (it reads stored, deflate, bzip2 and lzma)"
            elif info.header_offset + info.compress_size > start_dir:
                raw.code, raw.reason = "KB115", f"declares {info.compress_size:,} compressed bytes, which run past the end of the archive's data"
            elif info.compress_type == zipfile.ZIP_STORED and info.file_size > info.compress_size:
                raw.code, raw.reason = "KB115", f"declares {info.file_size:,} bytes but holds {info.compress_size:,}"
            elif info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > info.compress_size * DEFLATE_RATIO + _SLACK:
                raw.code, raw.reason = "KB115", f"declares {info.file_size:,} bytes, more than its {info.compress_size:,} compressed bytes can hold"
        self._check_totals(len(infos), declared)
        self._check_layout(infos, raws, start_dir)
        return raws

    def _check_layout(self, infos: list[zipfile.ZipInfo], raws: list[_Raw], start_dir: int) -> None:
        """What a streaming reader of the same bytes would find that the central directory does
        not say (kitbuild.ziplayout)."""
        with open(self.path, "rb") as stream:
            reasons, gaps = local_mismatches(stream, infos, start_dir)
            after = end_gap(stream, self.path.stat().st_size)
        for raw in raws:
            if raw.kind == FILE and raw.code is None and raw.locator.filename in reasons:
                raw.code, raw.reason = "KB111", reasons[raw.locator.filename]
            elif raw.kind == DIR and raw.locator.filename in reasons:  # (a folder is never read: said of the archive)
                self._findings.append(Finding("KB111", self.name, f"holds the folder entry {raw.locator.filename!r}, which {reasons[raw.locator.filename]}"))
        if gaps:
            offset, length = gaps[0]
            more = f" (and {len(gaps) - 1:,} more such stretches)" if len(gaps) > 1 else ""
            self._findings.append(Finding("KB117", self.name, f"holds {length:,} bytes at byte {offset:,} that no member of its central directory covers{more}: a local entry a streaming reader would extract; verify does not read them"))
        if after:
            self._findings.append(Finding("KB117", self.name, f"holds {after:,} bytes after its end-of-central-directory record; verify does not read them"))

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


def open_archive(path: Path, label: str, limits: ArchiveLimits = ArchiveLimits()) -> KitFS:
    """The reader for the archive file at ``path``, recognised by its first bytes; ``label`` names
    it in messages (the path a user gave, or the URL it was fetched from)."""
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
