"""A zip's layout, checked against its central directory: what another reader of the same bytes
would find that zipfile does not.

zipfile (and unzip) read a zip from its central directory, at its end; a streaming reader (Java's
ZipInputStream, ``bsdtar`` from a pipe, a browser's unzip library) reads it front to back, by its
local headers. The two can be made to disagree: a local entry no central directory entry names, a
local header whose method, CRC or sizes differ from the central directory's, bytes after the
end-of-central-directory record. And a name is read as unzip reads it (:func:`unzip_name`). None of it is what ``kitbuild publish`` writes, and verify reads
none of it, so each is a finding rather than a kit that passes with files another tool extracts.
"""

from __future__ import annotations

import struct
from typing import BinaryIO, Sequence
from zipfile import ZipInfo

_LOCAL = b"PK\x03\x04"
_END = b"PK\x05\x06"
_DESCRIPTOR = b"PK\x07\x08"
_LOCAL_SIZE = 30
_END_SIZE = 22
_DESCRIBED = 0x08  # flag bit 3: CRC and sizes follow the data, in a data descriptor
_ZIP64 = 0xFFFFFFFF
_UTF8 = 0x800  # flag bit 11: the name is UTF-8
_UNIX = 3  # create_system of a zip made on Unix


def unzip_name(info: ZipInfo) -> str:
    """A member's name as unzip extracts it. Without the UTF-8 flag zipfile reads a name as code
    page 437, as DOS wrote it; but a zip made on Unix (Info-ZIP's ``zip -r``, which sets no flag)
    holds the file's own bytes, which unzip writes back as they are: 'café' is no 'caf├⌐'. Bytes
    that are not UTF-8 stay lone surrogates, which verify refuses as a name (KB112)."""
    if info.flag_bits & _UTF8 or info.create_system != _UNIX or info.orig_filename.isascii():
        return info.filename
    return info.orig_filename.encode("cp437").decode("utf-8", "surrogateescape")


def end_gap(stream: BinaryIO, size: int) -> int:
    """How many bytes follow the end-of-central-directory record and its comment (0 for a zip
    as any zip tool writes it). zipfile, like unzip, looks for the record in the last 64 KiB and
    takes what follows it for granted."""
    tail_size = min(size, _END_SIZE + 0xFFFF + 1024)
    stream.seek(size - tail_size)
    tail = stream.read(tail_size)
    at = tail.rfind(_END)
    while at >= 0:
        if at + _END_SIZE <= len(tail):
            comment: int = struct.unpack_from("<H", tail, at + 20)[0]
            if at + _END_SIZE + comment <= len(tail):
                return len(tail) - (at + _END_SIZE + comment)
        at = tail.rfind(_END, 0, at)
    return 0  # (zipfile found a record; this reading of it did not: nothing to add)


def local_mismatches(stream: BinaryIO, infos: Sequence[ZipInfo], start_dir: int) -> tuple[dict[str, str], list[tuple[int, int]]]:
    """(reasons by member name, gaps): each member whose local header disagrees with its central
    directory entry, and each stretch of bytes before the central directory that no listed member
    covers, as (offset, length); a member's data descriptor, where its flags say it has one, is
    part of it."""
    reasons: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for info in infos:
        stream.seek(info.header_offset)
        header = stream.read(_LOCAL_SIZE)
        if len(header) < _LOCAL_SIZE or header[:4] != _LOCAL:
            reasons[info.filename] = "has no local header where the central directory places it"
            continue
        flags, method, crc, csize, usize, names, extra = struct.unpack_from("<2H4x3I2H", header, 6)
        end = info.header_offset + _LOCAL_SIZE + names + extra + info.compress_size
        described = bool(flags & _DESCRIBED)
        # (zipfile compares a file's names when it opens it, but never a folder's, which it does not open.)
        name = info.orig_filename.encode("utf-8" if info.flag_bits & _UTF8 else "cp437", "surrogateescape")
        differs = [
            what
            for what, local, central in (
                ("name", stream.read(names), name),
                ("compression method", method, info.compress_type),
                ("flags", flags & ~_DESCRIBED & 0xFF, info.flag_bits & ~_DESCRIBED & 0xFF),
            )
            if local != central
        ]
        if not described:
            differs += [
                what
                for what, local, central in (("CRC", crc, info.CRC), ("compressed size", csize, info.compress_size), ("size", usize, info.file_size))
                # A zip64 member keeps its sizes in an extra field; its CRC is still here.
                if local != central and (what == "CRC" or local != _ZIP64)
            ]
        if differs:
            reasons[info.filename] = f"has a local header whose {', '.join(differs)} {'differs' if len(differs) == 1 else 'differ'} from its central directory entry (a streaming reader would read it otherwise); it is never read"
        if described:
            end += _descriptor_size(stream, end, zip64=info.compress_size >= _ZIP64 or info.file_size >= _ZIP64)
        spans.append((info.header_offset, end))
    return reasons, _gaps(spans, start_dir)


def _descriptor_size(stream: BinaryIO, at: int, zip64: bool) -> int:
    stream.seek(at)
    signed = stream.read(4) == _DESCRIPTOR
    return (4 if signed else 0) + (20 if zip64 else 12)


def _gaps(spans: list[tuple[int, int]], start_dir: int) -> list[tuple[int, int]]:
    gaps = []
    covered = 0
    for start, end in sorted(spans):
        if start > covered:
            gaps.append((covered, start - covered))
        covered = max(covered, end)
    if start_dir > covered:
        gaps.append((covered, start_dir - covered))
    return gaps
