"""How far long work has got: files, bytes and time left, on a terminal's stderr and nowhere else.

The core commands report progress to a :class:`Meter` they are given; the default one reports
nowhere, so the core never prints. The CLI hands in a :class:`BarMeter` (rich's progress bar on
stderr) only when stderr is a terminal and neither ``--quiet`` nor a machine format was asked for:
a bar in a CI log or a pipe is noise, and a machine reading stdout must see nothing else.
"""

from __future__ import annotations

import sys
from typing import IO, Any


class Meter:
    """Where work reports its progress; this one reports nowhere."""

    def phase(self, what: str, files: int, size: int | None) -> None:
        """Start a stage of ``files`` files and ``size`` bytes (None: not known in advance)."""

    def advance(self, files: int = 0, size: int = 0) -> None:
        """Count ``files`` more files and ``size`` more bytes as done in the current stage."""

    def close(self) -> None:
        """Stop showing anything."""

    def __enter__(self) -> "Meter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


NO_METER = Meter()


class BarMeter(Meter):
    """rich's progress bar on ``stream`` (stderr): one bar per stage, with files, bytes and time left."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(file=stream or sys.stderr, force_terminal=True)
        self._progress = Progress(
            TextColumn("{task.description:<16}"),
            BarColumn(),
            TextColumn("{task.fields[done]:,}/{task.fields[files]:,} files"),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task: Any = None
        self._progress.start()

    def phase(self, what: str, files: int, size: int | None) -> None:
        if self._task is not None:
            task = self._progress.tasks[-1]
            self._progress.update(self._task, completed=task.total if task.total is not None else task.completed)
        self._task = self._progress.add_task(what, total=size, files=files, done=0)

    def advance(self, files: int = 0, size: int = 0) -> None:
        if self._task is None:
            return
        done = self._progress.tasks[-1].fields["done"] + files
        self._progress.update(self._task, advance=size, done=done)

    def close(self) -> None:
        self._progress.stop()


def meter_for(fmt: str, quiet: bool, stream: IO[str] | None = None) -> Meter:
    """A bar when ``stream`` (default stderr) is a terminal and the output is text for a person; else nothing."""
    stream = stream if stream is not None else sys.stderr
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if quiet or fmt != "text" or not terminal:
        return NO_METER
    return BarMeter(stream)
