"""The streaming pass: chunks end at line ends, so tiny chunks give the same bytes as one big one."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kitbuild.leaks import LeakFinding
from kitbuild.matchers import Matcher
from kitbuild import pipeline
from kitbuild.pipeline import FileJob, Plan, line_chunks, run_file, run_files
from kitbuild.rules import builtin_rule

from kittest import sha256

SOURCE = "/x/ls-2026-11-07"
AS = "learned-sparse-2026-11-07"


def plan(chunk_size, private=None, names=None):
    matchers = [builtin_rule("record-path-to-kit-path").matcher({}, {SOURCE: AS})]
    if names:
        matchers.append(builtin_rule("box-name-to-role").matcher({"names": names}))
    return Plan(matchers, private or {}, {}, [], chunk_size=chunk_size)


def run(tmp_path, name, data, chunk_size, **kw):
    src = tmp_path / "src" / name
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_bytes(data)
    dst = tmp_path / "out" / name
    dst.parent.mkdir(parents=True, exist_ok=True)
    result = run_file(FileJob(str(src), f"run/{name}", str(dst)), plan(chunk_size, **kw))
    return result, dst.read_bytes()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_line_chunks_end_at_line_ends_and_lose_nothing(size):
    data = b"ab\ncdefghijklmnop\r\n\nq\nlast line without end"
    chunks = list(line_chunks(io.BytesIO(data), size))
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1])
    assert all(c.count(b"\n") >= 1 for c in chunks[:-1])


def test_a_line_longer_than_a_chunk_is_read_whole():
    data = b"x" * 100 + b"\n" + b"y" * 50
    assert list(line_chunks(io.BytesIO(data), 8)) == [b"x" * 100 + b"\n", b"y" * 50]


def test_first_bytes_already_read_are_prepended():
    assert b"".join(line_chunks(io.BytesIO(b"c\nd"), 2, first=b"ab")) == b"abc\nd"


TEXT = (
    b'{"a": "/x/ls-2026-11-07/one", "host": "gpu-b17"}\r\n'
    + b"padding " * 40 + b"\n"
    + b"/x/ls-2026-11-07/two then /x/ls-2026-11-07-smoke/three\r\n"
    + b"end: /x/ls-2026-11-07"
)
EXPECTED = (
    b'{"a": "learned-sparse-2026-11-07/one", "host": "desktop"}\r\n'
    + b"padding " * 40 + b"\n"
    + b"learned-sparse-2026-11-07/two then /x/ls-2026-11-07-smoke/three\r\n"
    + b"end: learned-sparse-2026-11-07"
)


@pytest.mark.parametrize("size", [1, 5, 17, 49, 50, 51, 52, 1 << 20])
def test_tiny_chunks_give_the_same_bytes_counts_and_hashes(tmp_path, size):
    # Sizes 49..52 put the chunk edge inside the first path, the CRLF and just past it.
    result, out = run(tmp_path, "rows.txt", TEXT, size, names={"gpu-b17": "desktop"})
    assert out == EXPECTED
    assert result.counts == [3, 1]
    assert (result.size, result.sha256) == (len(EXPECTED), sha256(EXPECTED))
    assert (result.source_size, result.source_sha256) == (len(TEXT), sha256(TEXT))
    assert result.changed


@pytest.mark.parametrize("size", [1, 3, 4096])
def test_untouched_files_are_byte_identical(tmp_path, size):
    for name, data in {
        "crlf.txt": b"a\r\nb\r\n",
        "no-final-newline.txt": b"a\nb",
        "latin1.txt": "caf\xe9 /x/ls-2026-11-07-smoke\n".encode("latin-1"),
        "empty.json": b"",
        "lone-cr.txt": b"a\rb\r",
    }.items():
        result, out = run(tmp_path, name, data, size)
        assert out == data, name
        assert not result.changed and result.counts == [0]


def test_non_utf8_text_is_rewritten_without_decoding(tmp_path):
    data = b"\xff\xfe /x/ls-2026-11-07/a \xe9\n"
    _, out = run(tmp_path, "odd.txt", data, 4)
    assert out == b"\xff\xfe learned-sparse-2026-11-07/a \xe9\n"


def test_binary_files_are_never_rewritten_but_are_scanned(tmp_path):
    data = b"\x00\x01/x/ls-2026-11-07/a\x00" + bytes(range(256)) * 40
    result, out = run(tmp_path, "blob.bin", data, 64, private={SOURCE: "the private path of sources[0] (run)"})
    assert out == data and result.binary and result.counts == [0]
    assert result.leaks == [LeakFinding("run/blob.bin", 1, 3, "the private path of sources[0] (run)")]


def test_binary_leak_across_a_block_edge_is_found_once(tmp_path):
    # A NUL in the first 8 KiB makes it binary; the private path straddles a 64-byte block edge.
    data = b"\x00" * 60 + b"/x/ls-2026-11-07" + b"\x00" * 9000
    result, _ = run(tmp_path, "blob.bin", data, 64, private={SOURCE: "private"})
    assert [(f.line, f.col) for f in result.leaks] == [(1, 61)]


@pytest.mark.parametrize("size", [64, 100, 4096])
def test_binary_leaks_past_the_sniffed_head_are_placed_once_whatever_the_block_size(tmp_path, size):
    # Past the first 8 KiB, blocks are read into one reused buffer and scanned with the previous
    # block's tail: each leak is found once, on its line and column, wherever a block edge cuts
    # it, also on a line that began blocks before (the last line here is 30 kB long).
    lines = [b"\x00 row %d" % i for i in range(2000)] + [b"\x01" * 30_000]
    for i in (900, 1234, 1500, 2000):
        lines[i] += b" " + SOURCE.encode() + b"/a /home/bob/x"
    data = b"\n".join(lines) + b"\n"
    result, out = run(tmp_path, "blob.bin", data, size, private={SOURCE: "private"})
    assert out == data and result.binary and result.sha256 == sha256(data)
    expected = []
    for i in (900, 1234, 1500, 2000):
        expected.append((i + 1, lines[i].index(SOURCE.encode()) + 1, "private"))
        expected.append((i + 1, lines[i].index(b"/home/") + 1, "a home folder path (/home/...)"))
    assert sorted((f.line, f.col, f.what) for f in result.leaks) == expected


class CountingReads(io.FileIO):
    """A source file that remembers the size of each read asked of it."""

    def __init__(self, path):
        super().__init__(path, "rb")
        self.reads = []

    def read(self, size=-1):
        self.reads.append(size)
        return super().read(size)


@pytest.mark.parametrize("extra", [-1, 0])
def test_a_text_file_that_fits_a_chunk_is_one_read_and_one_chunk(tmp_path, extra):
    """No sniff read before it, no cut at its last line end: the bytes read are the chunk."""
    data = b"line /x/ls\n" * 400 + b"last"  # past the 8 KiB sniff, no final line end
    src = tmp_path / "rows.txt"
    src.write_bytes(data)
    with CountingReads(src) as f:
        binary, chunks = pipeline._chunks(f, len(data) - extra)
        assert (binary, list(chunks), f.reads) == (False, [data], [len(data) + 1])


def test_a_text_file_past_a_chunk_is_read_line_by_line(tmp_path):
    data = b"line /x/ls\n" * 2000
    src = tmp_path / "rows.txt"
    src.write_bytes(data)
    with open(src, "rb") as f:
        binary, chunks = pipeline._chunks(f, 4096)
        chunks = list(chunks)
    assert not binary and len(chunks) > 2 and b"".join(chunks) == data and all(c.endswith(b"\n") for c in chunks)


@pytest.mark.parametrize("size", [64, 1 << 20])
@pytest.mark.parametrize(("nul_at", "binary"), [(0, True), (8191, True), (8192, False), (20_000, False)])
def test_a_nul_in_the_first_8_kib_makes_a_file_binary_whatever_its_size(tmp_path, size, nul_at, binary):
    data = bytearray(b"/x/ls-2026-11-07/a\n" * 1500)
    data[nul_at] = 0
    result, out = run(tmp_path, "f.txt", bytes(data), size)
    assert result.binary == binary
    assert out == (bytes(data) if binary else bytes(data).replace(SOURCE.encode(), AS.encode()))


@pytest.mark.parametrize("size", [64, 1 << 20])
def test_a_file_that_grows_while_read_is_read_whole(tmp_path, monkeypatch, size):
    """The size fstat gave is a hint: whatever is there when read is read and rewritten."""
    real_fstat = os.fstat
    monkeypatch.setattr(pipeline.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 100, *real_fstat(fd)[7:])))
    result, out = run(tmp_path, "rows.txt", TEXT * 50, size, names={"gpu-b17": "desktop"})
    assert out == EXPECTED * 50 and result.counts == [150, 50]
    assert (result.source_size, result.source_sha256) == (len(TEXT) * 50, sha256(TEXT * 50))


def test_leaks_are_placed_by_line_across_chunks(tmp_path):
    data = b"ok\nok\n" + b"see /home/someone/x\n" + b"ok\n" * 3 + b"  /home/other\n"
    result, _ = run(tmp_path, "notes.txt", data, 4)
    assert [str(f) for f in result.leaks] == [
        "run/notes.txt:3:5: a home folder path (/home/...)",
        "run/notes.txt:7:3: a home folder path (/home/...)",
    ]


def test_serial_and_parallel_runs_agree(tmp_path):
    jobs = []
    for i in range(6):
        src = tmp_path / "src" / f"f{i}.txt"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_bytes(TEXT * (i + 1))
        jobs.append((src, f"run/f{i}.txt"))

    def results(workers, folder):
        js = [FileJob(str(s), k, str(tmp_path / folder / k)) for s, k in jobs]
        return run_files(js, plan(7, names={"gpu-b17": "desktop"}), workers)

    serial, parallel = results(1, "one"), results(2, "two")
    assert [(r.kit_path, r.sha256, r.counts) for r in serial] == [(r.kit_path, r.sha256, r.counts) for r in parallel]
    for _, kit_path in jobs:
        assert (tmp_path / "one" / kit_path).read_bytes() == (tmp_path / "two" / kit_path).read_bytes()


def _sources(tmp_path: Path, count: int) -> list[tuple[Path, str]]:
    jobs = []
    for i in range(count):
        src = tmp_path / "src" / f"f{i}.txt"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_bytes(TEXT * (i + 1))
        jobs.append((src, f"run/f{i}.txt"))
    return jobs


def test_a_worker_that_dies_leaves_its_files_to_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = _sources(tmp_path, 8)
    js = [FileJob(str(s), k, str(tmp_path / "out" / k)) for s, k in jobs]
    serial = run_files(js, plan(7, names={"gpu-b17": "desktop"}), 1)
    here, real = os.getpid(), pipeline.run_file

    def dies_on_f3(job: FileJob, p: Plan) -> object:
        if job.kit_path == "run/f3.txt" and os.getpid() != here:
            os._exit(9)  # a worker killed mid-file (the out-of-memory killer, say)
        return real(job, p)

    monkeypatch.setattr(pipeline, "run_file", dies_on_f3)
    parallel = run_files(js, plan(7, names={"gpu-b17": "desktop"}), 2)
    assert [(r.kit_path, r.sha256, r.counts) for r in parallel] == [(r.kit_path, r.sha256, r.counts) for r in serial]


@pytest.mark.parametrize("workers", [1, 2])
def test_meanwhile_runs_once_here_while_the_workers_take_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """run_files calls ``meanwhile`` once, in this process, after the workers have started (or
    before the files, with none): build imports the pages' modules then."""
    jobs = _sources(tmp_path, 8)
    js = [FileJob(str(s), k, str(tmp_path / "out" / k)) for s, k in jobs]
    here, real = os.getpid(), pipeline.run_file
    events: list[tuple[str, int]] = []
    started = tmp_path / "started"

    def run_file(job: FileJob, p: Plan) -> object:
        if os.getpid() != here:
            started.touch()  # a worker has begun
        return real(job, p)

    monkeypatch.setattr(pipeline, "run_file", run_file)
    results = run_files(js, plan(7, names={"gpu-b17": "desktop"}), workers, meanwhile=lambda: events.append(("meanwhile", os.getpid())))
    assert events == [("meanwhile", here)]
    assert [r.kit_path for r in results] == [k for _, k in jobs]
    assert started.exists() == (workers == 2)


