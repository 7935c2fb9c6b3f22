"""How figures read a kit: one small interface for file access, and the parsers on top of it.

Every byte a recount reads comes through :class:`KitFiles`, so the build (a folder it has just
written) and ``kitbuild verify`` (a kit read through its own guarded file system) can hand in
different readers without a recount knowing. :class:`FolderFiles` is the plain folder reader.

:class:`KitReader` parses each file once per evaluation: several figures usually read the same
row file, and the row files are the big ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Protocol

import orjson

from kitbuild.errors import KitbuildError

from kitbuild.figures.pointer import PointerMiss, a_kind, resolve, tokens


class Unreadable(Exception):
    """A file a figure names cannot be used; the message says why, naming the kit path."""


class Changed(Unreadable):
    """A file's bytes are not the ones the kit's pass hashed (see :class:`CheckedFiles`)."""


class KitFiles(Protocol):
    """Read access to a kit's files by kit path (``folder/sub/file.ndjson``)."""

    def open(self, path: str) -> BinaryIO:
        """The file's bytes; raises FileNotFoundError (or a KitbuildError saying why) when it cannot."""
        ...


def bad_kit_path(path: str) -> str | None:
    """Why ``path`` cannot name a file inside a kit, or None when it can."""
    if not path or path.startswith("/") or "\\" in path or "\x00" in path:
        return "a kit path is relative, with '/' between folders"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "a kit path has no empty, '.' or '..' parts"
    return None


class FolderFiles:
    """A kit that is a folder on disk. Refuses paths that would leave it, symlinks included."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    def open(self, path: str) -> BinaryIO:
        if bad_kit_path(path):
            raise FileNotFoundError(path)
        full = self.root.joinpath(*path.split("/"))
        # A symlink anywhere on the way could point outside the kit; a figure never follows one.
        probe = self.root
        for part in path.split("/"):
            probe = probe / part
            if probe.is_symlink():
                raise FileNotFoundError(path)
        if not full.is_file():
            raise FileNotFoundError(path)
        return full.open("rb")


# What the build writes beside the records: written from the figures, so no figure reads them.
GENERATED = frozenset({"index.json", "provenance.json", "README.md", "index.html", "SHA256SUMS"})
GENERATED_FOLDER = "_templates"


class NotARecord(KitbuildError):
    """A figure names a file the build writes, not a record (the same in a build and in verify)."""


class RecordFiles:
    """A kit's record files only, read through ``kit`` (a folder path, or any :class:`KitFiles`).

    The build counts figures before it writes index.json, provenance.json and the pages, and a
    reader's verify must see the same files, so both refuse the files the build writes.
    """

    def __init__(self, kit: "str | Path | KitFiles") -> None:
        self.kit: KitFiles = FolderFiles(kit) if isinstance(kit, (str, Path)) else kit

    def open(self, path: str) -> BinaryIO:
        if path in GENERATED or path.split("/", 1)[0] == GENERATED_FOLDER:
            raise NotARecord(f"{path}: is written by the build, not a record file; a figure reads record files only")
        return self.kit.open(path)


class CheckedFiles:
    """Files read through ``kit``, each checked against the sha256 the kit's one pass read it with
    (``hashed(path)``; None where it has none). A figure is recounted after that pass, from a
    second read: a file that changed in between (a server that serves a hosted kit's row file
    one way to the pass and another way to the figures) must not back a figure the kit's own
    bytes do not. The check is made when the reader reaches the file's end."""

    def __init__(self, kit: KitFiles, hashed: Callable[[str], str | None]) -> None:
        self.kit = kit
        self.hashed = hashed

    def open(self, path: str) -> BinaryIO:
        stream = self.kit.open(path)
        expected = self.hashed(path)
        return stream if expected is None else io.BufferedReader(_Hashing(stream, path, expected), buffer_size=256 << 10)


class _Hashing(io.RawIOBase):
    def __init__(self, stream: BinaryIO, path: str, expected: str) -> None:
        self.stream, self.path, self.expected = stream, path, expected
        self.hash = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        if not data:
            now = self.hash.hexdigest()
            if now != self.expected:
                raise Changed(f"{self.path}: changed while the kit was checked (its sha256 was {self.expected[:12]}…, then {now[:12]}…); check the kit again")
            return 0
        self.hash.update(data)
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


