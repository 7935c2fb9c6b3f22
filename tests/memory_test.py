"""kitbuild.memory: the allocator's thresholds, the block buffers readers reuse, and the tables a
command leaves to the end of its process."""

from __future__ import annotations

import gc
import io
import platform
import sys

import pytest

from kitbuild import memory
from kitbuild.memory import collector_paused, keep_freed_blocks, keep_until_exit, read_blocks


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


def test_tables_are_kept_only_where_the_process_ends_after_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_KEPT", None)
    table = {"a": 1}
    keep_until_exit(table)
    assert memory._KEPT is None  # called as a library: nothing is kept
    memory.keep_tables_until_exit()
    keep_until_exit(table)
    assert memory._KEPT is not None and memory._KEPT == [table] and memory._KEPT[0] is table


def test_what_a_paused_block_made_is_left_out_of_later_collections_only_before_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_KEPT", None)
    frozen = gc.get_freeze_count()
    with collector_paused():
        made = [[] for _ in range(1000)]
    assert gc.get_freeze_count() == frozen  # a library's objects stay the collector's to walk
    monkeypatch.setattr(memory, "_KEPT", [])
    try:
        with collector_paused():
            made += [[] for _ in range(1000)]
        assert gc.get_freeze_count() >= frozen + 2000
        assert gc.isenabled()
    finally:
        gc.unfreeze()


GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# In a fresh process (the thresholds are the process's own): blocks of 16 MiB touched and freed
# inside freed_blocks_kept stay resident there, and are given back once it ends.
_KEPT_THEN_GIVEN_BACK = """
import os
from kitbuild.memory import freed_blocks_kept

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

base = resident()
with freed_blocks_kept() as kept:
    blocks = [bytearray(16 << 20) for _ in range(4)]
    for block in blocks:
        block[::4096] = b"x" * (len(block) // 4096)
    del blocks, block
    inside = resident()
after = resident()
print(kept, inside - base, after - base)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's thresholds")
def test_a_main_process_keeps_freed_blocks_only_while_it_asks() -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-c", _KEPT_THEN_GIVEN_BACK], capture_output=True, text=True, timeout=60, check=True)
    kept, inside, after = done.stdout.split()
    assert kept == "True"
    assert int(inside) >= 48  # the 64 MiB freed in the block were kept
    assert int(after) <= 8  # and given back when it ended
