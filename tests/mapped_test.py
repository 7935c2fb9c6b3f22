"""The compiled SHA-256 (kitbuild/_sha256.c) gives hashlib's digests, fills a scan's window as
refill does, and turns a map that faults into an OSError; verify's scan of a mapped file is that
of the file read."""

from __future__ import annotations

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

try:
    from kitbuild import _sha256
except ImportError:  # installed without a C compiler: the tests that need it are skipped
    _sha256 = None  # type: ignore[assignment]

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
@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 2**32), st.integers(0, 70), st.integers(0, 70))
def test_update_pair_is_two_update_intos(n: int, m: int, seed: int, a_head: int, b_head: int) -> None:
    # A head fed alone first leaves a partial block in the hash: the pair must then go one by one.
    rng = random.Random(seed)
    a_data, b_data = rng.randbytes(a_head + n), rng.randbytes(b_head + m)
    pair = [mapped.sha256(), mapped.sha256()]
    apart = [mapped.sha256(), mapped.sha256()]
    windows = [bytearray(b"a-kept"), bytearray(b"b-kept"), bytearray(b"a-kept"), bytearray(b"b-kept")]
    for h, data, head in ((pair[0], a_data, a_head), (pair[1], b_data, b_head), (apart[0], a_data, a_head), (apart[1], b_data, b_head)):
        h.update(data[:head])
    mapped.update_pair(pair[0], a_data, a_head, len(a_data), windows[0], 2, pair[1], b_data, b_head, len(b_data), windows[1], 0)
    apart[0].update_into(a_data, a_head, len(a_data), windows[2], 2)
    apart[1].update_into(b_data, b_head, len(b_data), windows[3], 0)
    assert windows[0] == windows[2] and windows[1] == windows[3]
    assert [h.hexdigest() for h in pair] == [h.hexdigest() for h in apart] == [hashlib.sha256(a_data).hexdigest(), hashlib.sha256(b_data).hexdigest()]


@needs_sha
def test_update_pair_refuses_one_window_or_hash_for_both_sides() -> None:
    h, g, w = mapped.sha256(), mapped.sha256(), bytearray()
    with pytest.raises(ValueError, match="their own"):
        mapped.update_pair(h, b"x", 0, 1, w, 0, g, b"y", 0, 1, w, 0)
    with pytest.raises(ValueError, match="their own"):
        mapped.update_pair(h, b"x", 0, 1, w, 0, h, b"y", 0, 1, bytearray(), 0)
    with pytest.raises(ValueError, match="out of range"):
        mapped.update_pair(h, b"x", 0, 1, w, 0, g, b"y", 0, 2, bytearray(), 0)
    assert w == b"" and h.hexdigest() == g.hexdigest() == hashlib.sha256(b"").hexdigest()


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
        other = bytearray(b"other")
        with pytest.raises(OSError, match="changed while it was read"):
            mapped.update_pair(mapped.sha256(), b"y" * 5 * page, 0, 5 * page, other, 1, mapped.sha256(), m, 0, 4 * page, window, 0)
        assert (window, other) == (b"kept", b"ther")
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
    return tuple(getattr(scan, name) for name in filescan.FileScan.__slots__)


@needs_sha
def test_a_mapped_scan_is_the_scan_of_the_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, data = _big(tmp_path)
    monkeypatch.setattr(mapped, "WINDOW", 2 * mmap.ALLOCATIONGRANULARITY)
    taken: list[int] = []
    real = mapped.windows
    monkeypatch.setattr(mapped, "windows", lambda fd, size: (taken.append(len(w)) or w for w in real(fd, size)))
    scan = filescan.scan_file(FolderKit(folder), "big.ndjson", PLAN)
    assert sum(taken) == len(data) and len(taken) > 3  # it was mapped, window by window
    whole = scan_bytes("big.ndjson", data, PLAN.replace(block_size=len(data) + 1))
    assert _fields(scan) == _fields(whole)
    assert scan.placeholders == [0] and scan.words == [600] and len(scan.leaks) == 600