class MemoryFiles:
    """A kit held as a dict of kit path -> bytes; for tests and for kits built in memory."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)

    def open(self, path: str) -> BinaryIO:
        if path not in self.files:
            raise FileNotFoundError(path)
        return io.BytesIO(self.files[path])


@dataclass(frozen=True)
class Row:
    """One row of an NDJSON or TSV file: its line number and its fields."""

    line: int
    data: Any  # a dict; a TSV row maps column name -> cell text


@dataclass(frozen=True)
class Rows:
    """A row file's rows in file order, and the file's format (``ndjson`` or ``tsv``)."""

    path: str
    format: str
    rows: tuple[Row, ...]
    columns: tuple[str, ...] | None = None  # a TSV file's header


def row_format(path: str) -> str:
    """``ndjson``, ``tsv`` or ``json``, from the file name; Unreadable otherwise."""
    name = path.rsplit("/", 1)[-1].lower()
    for suffix, fmt in ((".ndjson", "ndjson"), (".jsonl", "ndjson"), (".tsv", "tsv"), (".json", "json")):
        if name.endswith(suffix):
            return fmt
    raise Unreadable(f"{path}: kitbuild reads .json, .ndjson, .jsonl and .tsv files, and cannot tell this file's format from its name")


@contextlib.contextmanager
def _reading(path: str) -> Iterator[None]:
    """A file opened but not readable to its end (an archive member whose data is damaged or cut
    short) is one the figure cannot be recounted from, like one that cannot be opened."""
    try:
        yield
    except OSError as exc:
        raise Unreadable(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _lines(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    for number, raw in enumerate(stream, 1):
        yield number, raw.rstrip(b"\r\n")


class KitReader:
    """Parsed files of one kit, each read once."""

    def __init__(self, files: KitFiles) -> None:
        self.files = files
        self._json: dict[str, Any] = {}
        self._rows: dict[str, Rows] = {}

    def _open(self, path: str) -> BinaryIO:
        why = bad_kit_path(path)
        if why:
            raise Unreadable(f"{path!r} is not a kit path ({why})")
        try:
            return self.files.open(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise Unreadable(f"{path}: no such file in the kit") from None
        except OSError as exc:
            raise Unreadable(f"{path}: cannot be read ({exc.strerror})") from None
        except KitbuildError as exc:
            # A guarded reader (kitbuild.kitfs) says itself why a member cannot be opened.
            raise Unreadable(exc.message) from None

    def json(self, path: str) -> Any:
        """A JSON file's parsed content."""
        if path not in self._json:
            if row_format(path) != "json":
                raise Unreadable(f"{path}: a value is read from a .json file, or from a row of an .ndjson or .tsv file with 'row'")
            with self._open(path) as stream, _reading(path):
                data = stream.read()
            try:
                self._json[path] = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise Unreadable(f"{path}: is not valid JSON ({exc.args[0].split(':')[0]})") from None
        return self._json[path]

    def rows(self, path: str) -> Rows:
        """An NDJSON or TSV file's rows."""
        if path not in self._rows:
            fmt = row_format(path)
            if fmt == "json":
                raise Unreadable(f"{path}: rows are read from an .ndjson, .jsonl or .tsv file, one row a line")
            with self._open(path) as stream, _reading(path):
                self._rows[path] = _parse_tsv(path, stream) if fmt == "tsv" else _parse_ndjson(path, stream)
        return self._rows[path]


def _parse_ndjson(path: str, stream: BinaryIO) -> Rows:
    rows = []
    for number, raw in _lines(stream):
        if not raw.strip():
            continue
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise Unreadable(f"{path}:{number}: the line is not valid JSON") from None
        if not isinstance(data, dict):
            raise Unreadable(f"{path}:{number}: the row is {a_kind(data)}, not an object")
        rows.append(Row(number, data))
    return Rows(path, "ndjson", tuple(rows))


def _parse_tsv(path: str, stream: BinaryIO) -> Rows:
    columns: tuple[str, ...] | None = None
    rows = []
    for number, raw in _lines(stream):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable(f"{path}:{number}: the line is not UTF-8 text") from None
        if columns is None:
            columns = tuple(text.split("\t"))
            if len(set(columns)) != len(columns):
                raise Unreadable(f"{path}:1: the header names a column twice")
            continue
        if not text:
            continue
        cells = text.split("\t")
        if len(cells) != len(columns):
            raise Unreadable(f"{path}:{number}: the row has {len(cells)} cells; the header has {len(columns)} columns")
        rows.append(Row(number, dict(zip(columns, cells))))
    if columns is None:
        raise Unreadable(f"{path}: is empty; a TSV file starts with a header line")
    return Rows(path, "tsv", tuple(rows), columns)


def field(rows: Rows, row: Row, pointer: str) -> Any:
    """The value at ``pointer`` in ``row``; Unreadable naming file, line and pointer when absent."""
    if rows.format == "tsv" and len(tokens(pointer)) != 1:
        raise Unreadable(f"{rows.path}: a TSV column is named by a one-step pointer such as '/type', not {pointer!r}")
    try:
        return resolve(row.data, pointer)
    except PointerMiss as miss:
        what = "no column" if rows.format == "tsv" else miss.why
        if rows.format == "tsv":
            return _raise(f"{rows.path}: {what} {tokens(pointer)[0]!r}")
        return _raise(f"{rows.path}:{row.line}: {pointer} does not resolve: {what}")


def _raise(message: str) -> Any:
    raise Unreadable(message)


def value_at(path: str, document: Any, pointer: str) -> Any:
    """The value at ``pointer`` in a parsed JSON file; Unreadable naming the file when absent."""
    try:
        return resolve(document, pointer)
    except PointerMiss as miss:
        return _raise(f"{path}: {pointer} does not resolve: {miss.why}")
