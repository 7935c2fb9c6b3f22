"""A head start for verify's pass over a kit of many small files.

Before verify can scan a single file it reads and checks index.json, matches it to the kit's
listing and renders the pages its plan compares against: a third of a second for a kit of
100,000 files, with every other core idle. Most of those files hold nothing any search finds
(:func:`kitbuild.speedups.quiet`), and for such a file the plan's other parts (which files are
records, which paths a record may pair with, which pages to compare) change nothing: its size
and digest are all its scan holds. The placeholders and rule words that ``quiet`` looks for come
from provenance.json alone.

So as soon as provenance.json is read and the kit listed, ``jobs - 1`` worker processes start on
the small files below the kit's root, with that partial plan: each file comes back as its size and
digest, or as deferred when something in it needs the whole plan (or it is larger than
:data:`SMALL`, or cannot be opened). The runs of files are handed out through a pipe holding their
numbers, so that when the main process has its whole plan it joins in, taking runs from the same
pipe and scanning them in full, until none is left. Whatever is deferred or was never taken goes
through :func:`kitbuild.filescan.scan_files` with the whole plan; the report is the same as
without a head start.

A worker that finds most of a run deferred (a kit whose small files print digests) stops, and
tells the main process to stop taking runs too: the full pass, in every core, is then the faster
way through the rest.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
from multiprocessing.connection import Connection
from typing import AbstractSet, Sequence

from kitbuild.filescan import FileScan, Receiver, ScanPlan, Sent, quiet_run, sent_small
from kitbuild.kitfs import KitFS
from kitbuild.memory import collector_paused
from kitbuild.progress import Progress

# A file is scanned ahead only up to this size: one read, in the CPU's cache. Larger files are
# few in a kit of many files and take the full pass, which balances them by size.
SMALL = 64 << 10
# Files per run: small enough that the last runs end together, large enough that handing one
# out costs nothing next to scanning it.
RUN = 256
# At most this many runs (longer ones for a bigger kit): their numbers go into the pipe before
# any worker reads it, and a write that did not fit would wait for a reader. 4 KiB of numbers
# fit any pipe: one holds a page at least (64 KiB on Linux, unless its user holds too many).
MAX_RUNS = 1024
# Below this many files the workers' start costs about what they would save.
MIN_FILES = 2000
_TOKEN = 4  # bytes per run number in the pipe


def _runs(paths: Sequence[str]) -> list[list[str]]:
    size = max(RUN, -(-len(paths) // MAX_RUNS))
    return [list(paths[i : i + size]) for i in range(0, len(paths), size)]


def _pipe_of_runs(count: int) -> int:
    """The read end of a pipe holding the numbers 0 to ``count - 1`` (at most MAX_RUNS), its
    write end closed, so that a reader finds the end once every number is taken."""
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


def _take(tokens: int) -> int | None:
    """The number of the next run no one has taken, or None when all are taken.

    A read of one number's bytes from the pipe is atomic: the kernel holds the pipe's lock for
    the whole read, and every number went in with the same width."""
    got = os.read(tokens, _TOKEN)
    return int.from_bytes(got, "little") if got else None


# A run as a worker sends it: its number, each file's size (-1: deferred) and the files' raw
# digests one after another (zeros where deferred). Sent as (size, hex digest) pairs, the answers
# for 100,000 files, all taken in at once, raised verify's peak memory by 9 MiB.
_Packed = tuple[int, list[int], bytes]


def _work(kit: KitFS, plan: ScanPlan, runs: list[list[str]], tokens: int, stop: mmap.mmap, out: Connection) -> None:
    """A worker: take runs until none is left (or the main process is told to stop), then send
    each run taken, packed (see :data:`_Packed`)."""
    done: list[_Packed] = []
    with collector_paused():
        while not stop[0] and (k := _take(tokens)) is not None:
            sizes, digests = quiet_run(kit, runs[k], plan, SMALL)
            done.append((k, sizes, digests))
            if sizes.count(-1) * 2 > len(sizes):
                stop[0] = 1
    out.send(done)
    out.close()


class Prescan:
    """Workers scanning small quiet files ahead of the plan (see the module doc)."""

    def __init__(self, kit: KitFS, paths: Sequence[str], plan: ScanPlan, jobs: int) -> None:
        """Start ``jobs - 1`` workers on ``paths`` with ``plan`` (its placeholders and words are
        the whole plan's; nothing else of it is used)."""
        self.kit = kit
        self.runs = _runs(paths)
        self.stop = mmap.mmap(-1, 1)  # shared with the workers: set when they find little quiet
        self.workers: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
        self.tokens = read = _pipe_of_runs(len(self.runs))
        context = multiprocessing.get_context("fork")
        try:
            for _ in range(jobs - 1):
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_work, args=(kit, plan, self.runs, read, self.stop, send), daemon=True)
                process.start()
                send.close()
                self.workers.append((process, receive))
        except BaseException:
            self.cancel()
            raise

    @staticmethod
    def wanted(files: int, jobs: int, sequential: bool, sizes: Sequence[int] = ()) -> bool:
        """Whether a head start can pay, and can be had: several cores, a folder kit, many
        files, most of them small (judged by ``sizes``, a sample of the listed sizes, when there
        is one), and workers that start as copies of this process (they share its pipe and flag).

        A kit of 2,000 records of 400 KiB has many files but no small one: a head start would
        leave every file to the full pass, and while it runs verify keeps the full pass from
        starting before the schemas and pages are checked (0.18 s of verify B)."""
        mostly_small = not sizes or sum(1 for n in sizes if n <= SMALL) * 2 > len(sizes)
        return jobs > 1 and not sequential and files >= MIN_FILES and mostly_small and "fork" in multiprocessing.get_all_start_methods()

    def finish(self, plan: ScanPlan, skip: AbstractSet[str], progress: Progress, out: dict[str, FileScan], loud: list[str]) -> None:
        """Join the workers with the whole ``plan`` until every run is taken, then add to ``out``
        the scans of the files finished, but those in ``skip`` (and to ``loud`` the paths of those
        holding more than a size and a digest, see :func:`kitbuild.filescan.scan_files`). The
        files not in ``out`` afterwards are left to the full pass."""
        taken: dict[int, tuple[list[int], bytes]] = {}
        whole: dict[int, list[tuple[int, Sent | None]]] = {}  # run -> (index, scan) of its loud files
        try:
            with collector_paused():
                while not self.stop[0] and (k := _take(self.tokens)) is not None:
                    # The quiet files as a worker tests them, then the others with the whole plan.
                    run = self.runs[k]
                    taken[k] = quiet_run(self.kit, run, plan, SMALL)
                    sizes = taken[k][0]
                    whole[k] = [(i, sent_small(self.kit, run[i], plan, SMALL)) for i, n in enumerate(sizes) if n < 0]
                for process, receive in self.workers:
                    try:
                        taken.update((k, (sizes, digests)) for k, sizes, digests in receive.recv())
                    except (EOFError, OSError):
                        pass  # a worker that died: the full pass takes its runs
                    process.join()
        finally:
            self.cancel()
        receiver = Receiver(plan)
        for k in sorted(taken):
            sizes, digests = taken.pop(k)  # (each run's answers freed once its scans are made)
            run, scanned = self.runs[k], whole.pop(k, ())
            if scanned or not skip.isdisjoint(run):  # (most runs are all quiet, none skipped)
                sizes = [-1 if p in skip else n for p, n in zip(run, sizes)]
                kept = [(run[i], scan) for i, scan in scanned if scan is not None and run[i] not in skip]
                progress.advance(len(kept), receiver.receive([p for p, _ in kept], [scan for _, scan in kept], out, loud))
            progress.advance(*receiver.receive_quiet(run, sizes, digests, out))

    def cancel(self) -> None:
        """Stop the workers and let go of the pipe (safe to call twice)."""
        for process, receive in self.workers:
            if process.is_alive():
                process.terminate()
                process.join()
            receive.close()
        self.workers = []
        if self.tokens >= 0:
            os.close(self.tokens)
            self.tokens = -1