@needs_sha
def test_a_file_that_grew_after_its_size_was_taken_is_read_to_its_end(tmp_path: Path) -> None:
    folder, data = _big(tmp_path)
    fd = os.open(folder / "big.ndjson", os.O_RDONLY)
    out: list[object] = [None]
    filescan._alone(filescan._Mapped(0, "big.ndjson", fd, len(data) // 3, PLAN, None), out)  # as if it had grown since
    assert _fields(out[0]) == _fields(scan_bytes("big.ndjson", data, PLAN))


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
def test_a_map_that_fails_midway_has_the_file_read_again_from_its_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, data = _big(tmp_path)
    monkeypatch.setattr(mapped, "WINDOW", 2 * mmap.ALLOCATIONGRANULARITY)
    real = mapped.windows

    def fails_later(fd: int, size: int) -> object:
        for i, w in enumerate(real(fd, size)):
            if i == 2:
                raise OSError(5, "Input/output error")
            yield w

    monkeypatch.setattr(mapped, "windows", fails_later)
    scan = filescan.scan_file(FolderKit(folder), "big.ndjson", PLAN)
    assert _fields(scan) == _fields(scan_bytes("big.ndjson", data, PLAN))


def _run(tmp_path: Path) -> tuple[Path, list[str], dict[str, bytes]]:
    """Large files of different lengths with small ones between them, as a worker's run has them."""
    lines = [LINE.replace(b"bob", b"u%05d" % i) for i in range(1200)]
    files = {
        "big.ndjson": b"".join(lines[:600]),
        "a.txt": b"small /home/carol/x\n",
        "big2.ndjson": b"".join(lines[100:1000]),
        "big3.ndjson": b"".join(lines[:150]) + b"x" * 5000,
        "b.txt": b"w-1\n",
        "big4.ndjson": b"".join(lines[700:]),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path, list(files), files


def _plan_of(files: dict[str, bytes]) -> ScanPlan:
    return PLAN.replace(records=frozenset(files))


@needs_sha
def test_large_files_hashed_in_pairs_give_each_its_own_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, paths, files = _run(tmp_path)
    plan = _plan_of(files)
    monkeypatch.setattr(mapped, "WINDOW", 2 * mmap.ALLOCATIONGRANULARITY)
    pairs: list[tuple[int, int]] = []
    real = mapped.update_pair

    def counting(*args: object) -> None:
        pairs.append((args[3] - args[2], args[9] - args[8]))  # type: ignore[operator]
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mapped, "update_pair", counting)
    scans = filescan._scan_run(FolderKit(folder), paths, plan, None, filescan._scan_one)
    assert [s.path for s in scans] == paths
    for scan in scans:
        assert _fields(scan) == _fields(scan_bytes(scan.path, files[scan.path], plan))
    assert len(pairs) > 10  # most blocks of the large files went two by two


class _Counted:
    """A progress bar's double: the files and bytes it was told of."""

    def __init__(self) -> None:
        self.files = self.size = 0

    def advance(self, files: int = 0, size: int = 0) -> None:
        self.files += files
        self.size += size


@needs_sha
@pytest.mark.parametrize("run", [64, 4])  # 4: the pass's runs end between the files of a pair
def test_a_pass_in_one_process_hashes_its_files_in_pairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: int) -> None:
    # One by one, verify of workload A on one job took 2.29 s of CPU, in pairs 1.75.
    folder, paths, files = _run(tmp_path)
    plan = _plan_of(files)
    monkeypatch.setattr(mapped, "WINDOW", 2 * mmap.ALLOCATIONGRANULARITY)
    monkeypatch.setattr(filescan, "_SERIAL_RUN", run)
    calls = {"update_pair": 0}
    real = mapped.update_pair

    def counted(*args: object) -> None:
        calls["update_pair"] += 1
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mapped, "update_pair", counted)
    batches: list[int] = []
    digest_batch = mapped.digest_batch

    def batched(datas: list[bytes]) -> list[str]:
        batches.append(len(datas))
        return digest_batch(datas)

    monkeypatch.setattr(mapped, "digest_batch", batched)
    progress = _Counted()
    scans = filescan.scan_files(FolderKit(folder), paths, [len(files[p]) for p in paths], plan, 1, progress)
    assert list(scans) == paths
    for path in paths:
        assert _fields(scans[path]) == _fields(filescan._compact(scan_bytes(path, files[path], plan)))
    assert calls["update_pair"] > 10  # the large files' blocks went two by two
    # The two small files are hashed together when one run holds both (with runs of 4 they are apart).
    assert batches == ([2] if run > len(paths) else [1, 1])
    assert (progress.files, progress.size) == (len(paths), sum(map(len, files.values())))


