"""The pages rendered ahead in a child process (kitbuild/pagesahead.py): the same bytes verify
renders itself, used only for the bytes verify read, and never a different report."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from commands.verify_kits import build_kit, copy_kit, edit_json, refresh
from kitbuild import pagesahead
from kitbuild.commands.verify import verify
from kitbuild.pagesahead import PagesAhead
from kitbuild.pages import page_context, render_pages

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pages are rendered ahead only where processes fork")


@pytest.fixture(scope="module")
def kits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ahead")
    build_kit(root)
    # A kit whose README differs from what its template renders: verify must still say so.
    edited = copy_kit(root / "kit", root / "edited-readme")
    (edited / "README.md").write_bytes((edited / "README.md").read_bytes() + b"\nA line added.\n")
    refresh(edited)
    # A kit whose provenance.json cannot be rendered into the pages (a source without "as").
    unrenderable = copy_kit(root / "kit", root / "unrenderable")
    edit_json(unrenderable / "provenance.json", lambda p: p["sources"][0].pop("as"))
    refresh(unrenderable)
    # A kit with its own README template.
    own = tmp_path_factory.mktemp("own")
    build_kit(own, template="# {{ title }}\n\nOur own page.\n")
    (root / "own").symlink_to(own / "kit")
    return root


def _files(kit: Path) -> tuple[bytes, bytes]:
    return (kit / "index.json").read_bytes(), (kit / "provenance.json").read_bytes()


def _in_process(kit: Path) -> dict[str, bytes]:
    index, provenance = _files(kit)
    return render_pages(page_context(orjson.loads(provenance), orjson.loads(index)), {})


def _no_child_left(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@needs_fork
def test_the_child_renders_the_pages_verify_renders(kits: Path) -> None:
    ahead = PagesAhead.start(kits / "kit")
    assert ahead is not None
    pages = ahead.pages(*_files(kits / "kit"))
    assert pages == _in_process(kits / "kit")
    assert set(pages) == {"README.md", "index.html"} and pages["README.md"] == (kits / "kit" / "README.md").read_bytes()
    assert _no_child_left(ahead._pid)
    assert ahead.pages(*_files(kits / "kit")) is None  # the answer is taken once


@needs_fork
@pytest.mark.parametrize("which", ["index", "provenance"])
def test_other_bytes_than_the_child_read_get_no_pages(kits: Path, which: str) -> None:
    ahead = PagesAhead.start(kits / "kit")
    assert ahead is not None
    index, provenance = _files(kits / "kit")
    if which == "index":
        index += b" "
    else:
        provenance = provenance.replace(b"A kit to verify", b"A kit to verity")
    assert ahead.pages(index, provenance) is None
    assert _no_child_left(ahead._pid)


@needs_fork
def test_the_child_leaves_a_kits_own_template_and_a_failure_to_verify(kits: Path) -> None:
    for kit in (kits / "own", kits / "unrenderable"):
        ahead = PagesAhead.start(kit)
        assert ahead is not None
        assert ahead.pages(*_files(kit)) is None, kit


def test_no_child_for_an_archive_a_missing_file_or_a_link(kits: Path, tmp_path: Path) -> None:
    archive = tmp_path / "kit.tar.gz"
    archive.write_bytes(b"\x1f\x8b not really")
    assert PagesAhead.start(archive) is None
    assert PagesAhead.start(tmp_path / "nothing-here") is None
    linked = copy_kit(kits / "kit", tmp_path / "linked")
    (linked / "provenance.json").rename(linked / "real.json")
    (linked / "provenance.json").symlink_to("real.json")
    assert PagesAhead.start(linked) is None


@needs_fork
def test_a_child_that_dies_leaves_the_rendering_to_verify(kits: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pagesahead, "render", lambda index, provenance: os._exit(3))
    ahead = PagesAhead.start(kits / "kit")
    assert ahead is not None
    assert ahead.pages(*_files(kits / "kit")) is None
    report = verify(kits / "kit", jobs=1, pages_ahead=PagesAhead.start(kits / "kit"))
    assert report.exit_code == 0


@needs_fork
def test_cancel_stops_a_child_still_rendering(kits: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pagesahead, "render", lambda index, provenance: time.sleep(60))
    ahead = PagesAhead.start(kits / "kit")
    assert ahead is not None
    started = time.monotonic()
    ahead.cancel()
    ahead.cancel()
    assert time.monotonic() - started < 10
    assert _no_child_left(ahead._pid)
    assert ahead.pages(*_files(kits / "kit")) is None


@pytest.mark.parametrize("kit", ["kit", "edited-readme", "unrenderable", "own"])
def test_the_command_reports_as_verify_alone_does(kits: Path, kit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kitbuild verify`` (pages rendered ahead) prints what verify() alone reports, a changed
    README and pages that cannot be rendered included."""
    from kitbuild.verify_report import verify_text

    monkeypatch.chdir(kits)
    done = subprocess.run([sys.executable, "-m", "kitbuild", "verify", kit], capture_output=True, timeout=120)
    alone = verify(kit)
    assert done.stdout.decode() == verify_text(alone) + "\n"
    assert done.returncode == alone.exit_code
    assert done.returncode == (0 if kit in ("kit", "own") else 1), done.stdout


class _Given:
    """Stands for a child that rendered ``pages`` from the bytes verify read."""

    def __init__(self, pages: dict[str, bytes] | None) -> None:
        self.given, self.asked = pages, []

    def pages(self, index: bytes | None, provenance: bytes | None) -> dict[str, bytes] | None:
        self.asked.append((index, provenance))
        return self.given

    def cancel(self) -> None:
        pass


def test_verify_compares_the_pages_against_those_rendered_ahead(kits: Path) -> None:
    """verify takes the pages from the child, asked with the bytes it read: pages other than
    the kit's are then a finding (KB601); none at all, and it renders them itself."""
    kit = kits / "kit"
    rendered = _in_process(kit)
    other = _Given({**rendered, "README.md": rendered["README.md"] + b"more\n"})
    report = verify(kit, jobs=1, pages_ahead=other)  # type: ignore[arg-type]
    assert other.asked == [_files(kit)]
    assert [f.code for f in report.findings] == ["KB601"]
    for given in (rendered, None):
        assert verify(kit, jobs=1, pages_ahead=_Given(given)).exit_code == 0  # type: ignore[arg-type]
    # A kit with its own template is never asked: the child renders only the built-in ones.
    own = _Given({})
    assert verify(kits / "own", jobs=1, pages_ahead=own).exit_code == 0  # type: ignore[arg-type]
    assert own.asked == []

