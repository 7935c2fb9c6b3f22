"""verify's pages, rendered ahead of it in a child process.

verify renders README.md and index.html again from the kit's provenance.json and index.json
and compares bytes. In the verify process that took importing jinja2 (about 25 ms here) and
rendering (10 ms for workload B's README), while its workers read the kit's files on every
core: time taken from them. At the start, while verify imports its own modules and reads the
kit's listing (about 40 ms), every core but one is idle. So the command line, given a kit
folder, first reads the folder's index.json and provenance.json and forks a child that renders
the pages from those bytes (:meth:`PagesAhead.start`), and verify takes the child's pages in
place of its own rendering (:meth:`PagesAhead.pages`) for exactly the bytes it read itself.

Nothing in the report depends on which process rendered: the child renders only the built-in
templates, with the same functions, and any doubt (other bytes, a kit's own template, a failure
or a child that died) leaves the rendering, and its findings, to verify as before. This module
imports nothing heavier than ``os`` until it is used, so that the child starts before the rest.
"""

from __future__ import annotations

import marshal
import os
import stat
from pathlib import Path
from typing import Any

# The two files are read whole by the command line before verify reads them again; past this
# size (a kit of a million files) the second read and the compare cost more than they save.
READ_LIMIT = 64 << 20


def _read(folder: Path, name: str) -> bytes | None:
    """The regular file ``name`` in ``folder``, not through a link, up to READ_LIMIT; else None."""
    try:
        fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and st.st_size <= READ_LIMIT):
            return None
        parts = []
        while chunk := os.read(fd, READ_LIMIT + 1):
            parts.append(chunk)
        data = b"".join(parts)
        return data if len(data) <= READ_LIMIT else None
    except OSError:
        return None
    finally:
        os.close(fd)


def render(index: bytes, provenance: bytes) -> dict[str, bytes] | None:
    """The pages as verify renders them from these bytes with the built-in templates, or None
    where verify would not, or could not, do just that (it then renders, or reports, itself)."""
    import orjson

    from kitbuild.index import BUILT_IN, INDEX_PAGE, README
    from kitbuild.pages import page_context, render_pages

    try:
        prov, idx = orjson.loads(provenance), orjson.loads(index)
        if prov["pages"][README] != BUILT_IN or prov["pages"][INDEX_PAGE] != BUILT_IN:
            return None
        return render_pages(page_context(prov, idx), {})
    except Exception:  # whatever it was, verify meets it again and reports it
        return None


class PagesAhead:
    """A child process rendering a kit folder's pages; see the module's docstring."""

    def __init__(self, pid: int, fd: int, index: bytes, provenance: bytes) -> None:
        self._pid, self._fd = pid, fd
        self._index, self._provenance = index, provenance

    @classmethod
    def start(cls, kit: str | os.PathLike[str]) -> PagesAhead | None:
        """Start rendering the pages of the kit folder at ``kit``; None where there is no child to
        start (no fork on this system, an archive, no such files, or files too large)."""
        if not hasattr(os, "fork"):
            return None
        folder = Path(kit)
        from kitbuild.index import INDEX, PROVENANCE

        index = _read(folder, INDEX)
        provenance = _read(folder, PROVENANCE) if index is not None else None
        if index is None or provenance is None:
            return None
        # verify needs orjson as much as the child does: imported once, here, the child starts
        # with it (8 ms of the child's 45 on workload S, where the child finishes last).
        import orjson  # noqa: F401

        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:  # pragma: no cover - the child; its work is tested through PagesAhead.pages
            _child(r, w, index, provenance)
        os.close(w)
        return cls(pid, r, index, provenance)

    def pages(self, index: bytes | None, provenance: bytes | None) -> dict[str, bytes] | None:
        """The pages rendered from ``index`` and ``provenance`` (the bytes verify read), once the
        child has sent them; None when the child rendered other bytes or none."""
        if self._fd < 0:
            return None
        same = index == self._index and provenance == self._provenance
        self._index = self._provenance = b""
        if not same:
            self.cancel()
            return None
        parts = []
        try:
            while chunk := os.read(self._fd, 1 << 20):
                parts.append(chunk)
        except OSError:
            parts = []
        self._reap()
        try:
            out: Any = marshal.loads(b"".join(parts)) if parts else None
        except Exception:  # a child cut off mid-message
            return None
        return out if isinstance(out, dict) else None

    def cancel(self) -> None:
        """Stop the child, if it still runs (safe to call twice)."""
        if self._fd >= 0:
            import signal

            try:
                os.kill(self._pid, signal.SIGKILL)
            except OSError:
                pass
            self._reap()

    def _reap(self) -> None:
        os.close(self._fd)
        self._fd = -1
        try:
            os.waitpid(self._pid, 0)
        except OSError:
            pass


def _child(r: int, w: int, index: bytes, provenance: bytes) -> None:  # pragma: no cover - runs in the child
    """Render, send the pages down ``w``, and end the process without its parent's teardown."""
    try:
        os.close(r)
        # marshal, not pickle: the pages are a dict of bytes, sent to the process this one was
        # forked from (the same Python), and marshal is built in, where importing pickle took
        # 6 to 9 ms of the child's CPU.
        data = marshal.dumps(render(index, provenance))
        view = memoryview(data)
        while view:
            view = view[os.write(w, view) :]
    except BaseException:  # an interrupt, a closed pipe: the parent reads no pages and renders
        pass
    finally:
        os._exit(0)