@needs_sha
def test_a_pair_that_faults_has_both_files_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, paths, files = _run(tmp_path)
    plan = _plan_of(files)
    calls = [0]
    real = mapped.update_pair

    def faults_once(*args: object) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise OSError("the file changed while it was read (its memory map faulted)")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(mapped, "update_pair", faults_once)
    scans = filescan._scan_run(FolderKit(folder), paths, plan, None, filescan._scan_one)
    assert calls[0] > 3
    for scan in scans:
        assert _fields(scan) == _fields(scan_bytes(scan.path, files[scan.path], plan))


@needs_sha
def test_at_most_two_files_are_open_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, paths, files = _run(tmp_path)
    kit = FolderKit(folder)
    real_open, real_close = kit.open_fd, os.close
    fds: set[int] = set()
    most = [0]

    def opening(path: str) -> object:
        opened = real_open(path)
        if opened is not None:
            fds.add(opened[0])
            most[0] = max(most[0], len(fds))
        return opened

    def closing(fd: int) -> None:
        fds.discard(fd)
        real_close(fd)

    monkeypatch.setattr(kit, "open_fd", opening)
    monkeypatch.setattr(filescan.os, "close", closing)
    filescan._scan_run(kit, paths, _plan_of(files), None, filescan._scan_one)
    assert most[0] == 2 and not fds


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


def test_runs_of_one_large_file_are_paired_with_their_neighbour() -> None:
    large = {"L1", "L2", "L3", "L4", "L5"}
    runs = [["L1"], ["L2"], ["L3"], ["s1", "s2"], ["L4"], ["s3"], ["L5"]]
    assert filescan.in_pairs(runs, large, 2) == [["L1", "L2"], ["L3"], ["s1", "s2"], ["L4"], ["s3"], ["L5"]]
    assert filescan.in_pairs([["L1"], ["L2"], ["L3"], ["L4"]], large, 2) == [["L1", "L2"], ["L3", "L4"]]
    # Two files on two workers: apart, not paired on one.
    assert filescan.in_pairs([["L1"], ["L2"]], large, 2) == [["L1"], ["L2"]]
    assert filescan.in_pairs([["L1"], ["L2"]], large, 1) == [["L1", "L2"]]
    assert filescan.in_pairs([["s1"], ["s2"]], large, 1) == [["s1"], ["s2"]]
    assert runs == [["L1"], ["L2"], ["L3"], ["s1", "s2"], ["L4"], ["s3"], ["L5"]]  # not changed in place


# -- hash_files: verify's head start over many small files ----------------------------------

needs_files = pytest.mark.skipif(not mapped.FILES, reason="hash_files does not run here (no compiled SHA-256, or no openat)")
LIMIT = 4096


def _yes(data: memoryview, arg: object) -> bool:
    return True


@needs_files
def test_hash_files_gives_hashlib_digests_at_every_padding_edge_and_leaves_larger_files(tmp_path: Path) -> None:
    lengths = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 2048, LIMIT, LIMIT + 1]
    datas = {f"f{n}": os.urandom(n) for n in lengths}
    for name, data in datas.items():
        (tmp_path / name).write_bytes(data)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        sizes, digests = mapped.hash_files(fd, list(datas), LIMIT, _yes, None)
    finally:
        os.close(fd)
    for i, (name, data) in enumerate(datas.items()):
        if len(data) > LIMIT:
            assert (sizes[i], digests[32 * i : 32 * i + 32]) == (-1, bytes(32))
        else:
            assert (sizes[i], digests[32 * i : 32 * i + 32]) == (len(data), hashlib.sha256(data).digest()), name


