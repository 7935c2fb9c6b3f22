"""Reading a large file through memory maps, hashed on the CPU's SHA extensions as it is read.

Reading a file copies it from the page cache into a buffer, and on the machines kitbuild is
measured on that copy costs a quarter as much again as hashing the buffer (see
``kitbuild/_sha256.c``). Where the compiled hash runs, verify maps a large file a few MiB at a
time and hashes the map itself, copying each block into its scan's window as it hashes it: one
pass over the bytes for the digest, the scans then search what is in the CPU's cache.

Where it does not (no C compiler at install, a CPU without the SHA extensions, a system without
``MAP_POPULATE``, ``KITBUILD_PURE_PYTHON=1``), ``ACCELERATED`` is False and files are read as
before. The digest is the same either way; tests hold the compiled hash to hashlib's.
"""

from __future__ import annotations

import mmap
import os
from typing import Iterator, Protocol

from kitbuild.speedups import Data

# How much of a file is mapped at once: large enough that mapping costs little per byte, small
# enough that the pages a worker holds mapped (they count as its resident memory) stay few.
WINDOW = 8 << 20


class Hasher(Protocol):
    def update(self, data: Data | memoryview, /) -> None: ...

    def update_into(self, data: mmap.mmap, start: int, stop: int, window: bytearray, keep: int, /) -> None: ...

    def hexdigest(self) -> str: ...


ACCELERATED = False
_Sha256: type | None = None

if not os.environ.get("KITBUILD_PURE_PYTHON") and hasattr(mmap, "MAP_POPULATE"):
    try:
        from kitbuild import _sha256
    except ImportError:  # installed without a C compiler: files are read, not mapped
        pass
    else:
        if _sha256.ACCELERATED:
            _Sha256 = _sha256.Sha256
            ACCELERATED = True


def sha256() -> Hasher:
    """A new compiled SHA-256 (only where ``ACCELERATED``)."""
    if _Sha256 is None:
        raise RuntimeError("the compiled SHA-256 is not available here")
    hasher: Hasher = _Sha256()
    return hasher


def windows(fd: int, size: int) -> Iterator[mmap.mmap]:
    """``fd``'s first ``size`` bytes as maps of ``WINDOW`` bytes (the last one shorter), each
    unmapped once the next is asked for. The pages are mapped up front (``MAP_POPULATE``): one
    system call for a window's page-table entries, instead of a fault per page as it is read."""
    flags = mmap.MAP_SHARED | mmap.MAP_POPULATE
    for at in range(0, size, WINDOW):
        with mmap.mmap(fd, min(WINDOW, size - at), flags=flags, prot=mmap.PROT_READ, offset=at) as window:
            yield window
