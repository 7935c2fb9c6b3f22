"""Reading a private bench to propose the rules its kit needs (what ``kitbuild init`` writes).

A scan reads every file of the given folders once and collects three things a researcher would
otherwise have to find by hand:

- the absolute paths the records print that are not a folder's own path. A printed path whose
  tail names a file or folder inside one of the folders (``/scratch/u7/runs/lme/a0/run.json``
  when ``lme/a0/run.json`` is here) tells which prefix stands for that folder, so its ``map``
  entry can be proposed whole; the rest are grouped by their longest common folder and left for
  the researcher to decide;
- the host-like values in fields that name machines (``route``, ``host``, ...), in JSON, NDJSON,
  YAML and TSV files;
- the sha256 digests the records print that match no file here (candidates for
  ``external_digests``).

Nothing here decides for the researcher: every proposal carries the files and counts it rests on,
and :mod:`kitbuild.commands.init` writes them as comments beside each entry.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Iterator
from urllib.parse import unquote, urlsplit

import orjson
import yaml

from kitbuild.config import Source
from kitbuild.errors import ConfigError
from kitbuild.fileformat import is_binary
from kitbuild.matchers import DIGEST_RE
from kitbuild.lines import line_chunks
from kitbuild.yamlfile import load_records
from kitbuild.fileformat import format_of
from kitbuild.sources import _walk  # the build's own walk, so init lists (and refuses) exactly what build will
from kitbuild.sources import glob_regex

# Logs rarely belong in a kit and often print private paths, machine names and other runs'
# folders, and a version-control folder holds every file ever committed (one deleted from the
# work tree long ago too) and its authors' e-mail addresses: init proposes excluding them (the
# researcher deletes the line to publish them).
LOG_GLOBS = ("**/logs/**", "**/*.log")
VCS_GLOBS = ("**/.git/**", "**/.hg/**", "**/.svn/**")

# Keys whose values name a machine in the records benches write.
HOST_FIELDS = ("box", "host", "hostname", "machine", "node", "route", "server")

# An absolute POSIX path of two components or more, not the tail of a longer path or a URL, but
# where the rules read one (kitbuild.matchers): after a JSON escape ('\\n/scratch/u7/a' in a logged
# line, '\\u201c' a quote) and in a file URL, which the path rule rewrites scheme and all.
_PATH_RE = re.compile(rb"(?:(?<![A-Za-z0-9_.~/:\\-])|(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})|(?<=[Ff][Ii][Ll][Ee]://))(?:/[A-Za-z0-9._~+@%-]+){2,}")
# The same path percent-encoded, as a URL's query holds it ('?dir=%2Fscratch%2Fu7%2Fa'), which
# the rules rewrite too.
_ENCODED_PATH_RE = re.compile(rb"(?:%2[Ff][A-Za-z0-9._~+@-]+){2,}")
# A Windows path, as written, as JSON writes it (each '\' doubled) or with '/' for '\': a map
# key may be one, and matches all three. It is resolved and grouped as '/C:/Users/ada/...'.
_WINDOWS_PATH_RE = re.compile(rb"(?<![A-Za-z0-9_.~+-])([A-Za-z]:)((?:(?:\\{1,2}|/)[A-Za-z0-9._~+@%-]+){2,})")
_WINDOWS_SEPARATOR = re.compile(r"\\{1,2}|/")
_HOST_RE = re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$")
# Values host fields hold that name no machine.
_NOT_HOSTS = frozenset({"localhost", "local", "true", "false", "null", "none", "auto", "default"})
_AS_BAD = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = frozenset({"README.md", "index.html", "index.json", "provenance.json", "SHA256SUMS", "_templates"})
_BINARY_SNIFF = 8192
# Whole-document formats (JSON, YAML) are parsed for host fields only up to this size; larger
# files are still scanned line by line for paths and digests.
STRUCTURED_LIMIT = 64 << 20


@dataclass(frozen=True)
class BenchFolder:
    """One folder given to init, and the kit folder it is proposed to become."""

    index: int
    path: Path  # absolute, normalised, symlinks kept
    real: Path
    as_: str

    def absolute_forms(self) -> list[str]:
        return sorted({str(self.path), str(self.real)})


@dataclass
class MapProposal:
    """A path prefix records print and the kit folder it stands for (None: not found here)."""

    prefix: str
    kit_path: str | None
    printed: Counter[str] = field(default_factory=Counter)  # kit path of the record -> times
    examples: list[str] = field(default_factory=list)


@dataclass
class HostProposal:
    """A machine name found in a host-like field."""

    name: str
    fields: set[str] = field(default_factory=set)
    printed: Counter[str] = field(default_factory=Counter)
    short_of: str | None = None  # the full name this is the first label of


@dataclass
class DigestProposal:
    """A sha256 the records print that is the digest of no file here."""

    hex: str
    printed: Counter[str] = field(default_factory=Counter)


@dataclass
class BenchScan:
    """Everything init proposes for a set of folders."""

    folders: list[BenchFolder]
    files: list[tuple[str, Path]]  # (kit path, file), sorted by kit path
    maps: list[MapProposal]
    hosts: list[HostProposal]
    digests: list[DigestProposal]
    # folder index -> (the log globs that matched, how many files they left out)
    excluded: dict[int, tuple[tuple[str, ...], int]] = field(default_factory=dict)
    # kit path -> how often it prints a folder's own path (which the path rule maps without an entry)
    own_printed: Counter[str] = field(default_factory=Counter)


def as_name(folder: Path, taken: set[str]) -> str:
    """A kit folder name for ``folder``: its own name, made valid and unique."""
    name = _AS_BAD.sub("-", folder.name).lstrip("._-") or "records"
    if name in _RESERVED:
        name = f"{name}-records"
    unique, n = name, 2
    while unique in taken:
        unique = f"{name}-{n}"
        n += 1
    taken.add(unique)
    return unique


def bench_folders(paths: Iterable[str | os.PathLike[str]]) -> list[BenchFolder]:
    """The folders to scan, checked the way the config loader will check them."""
    folders: list[BenchFolder] = []
    taken: set[str] = set()
    for i, given in enumerate(paths):
        path = Path(os.path.normpath(Path(given).absolute()))
        if not path.is_dir():
            raise ConfigError(f"SOURCE {i + 1}: no such folder. Give the bench folders whose records the kit will publish.")
        folders.append(BenchFolder(i, path, path.resolve(), as_name(path, taken)))
    for a in folders:
        for b in folders:
            if a.index != b.index and (a.real == b.real or b.real in a.real.parents):
                raise ConfigError(
                    f"SOURCE {a.index + 1} lies inside SOURCE {b.index + 1}; a file would be published twice. Give each folder once."
                )
    return folders


def host_names(value: str) -> list[str]:
    """The machine names a field value holds: a bare name, ``name:port`` or a URL's host."""
    text = value.strip()
    if "://" in text:
        try:
            host = urlsplit(text).hostname or ""
        except ValueError:
            return []
    else:
        host = text
        if host.count(":") == 1 and host.rsplit(":", 1)[1].isdigit():
            host = host.rsplit(":", 1)[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        return [] if ip.is_loopback or ip.is_unspecified else [host]
    if not _HOST_RE.match(host) or host.lower() in _NOT_HOSTS:
        return []
    return [host]


def _walk_values(value: Any, key: str | None, found: list[tuple[str, str]]) -> None:
    """(field, value) for every string under a host-like key, at any depth.

    The walk keeps its own stack: a record nested thousands deep must not exhaust Python's."""
    stack: list[tuple[Any, str | None]] = [(value, key)]
    while stack:
        value, key = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, str(k)) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, key) for v in reversed(value))
        elif isinstance(value, str) and key is not None and key.lower() in HOST_FIELDS:
            found.append((key, value))


