"""Reading a large file through memory maps, hashed on the CPU's SHA extensions as it is read.

Reading a file copies it from the page cache into a buffer, and on the machines kitbuild is
measured on that copy costs a quarter as much again as hashing the buffer (see
``kitbuild/_sha256.c``). Where the compiled hash runs, verify maps a large file a few MiB at a
time and hashes the map itself, copying each block into its scan's window as it hashes it: one
pass over the bytes for the digest, the scans then search what is in the CPU's cache.

The same compiled hash serves verify's head start over many small files (``hash_files``): a
run of files in one folder opened, read, tested and hashed in one call. Files read whole are
hashed several at once (``digest_batch``): sixteen side by side in AVX-512 registers where the
processor has AVX-512BW (``digest_many``), else two interleaved on the SHA extensions.

Where it does not (no C compiler at install, a CPU without the SHA extensions, a system without
``MAP_POPULATE``, ``KITBUILD_PURE_PYTHON=1``), ``ACCELERATED`` is False and files are read as
before. The digest is the same either way; tests hold the compiled hash to hashlib's.
"""

from __future__ import annotations

import mmap
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from kitbuild.speedups import Data

if TYPE_CHECKING:
    from kitbuild._sha256 import Sha256

# How much of a file is mapped at once: large enough that mapping costs little per byte, small
# enough that the pages a worker holds mapped (they count as its resident memory) stay few.
WINDOW = 8 << 20


class Hasher(Protocol):
    """What a scan's digest is: hashlib's SHA-256 or the compiled one."""

    def update(self, data: Data | memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


ACCELERATED = False
_Sha256: type[Sha256] | None = None

if not os.environ.get("KITBUILD_PURE_PYTHON") and hasattr(mmap, "MAP_POPULATE"):
    try:
        import kitbuild._sha256 as _sha256
    except ImportError:  # installed without a C compiler: files are read, not mapped
        pass
    else:
        if _sha256.ACCELERATED:
            _Sha256 = _sha256.Sha256
            ACCELERATED = True

# Whether hash_files runs here: the compiled hash, on a system with openat (not Windows).
FILES = ACCELERATED and hasattr(_sha256, "hash_files")


def sha256() -> Sha256:
    """A new compiled SHA-256 (only where ``ACCELERATED``)."""
    if _Sha256 is None:
        raise RuntimeError("the compiled SHA-256 is not available here")
    return _Sha256()


def new_hash() -> Hasher:
    """A new SHA-256: the compiled one where it runs, else hashlib's, which is imported only
    then (loading OpenSSL took 3 ms of verify's main process, for its few small files)."""
    if _Sha256 is not None:
        return _Sha256()
    import hashlib

    return hashlib.sha256()


def hexdigest(data: Data) -> str:
    """``data``'s hex SHA-256 (see :func:`new_hash`)."""
    digest = new_hash()
    digest.update(data)
    return digest.hexdigest()


def windows(fd: int, size: int) -> Iterator[mmap.mmap]:
    """``fd``'s first ``size`` bytes as maps of ``WINDOW`` bytes (the last one shorter), each
    unmapped once the next is asked for. The pages are mapped up front (``MAP_POPULATE``): one
    system call for a window's page-table entries, instead of a fault per page as it is read."""
    flags = mmap.MAP_SHARED | mmap.MAP_POPULATE
    for at in range(0, size, WINDOW):
        with mmap.mmap(fd, min(WINDOW, size - at), flags=flags, prot=mmap.PROT_READ, offset=at) as window:
            yield window


def update_pair(a: Sha256, a_data: mmap.mmap, a_start: int, a_stop: int, a_window: bytearray, a_keep: int, b: Sha256, b_data: mmap.mmap, b_start: int, b_stop: int, b_window: bytearray, b_keep: int) -> None:
    """``a.update_into(...)`` and ``b.update_into(...)`` in one compiled call, the two files'
    blocks hashed side by side: 20 % faster than one after the other (see kitbuild/_sha256.c).
    On an OSError (a map that faulted) both hashes are spoilt."""
    _sha256.update_pair(a, a_data, a_start, a_stop, a_window, a_keep, b, b_data, b_start, b_stop, b_window, b_keep)


def hash_files(dir_fd: int, names: list[str], limit: int, test: Callable[[Any, Any], object], arg: Any) -> tuple[list[int], bytes]:
    """For each of ``names`` in the folder open as ``dir_fd``: when it is a regular file of at
    most ``limit`` bytes, read whole, and ``test(its bytes, arg)`` is true, its size and raw
    SHA-256; otherwise -1 and 32 zero bytes (the caller scans that file its own way). The sizes
    come as a list, the digests one after another (only where ``FILES``).

    ``test`` sees a memoryview that is valid only while it runs (keeping it is a RuntimeError)."""
    return _sha256.hash_files(dir_fd, names, limit, test, arg)


# How many files read whole a worker hashes at once: sixteen where the compiled hash can take
# them side by side in vector registers (``digest_many``), else two or three on the SHA
# extensions, whichever this processor hashes faster (timed when the module loads: three on an
# AMD EPYC of Zen 3, 3.29 GB/s on one core against 2.98 for two; two on one of Zen 2, 2.86
# against 2.39).
SIDE_BY_SIDE = _sha256.SIDE_BY_SIDE if ACCELERATED else 2
BATCH = 16 if ACCELERATED and getattr(_sha256, "MANY", 0) == 16 else SIDE_BY_SIDE
# Fewer buffers than this go two or three at a time: digest_many would finish them on the SHA
# extensions anyway (its MANY_FROM), after setting up sixteen lanes for nothing.
_MANY_FROM = 8


def digest_batch(datas: list[bytes]) -> list[str]:
    """The hex SHA-256 of each of up to :data:`BATCH` buffers (only where ``ACCELERATED``): all
    at once where there are eight or more and ``digest_many`` runs, otherwise
    :data:`SIDE_BY_SIDE` at a time, then a pair or one for what is left."""
    if BATCH == 16 and len(datas) >= _MANY_FROM:
        return _sha256.digest_many(tuple(datas))
    out: list[str] = []
    whole = len(datas) - len(datas) % 3 if SIDE_BY_SIDE == 3 else 0
    for k in range(0, whole, 3):
        out.extend(digest_three(datas[k], datas[k + 1], datas[k + 2]))
    for k in range(whole, len(datas) - 1, 2):
        out.extend(digest_pair(datas[k], datas[k + 1]))
    if (len(datas) - whole) % 2:
        out.append(hexdigest(datas[-1]))
    return out


def digest_three(a: Data, b: Data, c: Data) -> tuple[str, str, str]:
    """The hex SHA-256 of three buffers, their blocks hashed side by side (only where
    ``ACCELERATED``; see kitbuild/_sha256.c)."""
    return _sha256.digest_three(a, b, c)


def digest_pair(a: Data, b: Data) -> tuple[str, str]:
    """The hex SHA-256 of two buffers, their blocks hashed side by side (only where
    ``ACCELERATED``): 1.8 times hashlib's speed for files of a few hundred KiB."""
    return _sha256.digest_pair(a, b)
