"""Worker processes forked from this one, taking numbered runs of work from a pipe.

verify's passes over a kit's files (:class:`kitbuild.filescan.StartedScan` and
:mod:`kitbuild.prescan`) and build's (:func:`kitbuild.pipeline.run_files`) hand out their work
this way, not through concurrent.futures or multiprocessing: importing those took verify 20 ms
before its workers could start, and a pool's workers began 7 to 13 ms after they were forked.
verify A hashes 2 GiB in 0.8 s; that was 3 %. The work is the workers' own copy of the caller's
(they are forked after it is made): only the run numbers and the answers travel.

- The run numbers go into a pipe, the *tokens*, before any worker starts. A worker reads one
  number at a time until the pipe is empty; the main process may take runs the same way. Runs go
  to whoever is free, so the runs end together whatever each costs.
- A worker appends each run's answer, pickled, to a file of its own in memory (``memfd``), then
  writes a notice of it (run number and length) to a pipe of its own. A write to a file never waits
  for a reader: through a pipe alone, a worker would stall on the first 64 KiB of answers until the
  main process, busy with the schemas and pages, came to read them.
- :meth:`Crew.answers` reads the notices as they come and the answers from the files. The files
  are let go when the crew is cancelled: the answers of build C's 100,000 files take 15 MB.
- A worker that fails or dies says nothing more: the runs it took and never answered are missing
  from :meth:`Crew.answers`, and the caller does them itself (and meets the error itself, if the
  run is what failed). A worker that fails also stops the crew, so that an error every run would
  meet is met at once. A worker prints nothing.
- :meth:`Crew.stop` (from any of the processes) has every one of them take no more runs.
"""

from __future__ import annotations

import mmap
import os
import select
import signal
from typing import Any, Callable, Iterator

# Whether workers can be made here: they are copies of this process, sharing its pipes.
AVAILABLE = hasattr(os, "fork")
# Every run number is in the pipe before any worker reads it, and a write that did not fit would
# wait for a reader that is not there yet. 4 KiB of numbers fit any pipe: one holds a page at
# least (64 KiB on Linux, unless its user holds too many).
MAX_RUNS = 1024
_TOKEN = 4  # bytes per run number
# A run number and its answer's length. A worker's notices wait in its pipe until the main
# process reads them: MAX_RUNS of them take 12 KiB, which a pipe of 64 KiB holds (one of a single
# page would hold 341, and its worker would wait for the reader past those).
_NOTICE = _TOKEN + 8
# Notices read at once: a whole number of them, as each is written whole (a pipe's writes of up
# to 4 KiB are never split).
_NOTICES_READ = 64 * _NOTICE


def pipe_of_runs(count: int) -> int:
    """The read end of a pipe holding the numbers 0 to ``count - 1`` (at most MAX_RUNS), its
    write end closed, so that a reader finds the end once every number is taken."""
    if count > MAX_RUNS:
        raise ValueError(f"{count} runs; a pipe of run numbers holds at most {MAX_RUNS}")
    read, write = os.pipe()
    try:
        numbers = b"".join(k.to_bytes(_TOKEN, "little") for k in range(count))
        while numbers:  # never waits for a reader: the pipe holds them all (see MAX_RUNS)
            numbers = numbers[os.write(write, numbers) :]
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read