def _structured_hosts(path: Path, kit_path: str, size: int) -> list[tuple[str, str]]:
    """(field, value) pairs under host-like keys in a JSON, NDJSON, YAML or TSV file."""
    fmt = format_of(kit_path)
    found: list[tuple[str, str]] = []
    # A record that does not parse is still scanned as text for paths and digests; its host
    # fields just cannot be found by key, which the leak-gate comments then reveal.
    if fmt == "ndjson":
        with open(path, "rb") as stream:
            for line in stream:
                try:
                    _walk_values(orjson.loads(line), None, found)
                except orjson.JSONDecodeError:
                    continue
    elif fmt in ("json", "yaml") and size <= STRUCTURED_LIMIT:
        data = path.read_bytes()
        try:
            if fmt == "json":
                _walk_values(orjson.loads(data), None, found)
            else:
                for doc in load_records(data):
                    _walk_values(doc, None, found)
        except (orjson.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError):
            pass
    elif fmt == "tsv":
        with open(path, "rb") as stream:
            header = stream.readline().rstrip(b"\r\n").split(b"\t")
            columns = [(i, h.decode("utf-8", "replace")) for i, h in enumerate(header) if h.decode("utf-8", "replace").lower() in HOST_FIELDS]
            if columns:
                for line in stream:
                    cells = line.rstrip(b"\r\n").split(b"\t")
                    for i, name in columns:
                        if i < len(cells):
                            found.append((name, cells[i].decode("utf-8", "replace")))
    return found


@dataclass
class _FileFacts:
    sha256: str
    paths: Counter[str]
    digests: Counter[str]
    hosts: list[tuple[str, str]]