@needs_files
def test_hash_files_leaves_what_is_not_a_plain_regular_file_or_fails_the_test(tmp_path: Path) -> None:
    (tmp_path / "plain").write_bytes(b"plain")
    (tmp_path / "loud").write_bytes(b"loud")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "plain")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "back\\slash").write_bytes(b"x")
    names = ["plain", "loud", "folder", "link", "fifo", "missing", "back\\slash", "", ".", "..", "a/b", "n\0ul", "plain"]
    fd = os.open(tmp_path, os.O_RDONLY)
    seen: list[bytes] = []

    def test(data: memoryview, arg: object) -> bool:
        assert arg == "arg"
        seen.append(bytes(data))
        return bytes(data) != b"loud"

    try:
        sizes, digests = mapped.hash_files(fd, names, LIMIT, test, "arg")
    finally:
        os.close(fd)
    assert sizes == [5, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 5]
    assert digests == hashlib.sha256(b"plain").digest() + bytes(32 * 11) + hashlib.sha256(b"plain").digest()
    assert seen == [b"plain", b"loud", b"plain"]  # only regular files read whole reach the test


@needs_files
def test_hash_files_passes_on_a_test_that_raises_or_keeps_the_bytes(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"abc")
    kept: list[memoryview] = []

    def raises(data: memoryview, arg: object) -> bool:
        raise ValueError("no")

    def keeps(data: memoryview, arg: object) -> bool:
        kept.append(data)
        return True

    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(ValueError, match="no"):
            mapped.hash_files(fd, ["a"], LIMIT, raises, None)
        with pytest.raises(RuntimeError, match="kept"):
            mapped.hash_files(fd, ["a"], LIMIT, keeps, None)
        with pytest.raises(TypeError):
            mapped.hash_files(fd, ("a",), LIMIT, _yes, None)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            mapped.hash_files(-1, ["a"], LIMIT, _yes, None)
    finally:
        os.close(fd)


def test_quiet_run_answers_as_quiet_small_file_by_file(tmp_path: Path) -> None:
    """The batch (where it runs) and the file-by-file test agree: quiet files by size and digest,
    the others (a placeholder, a leak, too large, a link, at the root) left."""
    files = {
        "a/quiet.txt": b"nothing here\n",
        "a/word.txt": b"the desktop ran\n",
        "a/leak.txt": b"/home/bob/x\n",
        "a/large.txt": b"x" * (LIMIT + 1),
        "b/quiet.txt": b"still nothing\n",
        "b/c/deep.txt": b"deep and quiet\n",
        "root.txt": b"quiet at the root\n",
    }
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    (tmp_path / "a" / "link.txt").symlink_to(tmp_path / "a" / "quiet.txt")
    paths = sorted([*files, "a/link.txt", "a/missing.txt"])
    plan = ScanPlan(records=frozenset(), paths=frozenset(), placeholders=("withheld",), words=(("desktop",),))
    fs = FolderKit(tmp_path)
    want = [filescan.quiet_small(fs, p, plan, LIMIT) for p in paths]
    sizes, digests = filescan.quiet_run(fs, paths, plan, LIMIT)
    assert [(n, digests[32 * i : 32 * i + 32]) if n >= 0 else None for i, n in enumerate(sizes)] == want
    assert [p for p, w in zip(paths, want) if w is not None] == ["a/quiet.txt", "b/c/deep.txt", "b/quiet.txt", "root.txt"]


# -- digest_pair: files read whole, hashed two at a time --------------------------------------


@needs_sha
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.binary(max_size=3000))
def test_digest_pair_gives_hashlibs_digest_of_each(a: bytes, b: bytes) -> None:
    assert mapped.digest_pair(a, b) == (hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest())
    assert mapped.digest_pair(bytearray(b), memoryview(a)) == (hashlib.sha256(b).hexdigest(), hashlib.sha256(a).hexdigest())


