"""Work on many files spread over worker processes (concurrent.futures), results in input order.

The per-file pass is Python (the searches) around hashlib (which releases the GIL): threads
would leave every search to one core, so the workers are processes. Files go out in batches,
a few per worker at a time, so a kit of 100,000 small files costs a few hundred round trips,
not 100,000; what every batch needs (the plan, the kit's reader) is sent once per worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator, Sequence, TypeVar

from kitbuild.hashing import set_spare, spare_core
from kitbuild.progress import SILENT, Progress

T = TypeVar("T")
R = TypeVar("R")

# Below this much work the workers' start costs more than they save.
SERIAL_FILES = 16
SERIAL_BYTES = 32 << 20
BATCHES_PER_WORKER = 8
MAX_BATCH_FILES = 256
# Workers a pass starts at most, a core: the work is the processor's, and '--jobs 100000' on
# a kit of 100,000 files started a process a file.
MAX_JOBS_PER_CORE = 4

_STATE: Any = None


def default_jobs() -> int:
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# Ctrl-C in a terminal reaches every process of its group, the workers too. Only the main process
# answers it (it stops the build and removes its staging folder); a worker that took it would
# print its own traceback, and one that died while the pool fed it could leave the main process
# waiting for ever. A worker starts with both signals held (see _held), and ignores Ctrl-C; a
# SIGTERM ends it quietly (it inherits the handler a build sets for its own SIGTERM).
_STOPS = (signal.SIGINT, signal.SIGTERM)


def _setup(state: Any, spare: bool) -> None:
    global _STATE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    _STATE = state
    set_spare(spare)


@contextlib.contextmanager
def _held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held while the workers are made (forked with this mask), delivered after."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the workers now: a stopped build must not wait for every batch, nor leave a worker
    writing into a staging folder that is being removed."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # (shutdown forgets them)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(5)


def _run(work: Callable[[Any, T], R], batch: Sequence[T]) -> list[R]:
    return [work(_STATE, item) for item in batch]


def batches(items: Sequence[T], weights: Sequence[int], jobs: int) -> list[list[T]]:
    """``items`` cut, in order, into runs of about equal weight (bytes) and count, about
    :data:`BATCHES_PER_WORKER` per worker: enough to balance the load at the end."""
    parts = max(1, jobs * BATCHES_PER_WORKER)
    weight_share = max(1, sum(weights) // parts)
    count_share = max(1, min(MAX_BATCH_FILES, -(-len(items) // parts)))
    out: list[list[T]] = []
    run: list[T] = []
    weight = 0
    for item, w in zip(items, weights):
        run.append(item)
        weight += w
        if weight >= weight_share or len(run) >= count_share:
            out.append(run)
            run, weight = [], 0
    if run:
        out.append(run)
    return out


def map_files(
    work: Callable[[Any, T], R],
    state: Any,
    items: Sequence[T],
    weights: Sequence[int],
    jobs: int,
    progress: Progress = SILENT,
    sequential: bool = False,
    shown: Sequence[tuple[int, int]] | None = None,
) -> list[R]:
    """``[work(state, item) for item in items]``, on ``jobs`` worker processes where it pays.

    ``work`` must be a module-level function and ``state`` picklable: each worker gets ``state``
    once. ``weights`` (bytes, as far as known) balance the batches and move ``progress``.
    ``sequential``: the items must be taken in order, in this process (an archive read as one
    compressed stream). ``shown``: (files, bytes) each item moves ``progress`` by, where that is
    not (1, its weight): parts of one file (kitbuild.parts).
    """

    def moves(i: int) -> tuple[int, int]:
        # (Not a list made for every item: a kit of 100,000 files would hold 6 MB more.)
        return shown[i] if shown is not None else (1, weights[i])

    jobs = min(jobs, MAX_JOBS_PER_CORE * default_jobs())
    small = len(items) < SERIAL_FILES and sum(weights) < SERIAL_BYTES
    # With more than one job, a large file's SHA-256 may run beside the rest of its pass
    # (kitbuild.hashing) where a core would otherwise wait: files read in order in one process,
    # or one file heavier than a worker's share of the whole (the others done, it runs alone).
    # Where every worker has its share, a thread more only competes for the cores (verify of
    # 2 GiB in 8 files: 3 % slower).
    spare = jobs > 1 and (sequential or max(weights, default=0) * jobs > sum(weights))
    if jobs <= 1 or sequential or small or len(items) < 2:
        out = []
        with spare_core(spare):
            for i, item in enumerate(items):
                out.append(work(state, item))
                progress.advance(*moves(i))
        return out
    runs = batches(list(range(len(items))), list(weights), jobs)
    results: list[list[R]] = []
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(runs)), initializer=_setup, initargs=(state, spare))
    try:
        with _held():
            futures = [pool.submit(_run, work, [items[i] for i in run]) for run in runs]
        for run, future in zip(runs, futures):
            results.append(future.result())
            progress.advance(sum(moves(i)[0] for i in run), sum(moves(i)[1] for i in run))
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()
    return [r for batch in results for r in batch]

