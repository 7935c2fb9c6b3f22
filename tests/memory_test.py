"""kitbuild.memory: the allocator's thresholds, and the block buffers readers reuse."""

from __future__ import annotations

import io
import platform
import sys

from kitbuild.memory import keep_freed_blocks, read_blocks


def test_workers_keep_freed_blocks_where_glibc_lets_them():
    # On glibc, mallopt accepts both settings; elsewhere the call is a no-op that says so.
    assert keep_freed_blocks() is (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")


def test_blocks_cover_the_stream_and_two_readers_at_once_do_not_share_a_buffer():
    data = bytes(range(256)) * 5
    first, second = io.BytesIO(data), io.BytesIO(data[::-1])
    one, two = read_blocks(first.readinto, 100), read_blocks(second.readinto, 100)
    got_one, got_two = [], []
    for a, b in zip(one, two):  # interleaved: a shared buffer would hand each the other's bytes
        got_one.append(bytes(a))
        got_two.append(bytes(b))
    assert b"".join(got_one) == data and b"".join(got_two) == data[::-1]
    assert [len(b) for b in got_one] == [100] * 12 + [80]


def test_a_buffer_is_reused_by_the_next_reader():
    views = [next(read_blocks(io.BytesIO(b"x" * 10).readinto, 64)) for _ in range(2)]
    assert views[0].obj is views[1].obj