def take(tokens: int) -> int | None:
    """The number of the next run no one has taken, or None when all are taken.

    A read of one number's bytes from the pipe is atomic: the kernel holds the pipe's lock for
    the whole read, and every number went in with the same width."""
    got = os.read(tokens, _TOKEN)
    return int.from_bytes(got, "little") if got else None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _answer_file() -> int:
    """A new file in memory, open for reading and writing, for one worker's answers."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("kitbuild-answers", os.MFD_CLOEXEC)
    import tempfile  # (not Linux: an unlinked file on disk does the same)

    with tempfile.TemporaryFile() as file:
        return os.dup(file.fileno())


class _Worker:
    def __init__(self, pid: int, notices: int, answers: int) -> None:
        self.pid, self.notices, self.answers = pid, notices, answers
        self.offset = 0  # where its next answer begins in ``answers``


class Crew:
    """Runs ``0 .. count - 1``, handed out to forked workers (see the module doc).

    Made in two steps so that the work a worker runs may refer to the crew (to :meth:`stop` it):
    ``crew = Crew(count)``, then ``crew.start(workers, work)``.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._stop = mmap.mmap(-1, 1)  # shared with the workers, which are forked after it
        self.tokens = pipe_of_runs(count)
        self._workers: list[_Worker] = []

    def start(self, workers: int, work: Callable[[int], Any], setup: Callable[[], object] | None = None) -> None:
        """Fork ``workers`` processes that take runs until none is left or the crew is stopped,
        each answering with ``work(k)`` for run ``k`` (which must pickle), after calling
        ``setup()`` once, if given."""
        # pickle is imported once here, before the fork, not by each worker after it: there it
        # took 9 to 14 ms, competing for the cores with the other worker and the main process.
        import pickle  # noqa: F401

        try:
            for _ in range(workers):
                self._fork(work, setup)
        except BaseException:
            self.cancel()
            raise

    def _fork(self, work: Callable[[int], Any], setup: Callable[[], object] | None) -> None:
        answers = _answer_file()
        try:
            read, write = os.pipe()
        except BaseException:
            os.close(answers)
            raise
        try:
            pid = os.fork()
        except BaseException:
            for fd in (answers, read, write):
                os.close(fd)
            raise
        if pid == 0:  # the worker
            code = 1
            try:
                os.close(read)

                def report(k: int, data: bytes) -> None:
                    _write_all(answers, data)  # first: the notice says it is there
                    _write_all(write, k.to_bytes(_TOKEN, "little") + len(data).to_bytes(8, "little"))

                if setup is not None:
                    setup()
                self.serve(work, report)
                code = 0
            except BaseException:  # the caller does the run again, and meets the error there
                self.stop()
            finally:
                os._exit(code)  # no atexit handler, no flush of what the main process buffered
        os.close(write)  # the worker's own: the pipe ends when the worker does
        self._workers.append(_Worker(pid, read, answers))

    def serve(self, work: Callable[[int], Any], report: Callable[[int, bytes], object]) -> None:
        """A worker's loop: each run taken, answered by ``work`` and reported, pickled, to
        ``report``. (In a worker, ``report`` writes to its file and pipe; a test may call it in
        its own process.)"""
        import pickle  # (imported already, by start())

        while (k := self.take()) is not None:
            report(k, pickle.dumps(work(k), pickle.HIGHEST_PROTOCOL))

    def take(self) -> int | None:
        """The next run's number, or None once every run is taken or the crew is stopped."""
        return None if self._stop[0] or self.tokens < 0 else take(self.tokens)

    def stop(self) -> None:
        """Have every process take no more runs (the runs taken are still answered)."""
        self._stop[0] = 1

    @property
    def stopped(self) -> bool:
        return bool(self._stop[0])

    def answers(self) -> Iterator[tuple[int, Any]]:
        """(run number, answer) for each run a worker answers, as they come, until every worker
        has ended; then the workers are gone. A run taken by a worker that died is not among
        them."""
        import pickle

        live = {w.notices: w for w in self._workers}
        poller = select.poll()
        for fd in live:
            poller.register(fd, select.POLLIN)
        while live:
            for fd, _ in poller.poll():
                worker = live[fd]
                got = os.read(fd, _NOTICES_READ)
                if not got:  # the worker has ended
                    poller.unregister(fd)
                    del live[fd]
                    continue
                # Whole notices only: each went in with one write of 12 bytes, which a pipe
                # never splits, and a read of a multiple of 12 bytes takes whole ones.
                if len(got) % _NOTICE:
                    raise OSError(f"a worker's notices came in pieces ({len(got)} bytes)")
                for at in range(0, len(got), _NOTICE):
                    k = int.from_bytes(got[at : at + _TOKEN], "little")
                    size = int.from_bytes(got[at + _TOKEN : at + _NOTICE], "little")
                    data = self._read(worker, size)
                    yield k, pickle.loads(data)
        self.cancel()

    def in_order(self, redo: Callable[[int], Any]) -> Iterator[tuple[int, Any]]:
        """(run number, answer) for every run, in run order, each as soon as it and those before
        it are in. A run no worker answered (its worker died, or failed on it, or the crew was
        stopped before it was taken) is answered by ``redo(k)`` in this process, once the
        workers are gone: an error it raises is raised here."""
        done: dict[int, Any] = {}
        after = 0  # the first run not yet given out
        for k, answer in self.answers():
            done[k] = answer
            while after in done:
                yield after, done.pop(after)
                after += 1
        for k in range(after, self.count):
            yield k, done.pop(k) if k in done else redo(k)

    @staticmethod
    def _read(worker: _Worker, size: int) -> bytes:
        parts: list[bytes] = []
        left = size
        while left:
            part = os.pread(worker.answers, left, worker.offset)
            if not part:
                raise OSError(f"a worker's answers end {left} bytes early")
            parts.append(part)
            worker.offset += len(part)
            left -= len(part)
        return b"".join(parts)

    def cancel(self) -> None:
        """Stop the workers, wait for them to end, and let go of the pipes and files (safe to
        call twice; the workers that already ended are only waited for)."""
        workers, self._workers = self._workers, []
        for worker in workers:
            try:
                os.kill(worker.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for worker in workers:
            try:
                os.waitpid(worker.pid, 0)
            except ChildProcessError:  # (reaped already, where SIGCHLD is ignored)
                pass
            os.close(worker.notices)
            os.close(worker.answers)
        if self.tokens >= 0:
            os.close(self.tokens)
            self.tokens = -1
