"""How far long work has got: files, bytes and time left, on a terminal's stderr and nowhere else.

The core (build, verify, check) reports progress to a :class:`Progress` it is given; the default,
:data:`SILENT`, reports nowhere, so the core never prints. The CLI hands in a :class:`BarProgress`
(rich's progress bar on stderr) only when stderr is a terminal and neither ``--quiet`` nor a machine
format was asked for: a bar in a CI log or a pipe is noise, and a program reading stdout must see
nothing else.
"""

from __future__ import annotations

import sys
from typing import IO, Any


class Progress:
    """Where work reports how far it got, stage by stage; this one reports nowhere."""

    def begin(self, what: str, files: int, size: int | None) -> None:
        """Start a stage of ``files`` files and ``size`` bytes (None: not known in advance)."""

    def advance(self, files: int = 0, size: int = 0) -> None:
        """Count ``files`` more files and ``size`` more bytes of the current stage as done."""

    def end(self) -> None:
        """The current stage is done."""

    def close(self) -> None:
        """Stop showing anything."""

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


SILENT = Progress()


class BarProgress(Progress):
    """rich's progress bar on ``stream``: one line per stage, with files, bytes and time left.

    The bar is transient: when the work is done it is erased, so the report that follows reads the
    same on a terminal as in a pipe.
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress as Bar, TextColumn, TimeRemainingColumn

        console = Console(file=stream or sys.stderr, force_terminal=True)
        self._bar = Bar(
            TextColumn("{task.description:<20}"),
            BarColumn(),
            TextColumn("{task.fields[done]:,}/{task.fields[files]:,} files"),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task: Any = None
        self._bar.start()

    def begin(self, what: str, files: int, size: int | None) -> None:
        self.end()
        self._task = self._bar.add_task(what, total=size, files=files, done=0)

    def advance(self, files: int = 0, size: int = 0) -> None:
        if self._task is None:
            return
        done = self._bar.tasks[-1].fields["done"] + files
        self._bar.update(self._task, advance=size, done=done)

    def end(self) -> None:
        if self._task is not None:
            task = self._bar.tasks[-1]
            self._bar.update(self._task, completed=task.total if task.total is not None else task.completed, done=task.fields["files"])
            self._task = None

    def close(self) -> None:
        self.end()
        self._bar.stop()


def progress_for(fmt: str, quiet: bool, stream: IO[str] | None = None) -> Progress:
    """A bar when ``stream`` (default stderr) is a terminal and the output is text for a person; else :data:`SILENT`."""
    stream = stream if stream is not None else sys.stderr
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if quiet or fmt != "text" or not terminal:
        return SILENT
    return BarProgress(stream)
