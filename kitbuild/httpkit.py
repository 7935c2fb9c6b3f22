"""A kit where it is hosted: ``kitbuild verify https://host/path/kit/`` reads it over HTTP(S).

A web server cannot be listed, and a listing scraped from a page would be the server's claim, not
the kit's: the files of a hosted kit are those its index.json names, plus the files a build writes
beside it that index.json does not list (provenance.json and the pages). Each is fetched with
urllib, once, when the checks open it, and the URL it comes from is distrusted like an archive
member's name:

- a kit path is fetched only when it is a plain kit path (:func:`~kitbuild.kitview.refusal`), also
  once percent-decoded, and its URL is the kit's base URL with the quoted path appended: nothing
  outside the base URL is ever requested;
- a redirect is followed only to the same scheme and host and under the base URL; any other is an
  error naming where it pointed;
- every request has a time-out; a response is read to at most the size index.json declares plus
  one byte, so a server that sends more is cut off and named (KB111), never read to its end.

A URL ending in .tar.gz, .tgz or .zip names an archive: it is fetched once, into a temporary file
removed when verify ends (zip's directory sits at its end, and gzip rewinds), and read in place by
:mod:`kitbuild.archivekit`.

Errors name the URL: exit 2 when index.json itself cannot be read, and for any other file the
finding an unreadable file gets in a folder (KB111).
"""

from __future__ import annotations

import errno
import io
import shutil
import socket
import ssl
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, BinaryIO, Iterator, cast
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from kitbuild.findings import Finding
from kitbuild.kitview import FILE, ArchiveLimits, KitFS, Member, MemberError, NotAKitError, refusal, with_folders

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")
DEFAULT_TIMEOUT = 30.0
INDEX_LIMIT = 512 << 20  # index.json, read whole before anything else
DOC_LIMIT = 64 << 20  # provenance.json and a page (the sandbox renders no page larger)
MAX_WORKERS = 8  # fetches at once: a small server's listen backlog is 5 to 128
# The files the verifying process itself reads are kept, up to these sizes: the figures and the
# lines of findings read some files again after they were observed, and the network is slow.
KEEP_MEMBER = 8 << 20
KEEP_TOTAL = 128 << 20
_UNLISTED_DOCS = ("provenance.json", "README.md", "index.html")  # kitbuild.index.UNLISTED, bar index.json
_CHUNK = 1 << 16
# The time-out bounds each wait for data, and not a server that sends a byte a second: past its
# first time-out's worth of time, a response that averages less than this is given up.
_MIN_RATE = 16 << 10