@pytest.mark.parametrize("template", [None, "# {{ title }}\n\nOur own page.\n"], ids=["built-in", "own template"])
def test_the_build_imports_jinja2_after_its_workers_fork(tmp_path: Path, template: str | None) -> None:
    """Importing jinja2 took 25 ms of a build's start, with every other core idle: it is imported
    while the workers read the files, for the built-in templates and a kit's own alike."""
    from commands.verify_kits import make_bench

    config = make_bench(tmp_path, template=template)
    probe = (
        "import os, sys\n"
        "from kitbuild import crew\n"
        "real = crew.Crew.start\n"
        "def start(self, *a, **k):\n"
        "    print('jinja2 at fork:', 'jinja2' in sys.modules, flush=True)\n"
        "    return real(self, *a, **k)\n"
        "crew.Crew.start = start\n"
        "from kitbuild.commands import build as command\n"
        "real_write = command._write_generated\n"
        "def write(*a, **k):\n"
        "    print('jinja2 at the pages:', 'jinja2' in sys.modules, flush=True)\n"
        "    return real_write(*a, **k)\n"
        "command._write_generated = write\n"
        "from kitbuild import build\n"
        f"build({str(config)!r}, jobs=2)\n"
        "print('jinja2 at end:', 'jinja2' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["jinja2 at fork: False", "jinja2 at the pages: True", "jinja2 at end: True"], done.stdout


def test_many_files_go_out_in_no_more_batches_than_the_pipe_of_run_numbers_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kitbuild import crew

    monkeypatch.setattr(crew, "MAX_RUNS", 4)  # (100,000 files hold 1,024 batches; 20 hold 4 here)
    jobs = _sources(tmp_path, 20)
    js = [FileJob(str(s), k, str(tmp_path / "out" / k)) for s, k in jobs]
    parallel = run_files(js, plan(7, names={"gpu-b17": "desktop"}), 2)
    assert [r.kit_path for r in parallel] == [k for _, k in jobs]


def test_an_error_in_a_worker_is_raised_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kitbuild.errors import ConfigError

    jobs = _sources(tmp_path, 8)
    js = [FileJob(str(s), k, str(tmp_path / "out" / k)) for s, k in jobs]
    real = pipeline.run_file

    def fails_on_f5(job: FileJob, p: Plan) -> object:
        if job.kit_path == "run/f5.txt":
            raise ConfigError("run/f5.txt: the source file changed while it was copied")
        return real(job, p)

    monkeypatch.setattr(pipeline, "run_file", fails_on_f5)
    with pytest.raises(ConfigError, match="f5.txt: the source file changed"):
        run_files(js, plan(7, names={"gpu-b17": "desktop"}), 2)
    with pytest.raises(ChildProcessError):  # and no worker is left behind
        os.waitpid(-1, os.WNOHANG)


@pytest.mark.parametrize("kernel_copy", [True, False], ids=["copy_file_range", "python-copy"])
def test_unchanged_prefix_is_copied_then_rewritten_chunks_follow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_copy: bool) -> None:
    # The bytes before the first rewritten chunk are copied by the kernel (or, where it cannot,
    # by reading them again); the copy must be exactly the source up to there.
    if not kernel_copy:
        def refuse(*args: object) -> int:
            raise OSError(38, "not offered here")
        monkeypatch.setattr(os, "copy_file_range", refuse)
    src = tmp_path / "rows.ndjson"
    body = b"".join(b'{"n": %d, "p": "/x/keep"}\n' % i for i in range(300))
    src.write_bytes(body + b'{"p": "/x/ls/a"}\n' + body)
    plan = Plan([Matcher("path_prefix", pairs={"/x/ls": "L"})], {}, {}, (), chunk_size=512)
    result = run_file(FileJob(str(src), "k/rows.ndjson", str(tmp_path / "out")), plan)
    expected = body + b'{"p": "L/a"}\n' + body
    assert (tmp_path / "out").read_bytes() == expected
    assert result.sha256 == hashlib.sha256(expected).hexdigest() and result.counts == [1]
    untouched = tmp_path / "same.bin"
    untouched.write_bytes(b"\0" + body)
    run_file(FileJob(str(untouched), "k/same.bin", str(tmp_path / "same.out")), plan)
    assert (tmp_path / "same.out").read_bytes() == b"\0" + body


