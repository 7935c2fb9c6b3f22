"""``kitbuild verify https://host/path/kit/``: a kit checked where it is hosted.

Each test serves a kit folder from a loopback ``http.server`` it starts, records every request the
server gets, and can make any path answer as a hostile server would (redirect elsewhere, send more
than declared, never answer). Verify over HTTP must give the folder's own findings, catch what a
server changed, and never ask for anything outside the kit's base URL.
"""

from __future__ import annotations

import shutil
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson
import pytest
from typer.testing import CliRunner

from kitbuild.cli import app
from kitbuild.errors import KitbuildError
from kitbuild.commands.publish import publish
from kitbuild.commands.verify import UNLISTABLE, verify
from kitbuild.httpkit import HttpKit
from kitbuild.kitfs import NotAKitError
from kitbuild.verify_report import VerifyReport

from .verify_kits import CountingProgress, build_kit, refresh

Route = Callable[[SimpleHTTPRequestHandler], None]


class _Handler(SimpleHTTPRequestHandler):
    site: "Site"

    def do_GET(self) -> None:
        self.site.requests.append(self.path)
        route = self.site.routes.get(self.path)
        if route is not None:
            route(self)
        else:
            super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


class Site:
    """A loopback web server over ``root``: ``url`` is its base, ``routes`` override paths."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        self.routes: dict[str, Route] = {}
        handler = type("Handler", (_Handler,), {"site": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    (tmp_path / "www").mkdir()
    served = Site(tmp_path / "www")
    yield served
    served.close()


@pytest.fixture(scope="module")
def small_kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_kit(tmp_path_factory.mktemp("small"))


def _findings(report: VerifyReport) -> list[tuple[str, str, int | None, str]]:
    return [(f.code, f.path, f.line, f.message) for f in report.findings]


def _serve(site: Site, kit: Path, name: str = "kit") -> tuple[Path, str]:
    shutil.copytree(kit, site.root / name)
    return site.root / name, f"{site.url}{name}/"


def _two_faced(site: Site, path: str, first: bytes, later: bytes) -> list[str]:
    """``path`` answers its first request with ``first`` and every later one with ``later``
    (as long as it, or the reader refuses it for its length); the requests are kept in the list."""
    asked: list[str] = []

    def answer(handler: SimpleHTTPRequestHandler) -> None:
        asked.append(handler.path)
        data = first if len(asked) == 1 else later
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    site.routes[path] = answer
    return asked


def test_the_demo_kit_over_http_reports_what_its_folder_reports(site: Site, demo_kit: Path) -> None:
    served, url = _serve(site, demo_kit)
    progress = CountingProgress()
    over_http = verify(url, jobs=2, progress=progress)
    in_folder = verify(served, jobs=2)
    assert over_http.exit_code == in_folder.exit_code == 0
    assert _findings(over_http) == _findings(in_folder) == []
    assert over_http.digest == in_folder.digest
    assert over_http.check("figures").figures == in_folder.check("figures").figures
    # What HTTP cannot show is said, not passed over in silence.
    assert UNLISTABLE in over_http.check("completeness").figures
    assert UNLISTABLE not in in_folder.check("completeness").figures
    # Progress counts files and bytes, and reaches its totals.
    assert progress.begun[0] == progress.done[0] == sum(p.is_file() for p in served.rglob("*"))
    assert progress.begun[1] == progress.done[1] > 0
    # Every request stays under the kit's base URL.
    assert site.requests and all(r.startswith("/kit/") for r in site.requests)


def test_a_server_that_serves_a_row_file_one_way_to_the_pass_and_another_to_the_figures_is_caught(site: Site, demo_kit: Path) -> None:
    # The figures read their row files again after the pass that hashed them. A server that
    # answers the first request with the kit's own bytes and later ones with bytes that back
    # other figures must not get those figures recounted from what it sent second.
    served, url = _serve(site, demo_kit)
    rows = "longmemeval-2026-10/a0/run/rows.ndjson"
    true = (served / rows).read_bytes()
    asked = _two_faced(site, f"/kit/{rows}", true, true.replace(b'"all@5":0', b'"all@5":1', 1))
    report = verify(url, jobs=1)
    assert len(asked) >= 2
    figures = report.check("figures").findings
    assert figures and {f.code for f in figures} <= {"KB702", "KB707"}, [str(f) for f in figures]
    assert f"{rows}: changed while the kit was checked" in figures[0].message
    assert report.check("completeness").findings == [] and report.exit_code == 1


def test_a_server_that_serves_a_tabular_file_one_way_to_the_pass_and_another_to_croissant_is_caught(site: Site, demo_kit: Path, tmp_path: Path) -> None:
    # croissant.json's RecordSets are made again from the first bytes of each tabular file, read
    # after the pass. A kit whose croissant.json describes other bytes than the ones it pins (its
    # fields made from a file whose first record's keys were renamed, index.json pinned again)
    # must not pass because its server answers the pass with the pinned bytes and later reads
    # with the described ones.
    from kitbuild.index import entry, index_bytes
    from kitbuild.kitfs import FolderKit
    from kitbuild.metadata import CROISSANT, write_croissant
    from kitbuild.pages import page_context, render_pages

    served, url = _serve(site, demo_kit)
    rows = "learned-sparse-2026-11-07/full-s1/fuse/F1h.rows.ndjson"  # read by no figure
    pinned = (served / rows).read_bytes()
    described = pinned.replace(b'"qid":', b'"qix":', 1)  # (as long: a server says its length)
    assert len(pinned) > 64 << 10  # held to the digest of its first 64 KiB, not its whole one
    described_kit = tmp_path / "described"
    shutil.copytree(served, described_kit)
    (described_kit / rows).write_bytes(described)
    index = orjson.loads((served / "index.json").read_bytes())
    entries = [e for e in index["files"] if e["path"] != CROISSANT]
    croissant = write_croissant(orjson.loads((served / "provenance.json").read_bytes()), entries, index["provenance"], FolderKit(described_kit))
    (served / CROISSANT).write_bytes(croissant)
    (served / "index.json").write_bytes(index_bytes(index["kit"], [*entries, entry(CROISSANT, croissant)], index["provenance"]))
    context = page_context(orjson.loads((served / "provenance.json").read_bytes()), orjson.loads((served / "index.json").read_bytes()))
    for name, page in render_pages(context).items():  # (they print the kit's digest)
        (served / name).write_bytes(page)
    asked = _two_faced(site, f"/kit/{rows}", pinned, described)
    report = verify(url, jobs=1)
    assert len(asked) >= 2
    assert [(f.code, f.path) for f in report.findings] == [("KB605", rows)], [str(f) for f in report.findings]
    assert "changed while the kit was checked" in report.findings[0].message and report.exit_code == 1
    # The same kit read from its folder, where the bytes stay put: its croissant.json is stale.
    assert [(f.code, f.path) for f in verify(served, jobs=1).findings] == [("KB605", CROISSANT)]


def test_a_kit_tampered_on_the_server_gives_the_folders_findings(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    rows = served / "learned-sparse-2026-11-07/full-s1/run/rows.ndjson"
    rows.write_bytes(rows.read_bytes().replace(b'"q3"', b'"q4"'))
    (served / "README.md").write_bytes((served / "README.md").read_bytes() + b"one more line\n")
    reading = served / "learned-sparse-2026-11-07/full-s1/score/reading.json"
    reading.write_bytes(reading.read_bytes().replace(b"night", b"dayyy"))
    over_http, in_folder = verify(url, jobs=1), verify(served, jobs=1)
    assert over_http.exit_code == in_folder.exit_code == 1
    assert _findings(over_http) == _findings(in_folder)
    assert {"KB104", "KB601"} <= over_http.codes()
    assert ("KB104", "learned-sparse-2026-11-07/full-s1/run/rows.ndjson") in {(f.code, f.path) for f in over_http.findings}


def test_tampering_covered_by_a_new_index_is_caught_over_http_as_in_the_folder(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    rows = served / "learned-sparse-2026-11-07/full-s1/run/rows.ndjson"
    rows.write_bytes(rows.read_bytes() + b'{"qid": "q99", "rank": [], "score": 1}\n')
    refresh(served)
    over_http, in_folder = verify(url, jobs=2), verify(served, jobs=2)
    assert over_http.exit_code == 1
    assert _findings(over_http) == _findings(in_folder)


def test_a_listed_file_the_server_does_not_have_is_a_finding_naming_its_url(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    (served / "longmemeval-2026-10/a0/rows.tsv").unlink()
    report = verify(url, jobs=1)
    found = [f for f in report.findings if f.path == "longmemeval-2026-10/a0/rows.tsv"]
    assert [(f.code, f.message) for f in found] == [("KB111", f"cannot be read: {url}longmemeval-2026-10/a0/rows.tsv: HTTP 404 File not found")]


def test_a_missing_page_is_missing_as_in_a_folder(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    (served / "index.html").unlink()
    over_http, in_folder = verify(url, jobs=1), verify(served, jobs=1)
    assert _findings(over_http) == _findings(in_folder)
    assert "KB603" in over_http.codes()


def test_no_index_json_at_the_url_is_exit_2_naming_it(site: Site) -> None:
    result = CliRunner().invoke(app, ["verify", site.url + "nothing/"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"kitbuild: {site.url}nothing/index.json: HTTP 404 File not found. Give the URL of the kit's folder, where its index.json is (or of its archive).\n"


def test_a_redirect_to_another_host_is_refused(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)

    def elsewhere(handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", "http://elsewhere.invalid/kit" + handler.path[4:])
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    site.routes["/kit/longmemeval-2026-10/a0/rows.tsv"] = elsewhere
    report = verify(url, jobs=1)
    found = [(f.code, f.message) for f in report.findings if f.path == "longmemeval-2026-10/a0/rows.tsv"]
    assert found == [
        (
            "KB111",
            f"cannot be read: {url}longmemeval-2026-10/a0/rows.tsv: redirects to http://elsewhere.invalid/kit/longmemeval-2026-10/a0/rows.tsv, "
            f"outside {url}; verify fetches nothing outside the kit's base URL (give the URL it redirects to instead, if you trust it)",
        )
    ]
    site.routes["/kit/index.json"] = elsewhere
    with pytest.raises(NotAKitError, match="redirects to http://elsewhere.invalid/kit/index.json"):
        verify(url, jobs=1)


def test_a_redirect_under_the_base_url_is_followed(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit, "kit-1.0")

    def moved(handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(301)
        handler.send_header("Location", handler.path + "?v=1")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    site.routes["/kit-1.0/index.json"] = site.routes["/kit-1.0/SHA256SUMS"] = moved
    assert verify(url, jobs=1).exit_code == 0
    assert {"/kit-1.0/index.json?v=1", "/kit-1.0/SHA256SUMS?v=1"} <= set(site.requests)
    # Up and out of the base, on the same host, is refused like another host.
    site.routes["/kit-1.0/index.json"] = lambda h: (h.send_response(302), h.send_header("Location", "/other/index.json"), h.send_header("Content-Length", "0"), h.end_headers())  # type: ignore[func-returns-value]
    with pytest.raises(NotAKitError, match=r"redirects to http://127\.0\.0\.1:\d+/other/index\.json, outside"):
        verify(url, jobs=1)
    site.routes["/kit-1.0/index.json"] = lambda h: (h.send_response(302), h.send_header("Location", "/kit-1.0/%2e%2e/other/index.json"), h.send_header("Content-Length", "0"), h.end_headers())  # type: ignore[func-returns-value]
    with pytest.raises(NotAKitError, match=r"redirects to http://127\.0\.0\.1:\d+/kit-1\.0/%2e%2e/other/index\.json, outside"):
        verify(url, jobs=1)
    assert not any("other" in r for r in site.requests)


def test_a_server_that_sends_more_than_declared_is_cut_off(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    path = "longmemeval-2026-10/a0/rows.tsv"
    declared = (served / path).stat().st_size
    sent: list[int] = []

    def endless(handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()  # no Content-Length: the body ends when the server stops
        try:
            for _ in range(4096):  # 256 MiB, if anyone read it all
                handler.wfile.write(b"x" * 65536)
                sent.append(1)
        except OSError:
            pass

    site.routes["/kit/" + path] = endless
    start = time.monotonic()
    report = verify(url, jobs=1)
    assert time.monotonic() - start < 10
    found = [(f.code, f.message) for f in report.findings if f.path == path]
    assert found == [("KB111", f"cannot be read: {url}{path}: the server sent more than the {declared:,} bytes expected; verify stopped reading it")]

    def announced(handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(10 << 30))
        handler.end_headers()

    site.routes["/kit/" + path] = announced
    found = [(f.code, f.message) for f in verify(url, jobs=1).findings if f.path == path]
    assert found == [("KB111", f"cannot be read: {url}{path}: the server announces {10 << 30:,} bytes, more than the {declared:,} expected; verify did not read it")]


def test_a_server_that_does_not_answer_times_out_naming_the_url(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    path = "longmemeval-2026-10/a0/rows.tsv"
    site.routes["/kit/" + path] = lambda handler: time.sleep(2)
    report = verify(url, jobs=1, timeout=0.3)
    assert [(f.code, f.message) for f in report.findings if f.path == path] == [("KB111", f"cannot be read: {url}{path}: no answer within 0.3 s")]


def test_a_server_that_trickles_is_given_up_in_bounded_time(site: Site, small_kit: Path) -> None:
    # Each byte comes well within the time-out, so only a floor on the rate ends the wait: at a
    # byte every 0.1 s, a 1 MiB record would take a day.
    served, url = _serve(site, small_kit)
    path = "longmemeval-2026-10/a0/rows.tsv"
    body = (served / path).read_bytes()

    def trickle(handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            for byte in body:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass

    site.routes["/kit/" + path] = trickle
    start = time.monotonic()
    report = verify(url, jobs=1, timeout=1)
    assert time.monotonic() - start < 15
    [(code, message)] = [(f.code, f.message) for f in report.findings if f.path == path]
    assert code == "KB111" and "less than 16 KiB a second after the first 1 s; verify gave up on it" in message
    body = (served / "index.json").read_bytes()  # what trickle sends from now on
    site.routes["/kit/index.json"] = trickle
    with pytest.raises(KitbuildError) as refused:
        verify(url, jobs=1, timeout=1)
    assert refused.value.exit_code == 2 and "verify gave up on it" in str(refused.value)


def test_a_path_outside_the_kit_is_never_requested(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    (served.parent / "secret.txt").write_text("not the kit's")
    index = orjson.loads((served / "index.json").read_bytes())
    hostile = ["../secret.txt", "%2e%2e/secret.txt", "a/%2E%2E/%2e%2e/secret.txt", "/secret.txt", "..%2fsecret.txt", "a\\..\\..\\secret.txt"]
    index["files"] += [{"path": p, "size": 13, "sha256": "0" * 64} for p in hostile]
    (served / "index.json").write_bytes(orjson.dumps(index))
    report = verify(url, jobs=1)
    assert report.exit_code == 1
    assert all(r.startswith("/kit/") for r in site.requests), site.requests
    assert not any("secret" in r for r in site.requests)
    refused = {f.message for f in report.findings if f.code == "KB105"}
    assert "lists the path '%2e%2e/secret.txt', which once percent-decoded climbs out of the kit with '..'; verify does not fetch it" in refused
    assert "lists the path '../secret.txt', which climbs out of the kit with '..'; verify does not open it" in refused


def test_an_archive_url_gives_the_archives_report(site: Site, small_kit: Path, tmp_path: Path) -> None:
    www = site.root
    for fmt in ("tar.gz", "zip"):
        archive = publish(small_kit, fmt, www / f"kit.{fmt}").archive
        over_http, local = verify(f"{site.url}kit.{fmt}", jobs=1), verify(archive, jobs=1)
        assert over_http.exit_code == local.exit_code == 0
        assert _findings(over_http) == _findings(local)
        assert over_http.kit == f"{site.url}kit.{fmt}"
    assert site.requests == ["/kit.tar.gz", "/kit.zip"]  # each fetched once
    with pytest.raises(NotAKitError, match=r"/missing\.tar\.gz: HTTP 404 File not found"):
        verify(f"{site.url}missing.tar.gz")


def test_the_command_line_verifies_a_url(site: Site, small_kit: Path) -> None:
    served, url = _serve(site, small_kit)
    result = CliRunner().invoke(app, ["verify", url, "--json"])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["ok"] is True
    result = CliRunner().invoke(app, ["verify", url, "--format", "github"])
    assert (result.exit_code, result.stdout) == (0, "")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://host/kit/", "ftp://host/kit/: kitbuild verify reads http:// and https:// URLs; for another host, download the kit and verify the folder or archive."),
        ("https://me:secret@host/kit/", "the kit's URL holds a user name or password; verify reads only public URLs, so give it without them."),
        ("https://host/kit/?x=1", "https://host/kit/?x=1: a kit's URL names its folder, with no query or '#' part. Give it as https://host/path/kit/."),
        ("http://127.0.0.1:9/kit/", "http://127.0.0.1:9/kit/index.json: the connection was refused. Give the URL of the kit's folder, where its index.json is (or of its archive)."),
        # http.client refused these deep in the request: an internal error (exit 3).
        ("https://exa mple.org/kit/", "'https://exa mple.org/kit/': a URL holds no space, line break or control character; write a space as %20."),
        ("https://host/k\nit/", "'https://host/k\\nit/': a URL holds no space, line break or control character; write a space as %20."),
        ("https://host:99999/kit/", "https://host:99999/kit/: names a port that is not a number from 0 to 65535. Give the kit's URL as https://host/path/kit/."),
    ],
)
def test_a_url_that_cannot_be_a_kit_is_exit_2(url: str, message: str) -> None:
    with pytest.raises(NotAKitError) as raised:
        HttpKit(url, timeout=2)
    assert raised.value.message == message


def test_the_commands_docs_hosted_md_shows_run(site: Site, small_kit: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "hosted.md").read_text(encoding="utf-8")
    commands = [line.split("#")[0].split() for line in doc.split("\n\n")[1].splitlines()]
    assert all(c[:2] == ["kitbuild", "verify"] for c in commands) and len(commands) == 4
    served, _ = _serve(site, small_kit, "path/kit")
    publish(small_kit, "tar.gz", site.root / "path" / "kit-1.0.0.tar.gz")
    digest = verify(served, jobs=1).digest
    assert digest is not None
    for words in commands:
        args = [w.replace("https://host/", site.url).replace("sha256:…", digest) for w in words[1:]]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (words, result.output)


@pytest.mark.parametrize("timeout", ["nan", "inf", "1e308"])
def test_a_timeout_no_request_can_wait_is_refused_before_anything_is_read(cli, timeout: str) -> None:
    # A socket refused 1e308 deep in a request (OverflowError, exit 3); nan and inf got past the minimum.
    result = cli("verify", "https://127.0.0.1:9/kit/", "--timeout", timeout)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"kitbuild: --timeout: {float(timeout):g} is not a number of seconds a request can wait; give one from 0.1 to 1,000,000,000.\n"