class FetchError(OSError):
    """A URL that could not be read: ``strerror`` names it and says why; ``status`` is the HTTP status, if one came."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(errno.EIO, message)
        self.status = status


class _OffBase(Exception):
    """A redirect that points outside the kit's base URL."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same scheme and host, under the base URL."""

    def __init__(self, base: str) -> None:
        self.base = base

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if not _under(newurl, self.base):
            raise _OffBase(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _under(url: str, base: str) -> bool:
    """Whether ``url`` is on ``base``'s scheme and host, below its path, with no '..' to climb back up."""
    u, b = urlsplit(url), urlsplit(base)
    climbs = "/../" in unquote(u.path).replace("\\", "/") + "/"
    return (u.scheme.lower(), u.netloc.lower()) == (b.scheme.lower(), b.netloc.lower()) and u.path.startswith(b.path) and not climbs


def _why(exc: BaseException, url: str, base: str, timeout: float) -> str:
    """What went wrong fetching ``url``, in words: never a Python repr."""
    if isinstance(exc, _OffBase):
        return (
            f"{url}: redirects to {exc.target}, outside {base}; verify fetches nothing outside the kit's base URL "
            "(give the URL it redirects to instead, if you trust it)"
        )
    if isinstance(exc, urllib.error.HTTPError):
        return f"{url}: HTTP {exc.code} {exc.reason}".rstrip()
    reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return f"{url}: no answer within {timeout:g} s"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"{url}: its TLS certificate does not verify ({reason.verify_message})"
    if isinstance(reason, ssl.SSLError):
        return f"{url}: TLS failed ({reason.reason or 'no reason given'})"
    if isinstance(reason, ConnectionRefusedError):
        return f"{url}: the connection was refused"
    if isinstance(reason, socket.gaierror):
        return f"{url}: the host name does not resolve"
    if isinstance(reason, OSError) and reason.strerror:
        return f"{url}: {reason.strerror}"
    text = str(reason).strip()
    return f"{url}: {type(reason).__name__}" + (f" ({text})" if text and len(text) < 200 else "")


class _Fetcher:
    """GET requests under one base URL: a time-out each, redirects only below the base."""

    def __init__(self, base: str, timeout: float) -> None:
        self.base = base
        self.timeout = timeout
        self._opener: urllib.request.OpenerDirector | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"base": self.base, "timeout": self.timeout, "_opener": None}

    def get(self, url: str, limit: int) -> Any:
        """The open response for ``url``; raises :class:`FetchError`, whose message names the URL."""
        if not _under(url, self.base):  # a bug if ever reached: the callers build URLs from the base
            raise FetchError(f"{url}: outside {self.base}; not fetched")
        if self._opener is None:
            self._opener = urllib.request.build_opener(_Redirects(self.base))
        request = urllib.request.Request(url, headers={"Accept-Encoding": "identity", "User-Agent": "kitbuild-verify"})
        try:
            response = self._opener.open(request, timeout=self.timeout)
        except (_OffBase, urllib.error.URLError, OSError, ValueError) as exc:
            status = exc.code if isinstance(exc, urllib.error.HTTPError) else None
            raise FetchError(_why(exc, url, self.base, self.timeout), status) from None
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        declared = response.headers.get("Content-Length")
        try:
            if encoding not in ("", "identity"):
                raise FetchError(f"{url}: the server sent it encoded ({encoding}), which verify did not ask for")
            if declared is not None and declared.strip().isdigit() and int(declared) > limit:
                raise FetchError(f"{url}: the server announces {int(declared):,} bytes, more than the {limit:,} expected; verify did not read it")
        except FetchError:
            response.close()
            raise
        return response

    def read(self, url: str, limit: int) -> bytes:
        with _stream(self, url, limit) as stream:
            return stream.read()


class _Body(io.RawIOBase):
    """A response body read to at most ``limit`` bytes; more is an error, never read on."""

    def __init__(self, response: Any, url: str, limit: int, fetcher: _Fetcher) -> None:
        super().__init__()
        self._response, self._url, self._limit, self._fetcher = response, url, limit, fetcher
        self._pos = 0
        self._started = time.monotonic()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self._limit + 1 - self._pos)
        try:
            # read1: what has come, at once; read would wait for all ``want`` bytes of a trickle.
            data = self._response.read1(want) if want > 0 else b""
        except Exception as exc:  # http.client.IncompleteRead, a time-out, a reset connection
            raise FetchError(_body_error(exc, self._url, self._pos, self._fetcher.timeout)) from None
        if self._pos + len(data) > self._limit:
            raise FetchError(f"{self._url}: the server sent more than the {self._limit:,} bytes expected; verify stopped reading it")
        buffer[: len(data)] = data
        self._pos += len(data)
        taken = time.monotonic() - self._started
        if data and taken > self._fetcher.timeout and self._pos < (taken - self._fetcher.timeout) * _MIN_RATE:
            raise FetchError(f"{self._url}: the server sent {self._pos:,} bytes in {taken:.0f} s, less than {_MIN_RATE >> 10} KiB a second after the first {self._fetcher.timeout:g} s; verify gave up on it")
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._response.close()
        super().close()


def _body_error(exc: BaseException, url: str, pos: int, timeout: float) -> str:
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f"{url}: no data for {timeout:g} s after {pos:,} bytes"
    name = type(exc).__name__
    if name == "IncompleteRead":
        return f"{url}: the connection closed after {pos:,} bytes, before the end the server announced"
    return f"{url}: the connection failed after {pos:,} bytes ({getattr(exc, 'strerror', None) or name})"