def _read_file(path: Path, kit_path: str) -> _FileFacts:
    sha = hashlib.sha256()
    paths: Counter[str] = Counter()
    digests: Counter[str] = Counter()
    size = 0
    with open(path, "rb") as stream:
        head = stream.read(_BINARY_SNIFF)
        binary = is_binary(head)
        chunks: Iterator[bytes] = line_chunks(stream, first=head)
        for chunk in chunks:
            sha.update(chunk)
            size += len(chunk)
            if binary:
                continue
            # (JSON's escaped '/', as PHP writes every one, read as the rules read it.)
            for m in _PATH_RE.finditer(chunk.replace(b"\\/", b"/") if b"\\/" in chunk else chunk):
                paths[m.group(0).decode("utf-8", "replace").rstrip(".")] += 1
            if b"%2" in chunk:
                for m in _ENCODED_PATH_RE.finditer(chunk):
                    paths[unquote(m.group(0).decode("ascii")).rstrip(".")] += 1
            if b":" in chunk:
                for m in _WINDOWS_PATH_RE.finditer(chunk):
                    paths["/" + m.group(1).decode("ascii") + _WINDOWS_SEPARATOR.sub("/", m.group(2).decode("ascii")).rstrip(".")] += 1
            for m in DIGEST_RE.finditer(chunk):
                digests[m.group(1).decode("ascii").lower()] += 1
    hosts = [] if binary else _structured_hosts(path, kit_path, size)
    return _FileFacts(sha.hexdigest(), paths, digests, hosts)


def _as_printed(path: str) -> str:
    """A path as a map key writes it: '/C:/Users/ada' (see _WINDOWS_PATH_RE) as 'C:\\Users\\ada'."""
    if len(path) > 3 and path[2] == ":" and path[3] == "/":
        return path[1:].replace("/", "\\")
    return path


# The operating system's own folders: a path under one that names nothing in the bench (a
# traceback's '/usr/lib/python3.11/site.py', 'C:\Windows\System32') names no person or
# machine, and the leak gate passes it; init proposes no map entry for it.
_SYSTEM_ROOTS = frozenset({"usr", "bin", "sbin", "lib", "lib32", "lib64", "etc", "proc", "sys", "dev"})
_WINDOWS_SYSTEM = frozenset({"windows", "programdata"})


def _system(path: str) -> bool:
    parts = path.split("/")
    if len(parts) > 2 and len(parts[1]) == 2 and parts[1][1] == ":":
        return parts[2].lower() in _WINDOWS_SYSTEM
    # (FreeBSD's home folders are under /usr/home.)
    return len(parts) > 1 and parts[1] in _SYSTEM_ROOTS and parts[1:3] != ["usr", "home"]


