"""Memory on the hot paths: the C allocator's thresholds, the cyclic collector, reused buffers,
and the tables a command that ends its process need not free.

A build rewrites text in chunks of 1 MiB, and each chunk read, each substitution's result and each
join is a fresh block of about that size. glibc hands blocks that large to the kernel as new
mappings, or trims them from the heap when freed, so every chunk costs hundreds of page faults
(a quarter of a build's time in the kernel, measured on workload B: 347,000 faults for 256 MiB).
:func:`keep_freed_blocks` has glibc keep them in the heap, below a ceiling. The worker processes
ask for it: they hold a chunk or two at a time. The main process holds a kit's results and must
give memory back, so when it runs the files itself (one job) it asks only while it does
(:func:`freed_blocks_kept`): a one-job build of workload A took 4.2 to 4.4 s without, 3.1 to
3.4 s with, its time in the kernel halved.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
from typing import Any, Callable, Iterator

# mallopt(3) parameters, from glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks up to this size come from the heap; freed heap memory up to this much is kept.
_MMAP_FROM = 32 << 20
_TRIM_ABOVE = 128 << 20


# glibc's own starting values for both (it raises them as it goes, until a program sets them).
_DEFAULT_THRESHOLD = 128 << 10


@functools.lru_cache(maxsize=None)
def _libc() -> Any:
    """This process's C library, if it is glibc on Linux (it has mallopt); else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a build asks, and it costs every command 3 ms to import

    try:
        libc = ctypes.CDLL(None)  # this process's own C library
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return libc


def keep_freed_blocks() -> bool:
    """Ask glibc to serve big blocks from the heap and keep them once freed; False elsewhere."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_FROM)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_ABOVE))


@contextlib.contextmanager
def freed_blocks_kept() -> Iterator[bool]:
    """:func:`keep_freed_blocks` for the block (whether glibc agreed is what it yields); then
    glibc's starting thresholds again, and the memory it kept given back to the system."""
    kept = keep_freed_blocks()
    try:
        yield kept
    finally:
        if kept:
            libc = _libc()
            libc.mallopt(_M_MMAP_THRESHOLD, _DEFAULT_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_THRESHOLD)
            libc.malloc_trim(0)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block.

    Listing and scanning a kit makes a few objects per file and no reference cycles; with
    100,000 files, the collector's repeated passes over everything still alive cost about a
    tenth of the work. Reference counting frees all of it as before.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _KEPT is not None:
                # The process ends right after the command, and all there is now lives until
                # then: the collector's first pass after the pause would walk every object the
                # block made (55 ms after a verify of 100,000 files) to free none of them.
                gc.freeze()
            gc.enable()


# Block buffers not in use, kept for the next reader in this process.
_SPARE: list[bytearray] = []


def read_blocks(readinto: Callable[[bytearray], int], size: int) -> Iterator[memoryview]:
    """Blocks of up to ``size`` bytes, each read (by ``readinto``) into one buffer that is reused
    for every block and, once done, by the next reader: no allocation and no fresh pages per
    block. Each block is a view that the next read overwrites; the caller copies what it keeps.
    """
    # Taken out of the spares while this reader runs: another reader beside it gets its own.
    at = next((i for i, b in enumerate(_SPARE) if len(b) == size), None)
    stage = bytearray(size) if at is None else _SPARE.pop(at)
    try:
        view = memoryview(stage)
        while n := readinto(stage):
            yield view[:n]
    finally:
        _SPARE.append(stage)
        del _SPARE[:-2]  # two at most: the newest


# Set by the command line (kitbuild.entry.main), whose process ends with os._exit once the output
# is out: what :func:`keep_until_exit` is given then stays here, and is never freed at all.
_KEPT: list[object] | None = None


def keep_until_exit(*tables: object) -> None:
    """Keep ``tables`` alive until the process ends, when it ends right after the command.

    A verify of 100,000 files ends holding millions of small objects (a scan, an index entry, a
    listing entry per file); freeing them one by one as the command returns took 35 ms, after
    its work was done. Called as a library, where the memory must come back, this does nothing.
    """
    if _KEPT is not None:
        _KEPT.extend(tables)


def keep_tables_until_exit() -> None:
    """From now on, :func:`keep_until_exit` keeps what it is given (see :func:`kitbuild.entry.main`)."""
    global _KEPT
    if _KEPT is None:
        _KEPT = []