def _stream(fetcher: _Fetcher, url: str, limit: int) -> BinaryIO:
    response = fetcher.get(url, limit)
    return cast(BinaryIO, io.BufferedReader(_Body(response, url, limit, fetcher), buffer_size=_CHUNK))


def _base_of(url: str, folder: bool) -> str:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise NotAKitError(f"{url}: kitbuild verify reads http:// and https:// URLs; for another host, download the kit and verify the folder or archive.")
    if not parts.hostname:
        raise NotAKitError(f"{url}: names no host. Give the kit's URL as https://host/path/kit/.")
    if parts.username is not None or parts.password is not None:
        raise NotAKitError("the kit's URL holds a user name or password; verify reads only public URLs, so give it without them.")
    if any(char.isspace() or not char.isprintable() for char in url):
        # (http.client refuses it deep in a request, with an error no message here would name.)
        raise NotAKitError(f"{url!r}: a URL holds no space, line break or control character; write a space as %20.")
    try:
        parts.port
    except ValueError:
        raise NotAKitError(f"{url}: names a port that is not a number from 0 to 65535. Give the kit's URL as https://host/path/kit/.") from None
    if parts.fragment or (folder and parts.query):
        raise NotAKitError(f"{url}: a kit's URL names its folder, with no query or '#' part. Give it as https://host/path/kit/.")
    path = parts.path or "/"
    if folder:
        path = path[: -len("index.json")] if path.endswith("/index.json") else path
        path = path if path.endswith("/") else path + "/"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


class HttpKit(KitFS):
    """A kit folder on a web server: its files are those index.json names, fetched on demand."""

    listable = False

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.base = _base_of(url, folder=True)
        self.label = url
        self.fetcher = _Fetcher(self.base, timeout)
        self._cache: dict[str, bytes] = {}
        self._errors: dict[str, str] = {}
        self._findings: list[Finding] = []
        self._keep = True
        self._kept = 0
        index_url = self.base + "index.json"
        try:
            self._cache["index.json"] = self.fetcher.read(index_url, INDEX_LIMIT)
        except OSError as exc:
            raise NotAKitError(f"{exc.strerror}. Give the URL of the kit's folder, where its index.json is (or of its archive).") from None
        self._members: dict[str, Member] = {"index.json": Member("index.json", FILE, len(self._cache["index.json"]))}
        for path, size in self._listed(self._cache["index.json"]):
            self._members[path] = Member(path, FILE, size)
        for path in _UNLISTED_DOCS:  # fetched now: read_docs and the pages' check want them whole
            try:
                self._cache[path] = self.fetcher.read(self._url(path), DOC_LIMIT)
            except OSError as exc:
                if isinstance(exc, FetchError) and exc.status in (404, 410):
                    continue  # not in the kit, as a file missing from a folder
                self._errors[path] = exc.strerror or "cannot be read"
            self._members[path] = Member(path, FILE, len(self._cache.get(path, b"")))

    def __getstate__(self) -> dict[str, Any]:
        # A worker observes each file once: it keeps none (the docs fetched first travel with it).
        state = dict(self.__dict__)
        state["_keep"] = False
        state["_cache"] = {p: d for p, d in self._cache.items() if p == "index.json" or p in _UNLISTED_DOCS}
        return state

    def _url(self, path: str) -> str:
        return self.base + quote(path, safe="/")

    def _listed(self, data: bytes) -> Iterator[tuple[str, int]]:
        """index.json's well-formed entries whose paths may be fetched; the rest are never requested."""
        import orjson

        try:
            files = orjson.loads(data).get("files")
        except (orjson.JSONDecodeError, AttributeError):
            return  # the checks report index.json itself (KB001, KB002)
        for entry in files if isinstance(files, list) else []:
            if not isinstance(entry, dict):
                continue
            path, size = entry.get("path"), entry.get("size")
            if not isinstance(path, str) or not isinstance(size, int) or isinstance(size, bool) or size < 0:
                continue
            if refusal(path) is not None:
                continue  # KB105 from the checks
            decoded = refusal(unquote(path))
            if decoded is not None:
                self._findings.append(Finding("KB105", "index.json", f"lists the path {path!r}, which once percent-decoded {decoded}; verify does not fetch it"))
                continue
            yield path, size

    def findings(self) -> list[Finding]:
        return list(self._findings)

    def workers(self, jobs: int) -> int:
        # A fetch waits on the network more than on a core; a small server's backlog bounds it.
        return min(2 * jobs, MAX_WORKERS)

    def members(self, sizes: bool = True) -> Iterator[Member]:
        return with_folders(dict(self._members))

    def open(self, path: str) -> BinaryIO:
        why = refusal(path)
        if why:
            raise MemberError(path, why, "refused")
        member = self._members.get(path)
        if member is None or member.kind != FILE:
            if any(p.startswith(path + "/") for p in self._members):
                raise MemberError(path, "is not a regular file", "special")
            raise MemberError(path, "is not in the kit", "missing")
        if path in self._errors:
            raise MemberError(path, self._errors[path], "unreadable")
        if path in self._cache:
            return io.BytesIO(self._cache[path])
        assert member.size is not None
        keep = self._keep and member.size <= KEEP_MEMBER and self._kept + member.size <= KEEP_TOTAL
        try:
            stream = _stream(self.fetcher, self._url(path), member.size)
            if not keep:
                return stream
            with stream:
                data = stream.read()
        except OSError as exc:
            raise MemberError(path, exc.strerror or "cannot be read", "unreadable") from None
        self._cache[path] = data
        self._kept += len(data)
        return io.BytesIO(data)