def _under(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` or lies below it, at a path boundary."""
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _resolve(path: str, trees: list[tuple[BenchFolder, set[str]]]) -> tuple[str, BenchFolder] | None:
    """The prefix of ``path`` that stands for one of the folders, judged by the longest tail
    of the path that names an entry in that folder.

    A tail of one component (a bare file name) is taken only when the prefix ends in the
    folder's own name: ``/x/lme/run.json`` for a folder ``lme`` holding ``run.json``, but not
    ``/opt/models/config.json`` for any folder that happens to hold a ``config.json``.
    """
    parts = PurePosixPath(path).parts[1:]
    for k in range(1, len(parts)):
        tail = "/".join(parts[k:])
        hits = [folder for folder, entries in trees if tail in entries]
        if not hits:
            continue
        if len(parts) - k == 1:
            hits = [f for f in hits if f.path.name == parts[k - 1] or f.real.name == parts[k - 1]]
            if not hits:
                continue
        named = [f for f in hits if f.path.name == parts[k - 1] or f.real.name == parts[k - 1]]
        return "/" + "/".join(parts[:k]), (named or hits)[0]
    return None


def _common_folder(paths: list[str]) -> str:
    """The longest folder every path lies in; a single path's own folder."""
    if len(paths) == 1:
        return str(PurePosixPath(paths[0]).parent)
    common: list[str] = []
    for column in zip(*(PurePosixPath(p).parts for p in paths)):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    return str(PurePosixPath(*common))


def _group_unresolved(paths: Iterable[str], protected: list[str]) -> dict[str, list[str]]:
    """Unresolved paths grouped under their longest common folder.

    Paths are first grouped by their first two folders below the root (``/scratch/u7``), so
    unrelated trees never merge into ``/``; each group is named by the longest folder all its
    paths share. A group whose folder would hold one of the sources or a resolved prefix is
    split one level deeper, so that a proposal never stands for more than the records print.
    """
    out: dict[str, list[str]] = {}

    def covers(folder: str) -> bool:
        return any(_under(x, folder) for x in protected)

    def place(members: list[str], depth: int) -> None:
        groups: dict[tuple[str, ...], list[str]] = {}
        for p in members:
            parts = PurePosixPath(p).parts
            groups.setdefault(parts[: min(depth, len(parts) - 1)], []).append(p)
        for key, group in groups.items():
            folder = _common_folder(group)
            if not covers(folder):
                out.setdefault(folder, []).extend(group)
            elif len(group) > 1 and len(key) == depth:
                place(group, depth + 1)
            else:
                for p in group:
                    parent = str(PurePosixPath(p).parent)
                    out.setdefault(p if covers(parent) else parent, []).append(p)

    place(sorted(paths), 3)
    return out


def scan_bench(paths: Iterable[str | os.PathLike[str]]) -> BenchScan:
    """Scan the folders ``paths`` and collect what their kit.yaml will need."""
    folders = bench_folders(paths)
    files: list[tuple[str, Path]] = []
    trees: list[tuple[BenchFolder, set[str]]] = []
    excluded: dict[int, tuple[tuple[str, ...], int]] = {}
    log_res = [(g, glob_regex(g)) for g in LOG_GLOBS + VCS_GLOBS]
    for folder in folders:
        source = Source(folder.index, folder.path, folder.real, folder.as_, None, (), (), str(folder.path))
        entries: set[str] = set()
        matched: set[str] = set()
        left_out = 0
        for rel, name in _walk(source):
            path = Path(name)
            hits = [g for g, r in log_res if r.match(rel)]
            if hits:
                matched.update(hits)
                left_out += 1
                continue
            files.append((f"{folder.as_}/{rel}", path))
            parts = rel.split("/")
            entries.update("/".join(parts[:j]) for j in range(1, len(parts) + 1))
        trees.append((folder, entries))
        if left_out:
            excluded[folder.index] = (tuple(g for g in LOG_GLOBS + VCS_GLOBS if g in matched), left_out)
    files.sort()

    own = [form for folder in folders for form in folder.absolute_forms()]
    file_digests: set[str] = set()
    printed_paths: dict[str, Counter[str]] = {}
    printed_digests: dict[str, Counter[str]] = {}
    hosts: dict[str, HostProposal] = {}
    own_printed: Counter[str] = Counter()
    for kit_path, path in files:
        facts = _read_file(path, kit_path)
        file_digests.add(facts.sha256)
        for p, n in facts.paths.items():
            if any(_under(p, form) for form in own):
                own_printed[kit_path] += n
            else:
                printed_paths.setdefault(p, Counter())[kit_path] += n
        for d, n in facts.digests.items():
            printed_digests.setdefault(d, Counter())[kit_path] += n
        for key, value in facts.hosts:
            for name in host_names(value):
                proposal = hosts.setdefault(name, HostProposal(name))
                proposal.fields.add(key)
                proposal.printed[kit_path] += 1

    # The short form of a full host name (gpu-b17 of gpu-b17.cluster.example.net) is printed
    # on its own in logs and notes often enough to propose it beside the full name.
    for name in sorted(hosts):
        short = name.split(".", 1)[0]
        if "." in name and not _is_ip(name) and short not in hosts and _HOST_RE.match(short):
            hosts[short] = HostProposal(short, set(hosts[name].fields), Counter(), short_of=name)

    maps: dict[str, MapProposal] = {}
    unresolved: Counter[str] = Counter()
    for p in sorted(printed_paths):
        hit = _resolve(p, trees)
        if hit is None:
            unresolved[p] = sum(printed_paths[p].values())
            continue
        prefix, folder = hit
        mapping = maps.setdefault(prefix, MapProposal(prefix, folder.as_))
        mapping.printed.update(printed_paths[p])
        mapping.examples.append(p)
    still: Counter[str] = Counter()
    for p, n in unresolved.items():
        covering = [m for m in maps if _under(p, m)]
        if covering:
            # A bare folder path (or a path to a file not here) under a prefix resolved by another path.
            longest = max(covering, key=len)
            maps[longest].printed.update(printed_paths[p])
            maps[longest].examples.append(p)
        elif not _system(p):
            still[p] = n
    for prefix, members in _group_unresolved(still, own + list(maps)).items():
        mapping = maps.setdefault(prefix, MapProposal(prefix, None))
        for p in members:
            mapping.printed.update(printed_paths[p])
            mapping.examples.append(p)

    for mapping in maps.values():
        mapping.prefix = _as_printed(mapping.prefix)
        mapping.examples = [_as_printed(p) for p in mapping.examples]
    digests = [
        DigestProposal(d, printed_digests[d]) for d in sorted(printed_digests) if d not in file_digests
    ]
    return BenchScan(
        folders=folders,
        files=files,
        maps=[maps[k] for k in sorted(maps)],
        # A short form follows the full name it was taken from.
        hosts=sorted(hosts.values(), key=lambda h: (h.short_of or h.name, h.short_of is not None)),
        digests=digests,
        excluded=excluded,
        own_printed=own_printed,
    )


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