@needs_sha
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=700), st.sampled_from([0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 2000]).map(lambda n: os.urandom(n))), min_size=3, max_size=3))
def test_digest_three_gives_hashlibs_digest_of_each(datas: list[bytes]) -> None:
    """Three buffers of any lengths, the shortest in any place: the blocks all three have, then
    the pair that outlasts the third, then what is left of the longest one."""
    a, b, c = datas
    want = tuple(hashlib.sha256(d).hexdigest() for d in datas)
    assert mapped.digest_three(a, b, c) == want
    assert mapped.digest_three(bytearray(a), memoryview(b), c) == want


@needs_sha
@pytest.mark.parametrize("side", [2, 3])
@pytest.mark.parametrize("count", range(0, 8))
def test_digest_batch_gives_hashlibs_digest_of_each(count: int, side: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Threes (or pairs, where those hash faster), then a pair or one: each buffer's own digest,
    in order."""
    monkeypatch.setattr(mapped, "SIDE_BY_SIDE", side)
    datas = [os.urandom(k * 97) for k in range(count)]
    assert mapped.digest_batch(datas) == [hashlib.sha256(d).hexdigest() for d in datas]


@needs_sha
def test_the_processor_chose_two_or_three_streams_side_by_side() -> None:
    assert mapped.SIDE_BY_SIDE in (2, 3)
    assert mapped.BATCH in (mapped.SIDE_BY_SIDE, 16)


@needs_sha
@pytest.mark.parametrize("side", [2, 3])
def test_files_read_whole_are_hashed_together_and_scanned_as_one_by_one(side: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "r/a.txt": b"quiet\n" * 100,
        "r/b.txt": b"the desktop ran it\n",
        "r/c.txt": os.urandom(70_000),
        "r/d.txt": b"read /home/bob/x\n",
        "r/e.txt": b"",
    }
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    paths = sorted(files)
    plan = ScanPlan(records=frozenset(paths), paths=frozenset(paths), words=(("desktop",),))
    together: list[tuple[int, ...]] = []
    digest_pair, digest_three = mapped.digest_pair, mapped.digest_three

    def counted_pair(a: bytes, b: bytes) -> tuple[str, str]:
        together.append((len(a), len(b)))
        return digest_pair(a, b)

    def counted_three(a: bytes, b: bytes, c: bytes) -> tuple[str, str, str]:
        together.append((len(a), len(b), len(c)))
        return digest_three(a, b, c)

    monkeypatch.setattr(mapped, "digest_pair", counted_pair)
    monkeypatch.setattr(mapped, "digest_three", counted_three)
    # As on a processor that hashes ``side`` streams fastest (sixteen at once would take five too
    # few for that the same way).
    monkeypatch.setattr(mapped, "SIDE_BY_SIDE", side)
    monkeypatch.setattr(mapped, "BATCH", side)
    paired = filescan._scan_run(FolderKit(tmp_path), paths, plan, None, filescan._scan_one)
    # Three, then the last two as a pair; or pairs, and the empty file last, alone.
    assert together == ([(600, 19, 70_000), (17, 0)] if side == 3 else [(600, 19), (70_000, 17)])
    monkeypatch.setattr(mapped, "ACCELERATED", False)
    alone = filescan._scan_run(FolderKit(tmp_path), paths, plan, None, filescan._scan_one)
    assert paired == alone
    assert [s.sha256 for s in paired] == [hashlib.sha256(files[p]).hexdigest() for p in paths]


needs_many = pytest.mark.skipif(mapped.BATCH != 16, reason="digest_many does not run here (no SHA extensions or no AVX-512BW)")
# Lengths about a block's edges (a tail of 55 bytes is the most one padding block holds).
_EDGES = st.sampled_from([0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000])


@needs_many
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_EDGES, st.integers(min_value=0, max_value=4000), st.integers(min_value=60_000, max_value=70_000)), max_size=16), st.integers(0, 2**32))
def test_digest_many_gives_hashlibs_digest_of_each(lengths: list[int], seed: int) -> None:
    """Sixteen lanes, or fewer; of one length or of very different ones, so that some lanes end
    while others go on, and the last few are finished on the SHA extensions. (The bytes come
    from a seed that hypothesis draws: drawn byte by byte, hypothesis refused a few hundred KiB
    of them as too much data for one example, in some runs.)"""
    rng = random.Random(seed)
    datas = [rng.randbytes(n) for n in lengths]
    assert _sha256.digest_many(tuple(datas)) == [hashlib.sha256(d).hexdigest() for d in datas]
    assert mapped.digest_batch(datas) == [hashlib.sha256(d).hexdigest() for d in datas]


@needs_many
@pytest.mark.parametrize("lengths", [[4096] * 16, [70_000] * 8 + [64] * 8, [64] * 15 + [200_000], [200_000] * 15 + [0], [1000 + 64 * k for k in range(16)]])
def test_digest_many_with_lanes_that_end_together_or_apart(lengths: list[int]) -> None:
    datas = [bytes([k]) * n for k, n in enumerate(lengths)]
    assert _sha256.digest_many(tuple(datas)) == [hashlib.sha256(d).hexdigest() for d in datas]


@needs_many
def test_digest_many_takes_a_tuple_of_at_most_sixteen_bytes() -> None:
    with pytest.raises(TypeError):
        _sha256.digest_many((b"x",) * 17)
    with pytest.raises(TypeError):
        _sha256.digest_many((b"x", bytearray(b"y")))  # bytes alone: the GIL goes while they are read
    with pytest.raises(TypeError):
        _sha256.digest_many([b"x"])
    assert _sha256.digest_many(()) == []


@needs_many
def test_files_read_whole_are_hashed_sixteen_at_a_time_and_scanned_as_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"r/{k:02d}.txt": (b"the desktop ran it\n" if k % 5 == 0 else b"quiet\n") * (k * 37) + (b"read /home/bob/x\n" if k == 7 else b"") for k in range(20)}
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    paths = sorted(files)
    plan = ScanPlan(records=frozenset(paths), paths=frozenset(paths), words=(("desktop",),))
    batches: list[int] = []
    digest_many = _sha256.digest_many

    def counted(datas: tuple[bytes, ...]) -> list[str]:
        batches.append(len(datas))
        return digest_many(datas)  # type: ignore[no-any-return]

    monkeypatch.setattr(_sha256, "digest_many", counted)
    together = filescan._scan_run(FolderKit(tmp_path), paths, plan, None, filescan._scan_one)
    assert batches == [16]  # the last four go two by two
    monkeypatch.setattr(mapped, "ACCELERATED", False)
    alone = filescan._scan_run(FolderKit(tmp_path), paths, plan, None, filescan._scan_one)
    assert together == alone
    assert [s.sha256 for s in together] == [hashlib.sha256(files[p]).hexdigest() for p in paths]
    assert sum(len(s.leaks) for s in together) == 1


@needs_sha
def test_with_the_compiled_hash_a_run_never_calls_hashlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Importing hashlib cost each of verify's workers 10 to 15 ms of CPU beside the other's hashing.
    folder, paths, files = _run(tmp_path)
    (folder / "odd.txt").write_bytes(b"the one file read whole, with no other to pair it\n")
    files["odd.txt"] = (folder / "odd.txt").read_bytes()
    paths = [*paths, "odd.txt"]
    monkeypatch.setattr(filescan, "_sha256", lambda data=b"": pytest.fail("hashlib was used"))
    scans = filescan._scan_run(FolderKit(folder), paths, _plan_of(files), None, filescan._sent_one)
    digests = [scan[1] if isinstance(scan, tuple) else scan.sha256 for scan in scans]  # (a quiet file sends a tuple)
    assert digests == [hashlib.sha256(files[path]).hexdigest() for path in paths]