class DownloadedArchive(KitFS):
    """An archive kit fetched from a URL into a temporary folder, read in place, removed on close."""

    sequential = True

    def __init__(self, url: str, limits: ArchiveLimits, timeout: float = DEFAULT_TIMEOUT) -> None:
        from kitbuild.archivekit import open_archive

        base = _base_of(url, folder=False)
        self.label = url
        folder = urlsplit(base).path.rpartition("/")[0] + "/"
        fetcher = _Fetcher(urlunsplit(urlsplit(base)._replace(path=folder, query="")), timeout)
        # The temporary copy keeps the archive's own name: the findings about it name it.
        name = unquote(urlsplit(base).path.rpartition("/")[2])
        if refusal(name) is not None or "/" in name:
            name = "kit" + next(s for s in ARCHIVE_SUFFIXES if urlsplit(base).path.lower().endswith(s))
        self._folder = tempfile.mkdtemp(prefix="kitbuild-verify-")
        try:
            path = Path(self._folder) / name
            try:
                with _stream(fetcher, base, limits.total) as source, open(path, "wb") as out:
                    shutil.copyfileobj(source, out, _CHUNK)
            except OSError as exc:
                raise NotAKitError(f"{exc.strerror or 'cannot be read'}. Give the URL of a kit archive 'kitbuild publish' wrote, or of a kit's folder.") from None
            self._kit = open_archive(path, url, limits)
        except BaseException:
            self.close()
            raise

    def findings(self) -> list[Finding]:
        return self._kit.findings()

    def members(self, sizes: bool = True) -> Iterator[Member]:
        return self._kit.members(sizes)

    def open(self, path: str) -> BinaryIO:
        return self._kit.open(path)

    def close(self) -> None:
        kit = getattr(self, "_kit", None)
        if kit is not None:
            kit.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def open_url(url: str, limits: ArchiveLimits = ArchiveLimits(), timeout: float = DEFAULT_TIMEOUT) -> KitFS:
    """The reader for a kit named by URL: a kit folder on a web server, or an archive of one."""
    path = urlsplit(url).path
    if path.lower().endswith(ARCHIVE_SUFFIXES):
        return DownloadedArchive(url, limits, timeout)
    return HttpKit(url, timeout)


__all__ = ["DEFAULT_TIMEOUT", "DownloadedArchive", "HttpKit", "open_url"]
