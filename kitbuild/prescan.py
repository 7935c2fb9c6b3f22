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
numbers (:mod:`kitbuild.crew`), so that when the main process has its whole plan it joins in,
taking runs from the same pipe and scanning them in full, until none is left. Whatever is
deferred or was never taken goes through :func:`kitbuild.filescan.scan_files` with the whole
plan; the report is the same as without a head start.

A worker that finds most of a run deferred (a kit whose small files print digests) stops, and
tells the main process to stop taking runs too: the full pass, in every core, is then the faster
way through the rest.
"""

from __future__ import annotations

import functools
from typing import AbstractSet, Sequence

from kitbuild import crew
from kitbuild.crew import Crew
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
# At most this many runs (longer ones for a bigger kit): see kitbuild.crew.MAX_RUNS.
MAX_RUNS = crew.MAX_RUNS
# Below this many files the workers' start costs about what they would save.
MIN_FILES = 2000


def _runs(paths: Sequence[str]) -> list[list[str]]:
    size = max(RUN, -(-len(paths) // MAX_RUNS))
    return [list(paths[i : i + size]) for i in range(0, len(paths), size)]


# A run as a worker answers it: each file's size (-1: deferred) and the files' raw digests one
# after another (zeros where deferred). Sent as (size, hex digest) pairs, the answers for 100,000
# files, all taken in at once, raised verify's peak memory by 9 MiB.
_Packed = tuple[list[int], bytes]


def _work(kit: KitFS, plan: ScanPlan, runs: list[list[str]], team: Crew, k: int) -> _Packed:
    """A worker's answer for run ``k``. A run mostly deferred (a kit whose small files print
    digests) stops the crew: the full pass, in every core, is then the faster way through the
    rest."""
    with collector_paused():
        sizes, digests = quiet_run(kit, runs[k], plan, SMALL)
    if sizes.count(-1) * 2 > len(sizes):
        team.stop()
    return sizes, digests


class Prescan:
    """Workers scanning small quiet files ahead of the plan (see the module doc)."""

    def __init__(self, kit: KitFS, paths: Sequence[str], plan: ScanPlan, jobs: int) -> None:
        """Start ``jobs - 1`` workers on ``paths`` with ``plan`` (its placeholders and words are
        the whole plan's; nothing else of it is used)."""
        self.kit = kit
        self.runs = _runs(paths)
        self.crew = Crew(len(self.runs))
        self.crew.start(jobs - 1, functools.partial(_work, kit, plan, self.runs, self.crew))

    @staticmethod
    def wanted(files: int, jobs: int, sequential: bool, sizes: Sequence[int] = ()) -> bool:
        """Whether a head start can pay, and can be had: several cores, a folder kit, many
        files, most of them small (judged by ``sizes``, a sample of the listed sizes, when there
        is one), and workers that start as copies of this process (they share its pipe and flag).

        A kit of 2,000 records of 400 KiB has many files but no small one: a head start would
        leave every file to the full pass, and while it runs verify keeps the full pass from
        starting before the schemas and pages are checked (0.18 s of verify B)."""
        mostly_small = not sizes or sum(1 for n in sizes if n <= SMALL) * 2 > len(sizes)
        return jobs > 1 and not sequential and files >= MIN_FILES and mostly_small and crew.AVAILABLE

    def finish(self, plan: ScanPlan, skip: AbstractSet[str], progress: Progress, out: dict[str, FileScan], loud: list[str]) -> None:
        """Join the workers with the whole ``plan`` until every run is taken, then add to ``out``
        the scans of the files finished, but those in ``skip`` (and to ``loud`` the paths of those
        holding more than a size and a digest, see :func:`kitbuild.filescan.scan_files`). The
        files not in ``out`` afterwards are left to the full pass."""
        taken: dict[int, tuple[list[int], bytes]] = {}
        whole: dict[int, list[tuple[int, Sent | None]]] = {}  # run -> (index, scan) of its loud files
        try:
            with collector_paused():
                while (k := self.crew.take()) is not None:
                    # The quiet files as a worker tests them, then the others with the whole plan.
                    run = self.runs[k]
                    taken[k] = quiet_run(self.kit, run, plan, SMALL)
                    sizes = taken[k][0]
                    whole[k] = [(i, sent_small(self.kit, run[i], plan, SMALL)) for i, n in enumerate(sizes) if n < 0]
                # (A run taken by a worker that died is not among its answers: the full pass
                # takes its files.)
                taken.update(self.crew.answers())
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
        self.crew.cancel()