@pytest.mark.parametrize("size", [5, 1 << 20])
@pytest.mark.parametrize("data", [TEXT, b"nothing private here\n" * 3])
def test_a_source_digest_given_gives_the_same_result(tmp_path, size, data):
    # The digest-only pass is told its staged copy's digest, and stops hashing it at the first change.
    src = tmp_path / "rows.txt"
    src.write_bytes(data)
    p = plan(size, names={"gpu-b17": "desktop"})
    hashed = run_file(FileJob(str(src), "k/rows.txt", str(tmp_path / "a")), p)
    given = run_file(FileJob(str(src), "k/rows.txt", str(tmp_path / "b"), sha256(data)), p)
    assert given == hashed
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()



@pytest.mark.parametrize("size", [5, 64, 1 << 20])
def test_withholding_in_place_writes_what_a_new_file_would_hold(tmp_path, size):
    # The digest-only pass rewrites a staged copy over itself: every placeholder is shorter than
    # the digest it replaces, so each write lands on bytes already read, and the file is cut to
    # its new length at the end.
    digest = sha256(b"rows")
    # Unchanged lines first, past the 8 KiB a file's first read takes: the rewrite starts after
    # them, where the file already holds them.
    data = b"nothing to withhold here\n" * 400 + b"".join(b'{"n": %d, "rows": "sha256:%s"}\n' % (i, digest.encode()) for i in range(40)) + b"tail, no newline"
    withhold = Matcher("digest", placeholder="withheld-2026-09-29").with_withheld(frozenset({digest}))
    p = Plan([withhold], {}, {}, (), chunk_size=size, scan=False)
    (tmp_path / "a").write_bytes(data)
    (tmp_path / "b").write_bytes(data)
    renamed = run_file(FileJob(str(tmp_path / "a"), "k/rows.ndjson", str(tmp_path / "a.new"), sha256(data)), p)
    in_place = run_file(FileJob(str(tmp_path / "b"), "k/rows.ndjson", str(tmp_path / "b"), sha256(data), in_place=True), p)
    assert (tmp_path / "b").read_bytes() == (tmp_path / "a.new").read_bytes()
    assert in_place == renamed and in_place.counts == [40]
    assert b"withheld-2026-09-29" in (tmp_path / "b").read_bytes() and digest.encode() not in (tmp_path / "b").read_bytes()


def test_a_file_with_nothing_to_withhold_is_left_as_it_is_in_place(tmp_path):
    data = b'{"rows": "none here"}\n' * 10
    path = tmp_path / "a"
    path.write_bytes(data)
    before = path.stat()
    withhold = Matcher("digest", placeholder="withheld").with_withheld(frozenset({sha256(b"x")}))
    result = run_file(FileJob(str(path), "k/a.ndjson", str(path), sha256(data), in_place=True), Plan([withhold], {}, {}, (), scan=False))
    assert path.read_bytes() == data and result.sha256 == sha256(data)
    assert path.stat().st_mtime_ns == before.st_mtime_ns  # not even written


def test_a_job_in_place_must_name_its_own_source(tmp_path):
    (tmp_path / "a").write_bytes(b"x\n")
    with pytest.raises(ValueError):
        run_file(FileJob(str(tmp_path / "a"), "k/a.txt", str(tmp_path / "b"), in_place=True), plan(64))
