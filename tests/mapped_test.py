"""The compiled SHA-256 (kitbuild/_sha256.c) gives hashlib's digests, fills a scan's window as
refill does, and turns a map that faults into an OSError; verify's scan of a mapped file is that
of the file read."""

from __future__ import annotations

import dataclasses
import hashlib
import mmap
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild import filescan, mapped
from kitbuild.filescan import ScanPlan, scan_bytes
from kitbuild.kitfs import FolderKit
from kitbuild.speedups import py_refill

needs_sha = pytest.mark.skipif(not mapped.ACCELERATED, reason="the compiled SHA-256 does not run here (no C compiler at install, or no SHA extensions)")


@needs_sha
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=1000), st.lists(st.integers(0, 1000), max_size=6))
def test_any_pieces_hash_as_hashlib_hashes_the_whole(data: bytes, cuts: list[int]) -> None:
    edges = sorted({0, len(data), *(min(c, len(data)) for c in cuts)})
    h = mapped.sha256()
    for a, b in zip(edges, edges[1:]):
        h.update(data[a:b])
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()


@needs_sha
@pytest.mark.parametrize("n", [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1 << 16, (1 << 20) + 3])
def test_lengths_at_every_padding_edge(n: int) -> None:
    data = os.urandom(n)
    h = mapped.sha256()
    h.update(data)
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()


@needs_sha
def test_a_digest_taken_midway_lets_the_hash_go_on() -> None:
    h = mapped.sha256()
    h.update(b"abc")
    assert h.hexdigest() == hashlib.sha256(b"abc").hexdigest()
    h.update(b"def" * 100)
    assert h.hexdigest() == hashlib.sha256(b"abc" + b"def" * 100).hexdigest()


@needs_sha
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000), st.integers(0, 2**32), st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 2000)), min_size=1, max_size=6))
def test_update_into_fills_the_window_as_refill_does(size: int, seed: int, steps: list[tuple[int, int]]) -> None:
    # Each step hashes the next piece into the window after dropping some of its front (keep is
    # a share of the window, in thousandths): the window is what refill, reading the same pieces
    # from a file, would hold, and the digest hashlib's of every piece.
    data = random.Random(seed).randbytes(size)  # whole blocks and partial ones (st.binary stays short)
    h = mapped.sha256()
    ours, theirs = bytearray(b"carried"), bytearray(b"carried")
    at = 0
    read, write = os.pipe()
    try:
        for length, share in steps:
            piece = data[at : at + length]
            keep = len(ours) * share // 2000
            h.update_into(data, at, at + len(piece), ours, keep)
            os.write(write, piece)
            py_refill(read, theirs, keep, len(piece)) if piece else theirs.__delitem__(slice(0, keep))
            assert ours == theirs
            at += len(piece)
    finally:
        os.close(read)
        os.close(write)
    assert h.hexdigest() == hashlib.sha256(data[:at]).hexdigest()


@needs_sha
def test_update_into_refuses_bad_arguments_and_changes_nothing() -> None:
    h = mapped.sha256()
    window = bytearray(b"kept")
    with pytest.raises(TypeError, match="bytearray"):
        h.update_into(b"data", 0, 4, b"not a bytearray", 0)  # type: ignore[arg-type]
    for start, stop, keep in ((-1, 2, 0), (3, 2, 0), (0, 5, 0), (0, 4, 5), (0, 4, -1)):
        with pytest.raises(ValueError, match="out of range"):
            h.update_into(b"data", start, stop, window, keep)
    with memoryview(window):
        with pytest.raises(BufferError):
            h.update_into(b"data", 0, 4, window, 0)
    assert window == b"kept"
    assert h.hexdigest() == hashlib.sha256(b"").hexdigest()


@needs_sha
def test_a_map_of_a_file_that_shrank_raises_and_the_process_goes_on(tmp_path: Path) -> None:
    page = mmap.PAGESIZE
    f = tmp_path / "shrinks"
    f.write_bytes(b"x" * (4 * page))
    with f.open("rb") as stream, mmap.mmap(stream.fileno(), 4 * page, prot=mmap.PROT_READ) as m:
        os.truncate(f, page)  # the map's last three pages are past the end now: reading them faults
        h = mapped.sha256()
        window = bytearray(b"kept")
        with pytest.raises(OSError, match="changed while it was read"):
            h.update_into(m, 0, 4 * page, window, 0)
        assert window == b"kept"
        with pytest.raises(OSError, match="changed while it was read"):
            h.update(m)
    assert hashlib.sha256(b"still here").hexdigest()


