"""A file's SHA-256, computed beside the rest of the pass over it.

hashlib lets go of the GIL while it hashes a block, so a large block is hashed in a thread while
the pass searches the same block: one file is one SHA-256 stream, and on its own it would keep
one core busy for the hash and then the search (verify of one file of 2 GiB, bench workload D).
Blocks are hashed in order: each waits for the one before. Only where a core is to spare
(:func:`spare_core`: ``--jobs`` more than one); ``--jobs 1`` keeps to one core.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterator

# Smaller blocks are hashed in line: handing one to the thread costs more than it saves.
THREADED = 256 << 10
# The first bytes of a file whose digest the pass keeps too (BlockHasher.heads): what
# croissant.json's RecordSets read of a tabular file (kitbuild.croissant), so a check that reads
# them again judges the bytes the pass read. Each costs a copy of the hash's state, no hashing.
HEADS = (64 << 10, 1 << 20)
_pool: tuple[int, ThreadPoolExecutor] | None = None
_spare = False


@contextlib.contextmanager
def spare_core(spare: bool) -> Iterator[None]:
    """Within: large blocks are hashed in a thread if ``spare`` (see :func:`set_spare`)."""
    global _spare, _pool
    saved, _spare = _spare, spare
    try:
        yield
    finally:
        _spare = saved
        # No thread is left waiting in a process that may fork workers next (a forked child
        # holds a copy of every lock another thread held).
        if not saved and _pool is not None:
            if _pool[0] == os.getpid():
                _pool[1].shutdown(wait=True)
            _pool = None


def set_spare(spare: bool) -> None:
    """For a worker process, for its life: whether it may hash large blocks in a thread."""
    global _spare
    _spare = spare


def _thread() -> ThreadPoolExecutor:
    # One per process: a worker forked from a process that had one has not its thread.
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="kitbuild-sha256"))
    return _pool[1]


class BlockHasher:
    """hashlib.sha256 fed block by block, large blocks in a thread. ``heads``: the sha256 of the
    first HEADS[i] bytes, for each of HEADS fed so far."""

    __slots__ = ("_hash", "_pending", "_fed", "heads")

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._pending: Future[None] | None = None
        self._fed = 0
        self.heads: tuple[str, ...] = ()

    def update(self, data: bytes) -> None:
        while self._fed < HEADS[-1] and self._fed + len(data) >= HEADS[len(self.heads)]:
            # A head's end, once a file: hashed up to it, and the digest of a copy kept.
            cut = HEADS[len(self.heads)] - self._fed
            self._update(data[:cut])
            self._wait()
            self.heads += (self._hash.copy().hexdigest(),)
            data = data[cut:]
        self._update(data)

    def _update(self, data: bytes) -> None:
        self._fed += len(data)
        self._wait()
        # Only bytes, which cannot change while the thread reads them.
        if _spare and len(data) >= THREADED and type(data) is bytes:
            self._pending = _thread().submit(self._hash.update, data)
        else:
            self._hash.update(data)

    def hexdigest(self) -> str:
        self._wait()
        return self._hash.hexdigest()

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()
