"""Reproducible archives of a kit: the same kit gives the same bytes, wherever and whenever.

Everything an archive format would take from the machine or the clock is fixed instead:
members are sorted and sit under one top folder named after the kit; every mtime is midnight
UTC of the kit's own date (provenance.json's ``date``, the only date a kit carries); owners are
0 with empty names; modes are 0644 for files and 0755 for folders. A tar is written in GNU format
(a long name goes in a ``././@LongLink`` member, which carries no time), never pax, whose headers
can carry access and change times; its gzip header has mtime 0 and no file name. A zip has a
fixed ``date_time`` and no extra fields.
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import os
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator

FORMATS = {"tar.gz": ".tar.gz", "zip": ".zip"}
FILE_MODE = 0o644
DIR_MODE = 0o755
_COPY = 1 << 20


@dataclass(frozen=True)
class ArchiveMember:
    """One file to archive: its kit path and where it is read from."""

    path: str
    src: Path
    size: int


def epoch_of(date: str) -> int:
    """Midnight UTC of ``date`` (YYYY-MM-DD), in seconds since the epoch."""
    day = datetime.date.fromisoformat(date)
    return int(datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.timezone.utc).timestamp())


def _folders(members: list[ArchiveMember]) -> list[str]:
    """Every folder the members lie in, so an extracted tree gets the same modes everywhere."""
    found: set[str] = set()
    for m in members:
        parts = m.path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            found.add("/".join(parts[:i]))
    return sorted(found)


def _entries(top: str, members: list[ArchiveMember]) -> Iterator[tuple[str, ArchiveMember | None]]:
    """(archive name, member or None for a folder), sorted by name."""
    names: list[tuple[str, ArchiveMember | None]] = [(top + "/", None)]
    names += [(f"{top}/{folder}/", None) for folder in _folders(members)]
    names += [(f"{top}/{m.path}", m) for m in members]
    return iter(sorted(names, key=lambda item: item[0]))


def write_tar_gz(stream: IO[bytes], top: str, members: list[ArchiveMember], mtime: int) -> None:
    """Write a reproducible .tar.gz of ``members`` under ``top/`` to ``stream``."""
    # filename='' keeps the name out of the gzip header; mtime=0 keeps the clock out.
    with gzip.GzipFile(filename="", mode="wb", fileobj=stream, compresslevel=9, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8") as tar:
            for name, member in _entries(top, members):
                info = tarfile.TarInfo(name.rstrip("/"))
                info.mtime = mtime
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if member is None:
                    info.type = tarfile.DIRTYPE
                    info.mode = DIR_MODE
                    tar.addfile(info)
                    continue
                info.type = tarfile.REGTYPE
                info.mode = FILE_MODE
                info.size = member.size
                with open(member.src, "rb") as src:
                    tar.addfile(info, src)


def write_zip(stream: IO[bytes], top: str, members: list[ArchiveMember], date: datetime.date) -> None:
    """Write a reproducible .zip of ``members`` under ``top/`` to ``stream``."""
    stamp = (date.year, date.month, date.day, 0, 0, 0)
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, member in _entries(top, members):
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.create_system = 3  # unix, so the modes below are read as modes
            if member is None:
                info.external_attr = (0o040000 | DIR_MODE) << 16 | 0x10
                archive.writestr(info, b"")
                continue
            info.external_attr = (0o100000 | FILE_MODE) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info.file_size = member.size
            with open(member.src, "rb") as src, archive.open(info, "w", force_zip64=member.size >= zipfile.ZIP64_LIMIT) as dst:
                while block := src.read(_COPY):
                    dst.write(block)


def sha256_line(path: Path) -> bytes:
    """``<hex>  <file name>\\n``, the line ``sha256sum -c`` reads, for the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(_COPY):
            digest.update(block)
    return f"{digest.hexdigest()}  {path.name}\n".encode("utf-8")


def write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write ``path`` through a temporary file beside it, so a failure leaves no half archive."""
    tmp = path.with_name(f".{path.name}.kitbuild-{os.getpid()}")
    try:
        with open(tmp, "wb") as stream:
            write(stream)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
