"""A file's SHA-256 with large blocks hashed in a thread (kitbuild/hashing.py): the digest is
hashlib's whatever the blocks, in this process and in forked workers, and --jobs 1 starts no
thread."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from kitbuild import hashing
from kitbuild.hashing import BlockHasher, spare_core
from kitbuild.parallel import SERIAL_BYTES, map_files


def digest_of(blocks: list[bytes]) -> str:
    hasher = BlockHasher()
    for block in blocks:
        hasher.update(block)
    return hasher.hexdigest()


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from([0, 1, 100, hashing.THREADED - 1, hashing.THREADED, hashing.THREADED + 7]), max_size=8), st.booleans())
def test_the_digest_is_hashlibs_however_the_blocks_come(sizes, spare):
    blocks = [bytes([len(sizes) + i]) * n for i, n in enumerate(sizes)]
    with spare_core(spare):
        assert digest_of(blocks) == hashlib.sha256(b"".join(blocks)).hexdigest()


def test_a_bytearray_is_hashed_in_line_as_it_is_when_given():
    # The thread may read a block after update returns: a buffer that can change is not sent.
    block = bytearray(hashing.THREADED)
    with spare_core(True):
        hasher = BlockHasher()
        hasher.update(block)
        block[:] = b"x" * len(block)
        assert hasher.hexdigest() == hashlib.sha256(bytes(hashing.THREADED)).hexdigest()


def test_large_blocks_go_to_the_thread_only_with_a_core_to_spare(monkeypatch: pytest.MonkeyPatch):
    names: list[str] = []
    real = hashlib.sha256

    class Recorded:
        def __init__(self) -> None:
            self._hash = real()

        def update(self, data: bytes) -> None:
            names.append(threading.current_thread().name)
            self._hash.update(data)

        def hexdigest(self) -> str:
            return self._hash.hexdigest()

        def copy(self) -> Any:
            return self._hash.copy()

    def hashed_past_the_heads(blocks: list[bytes]) -> list[str]:
        # (The heads' ends cut a block in two: here the blocks come after them.)
        hasher = BlockHasher()
        hasher.update(bytes(hashing.HEADS[-1]))
        names.clear()
        for block in blocks:
            hasher.update(block)
        hasher.hexdigest()
        return list(names)

    monkeypatch.setattr(hashing.hashlib, "sha256", Recorded)
    block = bytes(hashing.THREADED)
    with spare_core(False):
        assert hashed_past_the_heads([block, block]) == ["MainThread"] * 2
    with spare_core(True):
        assert [n.startswith("kitbuild-sha256") for n in hashed_past_the_heads([block, b"small", block])] == [True, False, True]


# A first block large enough to be hashed in the thread once the first head's end has cut it.
LARGE = hashing.HEADS[-1] + hashing.THREADED


def large_digest(state: int, item: int) -> tuple[str, str]:
    block = bytes([item]) * (LARGE + item)
    return digest_of([block, block[:5], block]), hashlib.sha256(block + block[:5] + block).hexdigest()


@pytest.mark.parametrize("jobs", [1, 2])
def test_workers_hash_in_their_own_thread(jobs):
    # The parent has used its thread first: a worker forked from it must make its own.
    with spare_core(True):
        digest_of([bytes(LARGE)])
    # (One item heavier than a worker's share: the workers may hash in a thread.)
    out = map_files(large_digest, 0, list(range(20)), [SERIAL_BYTES] * 19 + [SERIAL_BYTES * 40], jobs)
    assert all(got == want for got, want in out)


def spare_here(state: int, item: int) -> bool:
    return hashing._spare


@pytest.mark.parametrize(
    "weights, jobs, sequential, spare",
    [
        ([SERIAL_BYTES] * 8, 2, False, False),  # every worker has its share: no thread more
        ([SERIAL_BYTES] * 7 + [SERIAL_BYTES * 8], 2, False, True),  # one file outweighs a share
        ([SERIAL_BYTES] * 7 + [SERIAL_BYTES * 8], 1, False, False),  # --jobs 1: one core
        ([SERIAL_BYTES] * 8, 2, True, True),  # read in order in one process
    ],
)
def test_a_thread_is_used_only_where_a_core_would_wait(weights, jobs, sequential, spare):
    assert map_files(spare_here, 0, list(range(len(weights))), weights, jobs, sequential=sequential) == [spare] * len(weights)


def test_no_thread_is_left_once_the_core_is_no_longer_spare():
    with spare_core(True):
        digest_of([bytes(LARGE)])
        assert any(t.name.startswith("kitbuild-sha256") for t in threading.enumerate())
    assert not any(t.name.startswith("kitbuild-sha256") for t in threading.enumerate())


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from([0, 1, 4096, hashing.HEADS[0] - 1, hashing.HEADS[0], hashing.THREADED + 7, hashing.HEADS[1] + 3]), max_size=6), st.booleans())
def test_the_heads_are_the_digests_of_the_first_bytes_however_the_blocks_come(sizes, spare):
    # What croissant.json's RecordSets read of a file is held to these (kitbuild.metadata.reader).
    blocks = [bytes([i + 1]) * n for i, n in enumerate(sizes)]
    data = b"".join(blocks)
    with spare_core(spare):
        hasher = BlockHasher()
        for block in blocks:
            hasher.update(block)
        assert hasher.hexdigest() == hashlib.sha256(data).hexdigest()
    assert hasher.heads == tuple(hashlib.sha256(data[:mark]).hexdigest() for mark in hashing.HEADS if mark <= len(data))