@needs_sha
def test_a_bus_error_outside_the_hash_still_ends_the_process() -> None:
    # The guard hands any other SIGBUS to the handler before it: the default, which ends the process.
    code = "from kitbuild import mapped; import os, signal; h = mapped.sha256(); h.update(b'x'); os.kill(os.getpid(), signal.SIGBUS); print('survived')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGBUS, (done.returncode, done.stdout, done.stderr)
    assert "survived" not in done.stdout


PLAN = ScanPlan(records=frozenset({"big.ndjson"}), paths=frozenset({"run/a.json"}), placeholders=("w-1",), words=(("desktop",),), block_size=4096)
LINE = b'{"path": "run/a.json", "sha256": "' + b"ab" * 32 + b'", "host": "desktop", "home": "/home/bob/x"}\n'


def _big(tmp_path: Path) -> tuple[Path, bytes]:
    data = b"".join(LINE.replace(b"bob", b"u%05d" % i) for i in range(600))  # about 60 KiB: many maps and blocks
    (tmp_path / "big.ndjson").write_bytes(data)
    return tmp_path, data


def _fields(scan: filescan.FileScan) -> tuple[object, ...]:
    return tuple(getattr(scan, f.name) for f in dataclasses.fields(scan))


@needs_sha
def test_a_mapped_scan_is_the_scan_of_the_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, data = _big(tmp_path)
    monkeypatch.setattr(mapped, "WINDOW", 2 * mmap.ALLOCATIONGRANULARITY)
    taken: list[int] = []
    real = mapped.windows
    monkeypatch.setattr(mapped, "windows", lambda fd, size: (taken.append(len(w)) or w for w in real(fd, size)))
    scan = filescan.scan_file(FolderKit(folder), "big.ndjson", PLAN)
    assert sum(taken) == len(data) and len(taken) > 3  # it was mapped, window by window
    whole = scan_bytes("big.ndjson", data, dataclasses.replace(PLAN, block_size=len(data) + 1))
    assert _fields(scan) == _fields(whole)
    assert scan.placeholders == [0] and scan.words == [600] and len(scan.leaks) == 600


@needs_sha
def test_a_file_that_grew_after_its_size_was_taken_is_read_to_its_end(tmp_path: Path) -> None:
    folder, data = _big(tmp_path)
    fd = os.open(folder / "big.ndjson", os.O_RDONLY)
    try:
        scan = filescan._scan_stream("big.ndjson", fd, len(data) // 3, PLAN, None)  # as if it had grown since
    finally:
        os.close(fd)
    assert _fields(scan) == _fields(scan_bytes("big.ndjson", data, PLAN))


@needs_sha
def test_a_file_that_cannot_be_mapped_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, data = _big(tmp_path)

    def no_maps(fd: int, size: int) -> object:
        raise OSError(19, "No such device")  # what mmap says on a file system without maps
        yield

    monkeypatch.setattr(mapped, "windows", no_maps)
    scan = filescan.scan_file(FolderKit(folder), "big.ndjson", PLAN)
    assert _fields(scan) == _fields(scan_bytes("big.ndjson", data, PLAN))


@needs_sha
def test_a_map_that_fails_midway_makes_the_file_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = _big(tmp_path)
    monkeypatch.setattr(mapped, "WINDOW", 2 * mmap.ALLOCATIONGRANULARITY)
    real = mapped.windows

    def fails_later(fd: int, size: int) -> object:
        for i, w in enumerate(real(fd, size)):
            if i == 2:
                raise OSError(5, "Input/output error")
            yield w

    monkeypatch.setattr(mapped, "windows", fails_later)
    scan = filescan.scan_file(FolderKit(folder), "big.ndjson", PLAN)
    assert scan.error is not None and scan.error.kind == "unreadable" and "Input/output error" in scan.error.reason


def test_without_the_compiled_hash_nothing_is_mapped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder, data = _big(tmp_path)
    monkeypatch.setattr(mapped, "ACCELERATED", False)
    monkeypatch.setattr(mapped, "windows", lambda fd, size: pytest.fail("mapped without the compiled hash"))
    scan = filescan.scan_file(FolderKit(folder), "big.ndjson", PLAN)
    assert scan.sha256 == hashlib.sha256(data).hexdigest()


def test_pure_python_turns_the_maps_off() -> None:
    code = "from kitbuild import mapped; print(mapped.ACCELERATED)"
    env = {**os.environ, "KITBUILD_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert done.stdout.strip() == "False"
