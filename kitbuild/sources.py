"""Listing the files a source contributes to a kit.

Files are listed in sorted order (never in the order a directory happens to list), filtered by
the source's include and exclude globs. A symlink is followed only while it stays inside its
source; one that points outside is refused by name, as are devices, FIFOs and sockets, and file
names a kit could not carry (not UTF-8, or holding a backslash or a line break, which SHA256SUMS
and index.json could not name plainly).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from kitbuild.config import Config, Source
from kitbuild.errors import ConfigError


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to publish: where it is read from and the kit path it gets."""

    src: str  # a plain string: a kit of 100,000 files holds 100,000 of these
    kit_path: str
    source: int


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over '/'-separated relative paths: '*' and '?' stay in one folder, '**' spans folders."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _where(source: Source, rel: str) -> str:
    # A name is the bench's: a line break in it would end the message's line, an escape
    # sequence would drive the terminal. Each such character is shown as its escape.
    shown = rel if rel.isprintable() else "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii") for c in rel)
    return f"sources[{source.index}] ({source.as_}): {shown}"


def _walk(source: Source) -> list[tuple[str, str]]:
    """(relative path, file to read) for every regular file under the source, sorted.

    The files are plain strings: a source of 100,000 files would hold 100,000 Path objects. The
    walk keeps its own stack, so no depth of folders can exhaust Python's; a folder is known by
    its device and inode, so a loop is found however it is made (a link, a bind mount).
    """
    found: list[tuple[str, str]] = []
    root = source.real
    excludes = [glob_regex(p) for p in source.exclude]
    # Each folder being listed, with the folders that hold it (a link back to one of those is a
    # loop) and the names still to look at. A folder reached twice by different names (a link
    # beside the folder it names) is listed under both.
    work: list[tuple[str, str, frozenset[tuple[int, int]], Iterator[str]]] = []

    def enter(folder: str, rel: str, holding: frozenset[tuple[int, int]]) -> None:
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            raise ConfigError(f"sources[{source.index}] ({source.as_}): a folder cannot be read: {rel or '.'} ({exc.strerror}).") from None
        work.append((folder, rel, holding, iter(names)))

    enter(str(source.path), "", frozenset([_identity(source, str(source.path))]))
    while work:
        # Each name in turn, as a recursive walk would take them: a folder is walked whole
        # before the names after it, so the first problem reported is the first in path order.
        folder, rel, holding, names = work[-1]
        name = next(names, None)
        if name is None:
            work.pop()
            continue
        child_rel = f"{rel}/{name}" if rel else name
        if excludes and any(r.match(child_rel) for r in excludes):
            # Skipped before it is looked at: the errors below tell the user to exclude it.
            continue
        # Strings, not Path objects, on this path: it runs once per file of the source.
        child = os.path.join(folder, name)
        if "\\" in name or "\n" in name or "\r" in name:
            raise ConfigError(f"{_where(source, child_rel)}: a file name with a backslash or a line break cannot be listed in SHA256SUMS; rename it or exclude it.")
        if not name.isascii():
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigError(f"{_where(source, child_rel)}: the file name is not UTF-8; rename it or exclude it.") from None
        try:
            info = os.lstat(child)
        except OSError as exc:
            raise ConfigError(f"{_where(source, child_rel)}: cannot be looked at ({exc.strerror}); exclude it.") from None
        if stat.S_ISLNK(info.st_mode):
            info, child = _followed(source, child, child_rel, root)  # read from the file it leads to
        if stat.S_ISDIR(info.st_mode):
            identity = (info.st_dev, info.st_ino)
            if identity in holding:
                raise ConfigError(
                    f"{_where(source, child_rel)}: leads back to a folder that holds it (a loop), so the source would never end; remove the link or exclude it."
                )
            enter(child, child_rel, holding | {identity})
        elif stat.S_ISREG(info.st_mode):
            found.append((child_rel, child))
        else:
            raise ConfigError(f"{_where(source, child_rel)}: is not a regular file (a device, FIFO or socket); exclude it.")
    found.sort()
    return found


def _identity(source: Source, folder: str) -> tuple[int, int]:
    try:
        info = os.stat(folder)
    except OSError as exc:
        raise ConfigError(f"sources[{source.index}] ({source.as_}): the folder cannot be read ({exc.strerror}).") from None
    return info.st_dev, info.st_ino


def _followed(source: Source, child: str, child_rel: str, root: Path) -> tuple[os.stat_result, str]:
    """What the symlink ``child`` leads to, and its path, if it stays inside its source and ends
    somewhere. A file is read from that path, and never through a link (kitbuild.commands.build):
    a link put in a file's place after the listing is refused, not followed out of the bench."""
    try:
        target = Path(os.path.realpath(child, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{_where(source, child_rel)}: is a symlink loop (following it never ends at a file or folder); remove it or exclude it.") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise ConfigError(f"{_where(source, child_rel)}: is a broken symlink; remove it or exclude it.") from None
        raise ConfigError(f"{_where(source, child_rel)}: is a symlink that cannot be followed ({exc.strerror}); remove it or exclude it.") from None
    if not (target == root or root in target.parents):
        raise ConfigError(f"{_where(source, child_rel)}: is a symlink that points outside its source; kitbuild refuses it. Copy the file in, or exclude the link.")
    try:
        return os.stat(child), str(target)
    except OSError as exc:
        raise ConfigError(f"{_where(source, child_rel)}: is a symlink that cannot be followed ({exc.strerror}); remove it or exclude it.") from None


def list_files(config: Config) -> list[SourceFile]:
    """Every file the kit will hold, sorted by kit path."""
    files: list[SourceFile] = []
    for source in config.sources:
        entries = _walk(source)
        unused = []
        for pattern in source.include:
            regex = glob_regex(pattern)
            if not any(regex.match(rel) for rel, _ in entries):
                unused.append(pattern)
        if unused:
            doc = config.document
            index = source.include.index(unused[0])
            raise ConfigError(
                f"{doc.where(['sources', source.index, 'include', index])}: sources[{source.index}].include[{index}]: "
                f"the glob {unused[0]!r} matches no file in that source. Fix the glob or remove it."
            )
        includes = [glob_regex(p) for p in source.include]
        excludes = [glob_regex(p) for p in source.exclude]
        for rel, path in entries:
            if includes and not any(r.match(rel) for r in includes):
                continue
            if any(r.match(rel) for r in excludes):
                continue
            files.append(SourceFile(path, f"{source.as_}/{rel}", source.index))
    files.sort(key=lambda f: f.kit_path)
    return files


def open_source(src: str, kit_path: str) -> BinaryIO:
    """The source file, opened as the listing found it: a regular file, never through a link (a
    followed link is listed as the file it leads to) and never waiting on a FIFO. What was put in
    its place, or took it away, while the build ran is refused (the message names the kit path
    only: the source's path is private)."""
    changed = f"{kit_path}: its source file changed while the build ran"
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ConfigError(f"{changed} (it is gone); build again once nothing writes to the bench.") from None
    except OSError as exc:
        raise ConfigError(f"{changed}, or cannot be read ({exc.strerror}); build again once nothing writes to the bench.") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"{changed} (it is no regular file now); build again once nothing writes to the bench.")
    return os.fdopen(fd, "rb")


def source_size(file: SourceFile) -> int:
    try:
        return os.stat(file.src).st_size
    except OSError:
        return 0  # gone since the listing: its copy says so (see open_source)
