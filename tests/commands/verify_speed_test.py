"""verify's fast scan (issue 5): the same answers whatever the block size, the chunking or the number of workers.

The scan is checked against plain references computed over the whole file at once: regular
expressions for the counts and digests, the leak gate's ShapeFinder for the shapes, a JSON parse
of every record for the pairs. No timings here: the speed lives in bench/.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kitbuild import crew, filescan
from kitbuild.commands import verify as verify_module
from kitbuild.commands.verify import verify
from kitbuild.filescan import LEAK_SHAPES, ScanPlan, chunks, json_pairs, locate, scan_blocks, scan_bytes, scan_files
from kitbuild.kitfs import FolderKit
from kitbuild.leaks import ShapeFinder
from kitbuild.schema import key_path
from kitbuild.verify_report import verify_json

from .verify_kits import EXTERNAL, build_kit, copy_kit, edit_json, refresh

LS = "learned-sparse-2026-11-07"
ROWS = f"{LS}/full-s1/run/rows.ndjson"
READING = f"{LS}/full-s1/score/reading.json"
NOTES = f"{LS}/notes.txt"
PLACEHOLDER = "w-1"
DIGEST = "ab" * 32
OTHER = "cd" * 32
TARGET = "run/a.json"
PLAN = ScanPlan(
    records=frozenset({"r.ndjson", "r.txt", "r.json"}),
    paths=frozenset({TARGET, "run/b.json"}),
    placeholders=(PLACEHOLDER,),
    words=(("desktop", "earlier-run"), ("abab", "ba")),  # the second overlaps itself: counted exactly, not by bytes.count
    allow=("/home/shared",),
)

FRAGMENTS = [
    b"\n",
    b"\r\n",
    b"y" * 50,
    b" ",
    PLACEHOLDER.encode(),
    b"desktop",
    b"earlier-run",
    b"ababab",
    b"sha256:" + DIGEST.encode(),
    DIGEST.upper().encode(),
    OTHER.encode(),
    b"f" * 65,  # a run of 65 hex digits is no digest
    b"/home/bob/x",
    b"/home/shared/x",
    b"mail bob@example.org ",
    b"any@5",
    b"192.168.1.20",
    b"rows-0010.ndjson",
    b"file:///etc",
    b'{"path": "run/a.json", "sha256": "' + DIGEST.encode() + b'"}',
    b'{"path": "run/a.json", "sha256": "' + PLACEHOLDER.encode() + b'"}',
    b'{"run/b.json": "sha256:' + OTHER.encode() + b'"}',
    b'{"x": "' + DIGEST.encode() + b'"}',
    b'{"broken": "' + DIGEST.encode(),
]


def _blocks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _summary(scan: filescan.FileScan) -> tuple[object, ...]:
    return (scan.size, scan.sha256, scan.digests, scan.placeholders, scan.words, scan.leaks, scan.pairs, scan.pairs_unread)


def _reference_digests(data: bytes) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for m in re.finditer(rb"(?<![0-9A-Fa-f])[0-9A-Fa-f]{64}(?![0-9A-Fa-f])", data):
        seen = out.setdefault(m.group(0).decode().lower(), [0, m.start()])
        seen[0] += 1
    return out


def _reference_count(forms: tuple[str, ...], data: bytes) -> int:
    alternation = b"|".join(re.escape(f.encode()) for f in sorted(forms, key=lambda f: (-len(f), f)))
    return len(re.findall(alternation, data))


def _reference_leaks(data: bytes) -> list[tuple[str, int]]:
    finder = ShapeFinder([(what, shape) for _, what, shape in LEAK_SHAPES])
    out = []
    for start, end, i in finder.find(data):
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", end)
        line = data[line_start : line_end if line_end >= 0 else len(data)]
        if any(a <= start - line_start and end - line_start <= a + len(b"/home/shared") for a in _all(line, b"/home/shared")):
            continue
        out.append((LEAK_SHAPES[i][0], start))
    return out


def _all(data: bytes, needle: bytes) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(needle), data)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=120), st.sampled_from([1, 7, 61, 64, 100, 4096]), st.sampled_from(["r.ndjson", "r.txt", "r.json"]))
def test_any_block_size_gives_the_scan_of_the_whole(parts: list[bytes], size: int, path: str) -> None:
    data = b"".join(parts)
    whole = scan_bytes(path, data, PLAN)
    assert _summary(scan_blocks(path, _blocks(data, size), PLAN)) == _summary(whole)
    # A file in one block is scanned without the streaming window: the same scan.
    assert _summary(scan_blocks(path, (data,), PLAN)) == _summary(whole)
    assert whole.size == len(data) and whole.sha256 == hashlib.sha256(data).hexdigest()
    assert whole.digests == _reference_digests(data)
    assert whole.placeholders == [data.count(PLACEHOLDER.encode())]
    assert whole.words == [_reference_count(forms, data) for forms in PLAN.words]
    assert [(leak.code, leak.offset) for leak in whole.leaks] == _reference_leaks(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=120), st.sampled_from([7, 64, 100, 4096]), st.sampled_from(["r.ndjson", "r.json"]))
def test_a_file_read_into_the_reused_buffer_gives_the_scan_of_the_whole(tmp_path_factory: pytest.TempPathFactory, parts: list[bytes], size: int, path: str) -> None:
    # scan_file reads a file larger than a block into one buffer that each read overwrites: a
    # block kept past its turn (a JSON document's parts, a window) would read the next block's bytes.
    data = b"".join(parts)
    folder = tmp_path_factory.mktemp("kit")
    (folder / path).write_bytes(data)
    plan = PLAN.replace(block_size=size)
    read = filescan.scan_file(FolderKit(folder), path, plan)
    assert read.error is None
    whole = scan_bytes(path, data, PLAN)
    assert _summary(read) == _summary(whole)
    assert (read.pairs, read.pairs_unread) == (whole.pairs, whole.pairs_unread)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=200, max_size=400), st.sampled_from([1000, 4096, 9000]), st.sampled_from(["r.ndjson", "r.txt"]))
def test_a_file_many_windows_long_read_in_place_gives_the_scan_of_the_whole(tmp_path_factory: pytest.TempPathFactory, parts: list[bytes], size: int, path: str) -> None:
    # Long enough (repeated past 40 KiB) that the window drops what it settled many times over:
    # every offset a finding keeps must still count from the file's start.
    data = b"".join(parts) * (40_000 // max(1, len(b"".join(parts))) + 1)
    folder = tmp_path_factory.mktemp("kit")
    (folder / path).write_bytes(data)
    read = filescan.scan_file(FolderKit(folder), path, PLAN.replace(block_size=size))
    whole = scan_bytes(path, data, PLAN.replace(block_size=len(data) + 1))
    assert read.error is None
    assert _summary(read) == _summary(whole)


def test_a_json_document_read_in_blocks_is_parsed_whole(tmp_path: Path) -> None:
    pad = "x" * 5_000
    data = orjson.dumps({"pad": pad, "reads": {"path": TARGET, "sha256": DIGEST}, "more": pad})
    (tmp_path / "r.json").write_bytes(data)
    for size in (100, 4096, 1 << 20):
        plan = PLAN.replace(block_size=size)
        scan = filescan.scan_file(FolderKit(tmp_path), "r.json", plan)
        assert (scan.pairs, scan.pairs_unread) == ({("reads.sha256", TARGET, DIGEST): [1, None]}, False)
        assert scan.sha256 == hashlib.sha256(data).hexdigest()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([f for f in FRAGMENTS if b"\n" not in f]), min_size=1, max_size=30), st.integers(1000, 20_000))
def test_a_line_longer_than_the_margin_cuts_matches_anywhere_and_counts_each_once(parts: list[bytes], size: int) -> None:
    # One line of 30 kB or more: the settled part of each window ends mid-line, wherever the block
    # size puts it, so some digest, placeholder, word or shape is cut there.
    unit = b"".join(parts)
    data = unit * (30_000 // len(unit) + 1)
    whole = scan_bytes("r.txt", data, PLAN)
    assert _summary(scan_blocks("r.txt", _blocks(data, size), PLAN)) == _summary(whole)
    assert whole.placeholders == [data.count(PLACEHOLDER.encode())]
    assert whole.words == [_reference_count(forms, data) for forms in PLAN.words]
    assert whole.digests == _reference_digests(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60), st.sampled_from([1, 13, 64, 4096]))
def test_ndjson_pairs_are_those_of_every_record_that_prints_a_digest(parts: list[bytes], size: int) -> None:
    data = b"".join(parts)
    expected: dict[tuple[str, str, str], list[object]] = {}
    unread = False
    offset = 0
    for line in data.split(b"\n"):
        # A record is read for pairs when it prints a digest and names a file here (or may, in escapes).
        if _reference_digests(line) and (any(t.encode() in line for t in PLAN.paths) or b"\\" in line):
            try:
                document = orjson.loads(line)
            except orjson.JSONDecodeError:
                unread = True
            else:
                for triple in json_pairs(document, PLAN.paths, PLAN.placeholders):
                    if triple[2] != PLACEHOLDER:
                        expected.setdefault(triple, [0, offset])[0] += 1  # type: ignore[operator]
        offset += len(line) + 1
    scan = scan_blocks("r.ndjson", _blocks(data, size), PLAN)
    assert scan.pairs == expected
    assert scan.pairs_unread == unread


def _reference_pairs(document: object, paths: frozenset[str], placeholders: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """json_pairs as its doc states it, written plainly: each object, in document order, gives its
    path-and-digest pair (exactly one path-like and one sha256-like field), then its entries from
    a kit path to a digest; a digest is 64 hex digits, after "sha256:" or not, or a placeholder."""

    def said(value: object) -> str | None:
        if not isinstance(value, str):
            return None
        if value in placeholders:
            return value
        m = re.fullmatch(r"(?:sha256:)?([0-9A-Fa-f]{64})", value)
        return m.group(1).lower() if m else None

    def normal(path: str) -> str:
        return path[2:] if path.startswith("./") else path

    def is_path_key(key: str) -> bool:
        return key.lower() in {"path", "file", "filename", "file_path", "filepath", "name_path"} or key.lower().endswith("_path")

    def is_digest_key(key: str) -> bool:
        k = key.lower()
        return k in {"sha256", "sha256sum", "digest", "checksum"} or k.endswith("sha256") or k.endswith("_digest")

    out: list[tuple[str, str, str]] = []

    def walk(where: list[object], value: object) -> None:
        if isinstance(value, dict):
            path_keys = [k for k, v in value.items() if isinstance(v, str) and is_path_key(k)]
            digest_keys = [k for k, v in value.items() if is_digest_key(k) and said(v)]
            if len(path_keys) == 1 and len(digest_keys) == 1 and normal(value[path_keys[0]]) in paths:
                out.append((key_path([*where, digest_keys[0]]), normal(value[path_keys[0]]), said(value[digest_keys[0]])))  # type: ignore[arg-type]
            for k, v in value.items():
                if (found := said(v)) is not None and normal(k) in paths:
                    out.append((key_path([*where, k]), normal(k), found))
            for k, v in value.items():
                walk([*where, k], v)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk([*where, i], v)

    walk([], document)
    return out


_PAIR_KEYS = ["path", "File", "run_path", "sha256", "Digest", "input_sha256", "checksum", "name", TARGET, "./" + TARGET, "run/b.json"]
_PAIR_VALUES = st.sampled_from(
    [DIGEST, "sha256:" + DIGEST.upper(), "SHA256:" + DIGEST, OTHER[:-1], OTHER + "0", PLACEHOLDER, "", TARGET, "./" + TARGET, "run/b.json", "x"]
) | st.integers(0, 3) | st.none()
_DOCUMENTS = st.recursive(
    _PAIR_VALUES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_PAIR_KEYS), inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(_DOCUMENTS, st.sampled_from([(PLACEHOLDER,), ("", PLACEHOLDER), ()]))
@example({"path": TARGET, "sha256": ""}, ("", PLACEHOLDER))  # an empty placeholder is no digest field
@example({"a": [{"path": "./" + TARGET, "sha256": "sha256:" + DIGEST.upper(), TARGET: PLACEHOLDER}]}, (PLACEHOLDER,))
@example({"File": TARGET, "input_sha256": DIGEST, "x": {"run_path": TARGET, "Digest": DIGEST}}, ())  # each kind of key name
def test_json_pairs_are_the_documents_pairs_in_document_order(document: object, placeholders: tuple[str, ...]) -> None:
    paths = frozenset([TARGET, "run/b.json"])
    assert list(json_pairs(document, paths, placeholders)) == _reference_pairs(document, paths, placeholders)


def test_records_that_print_only_the_placeholder_are_not_parsed() -> None:
    # Not JSON at all: had these lines been parsed, the scan would say so.
    data = b'{"path": "run/a.json", "sha256": "w-1"\n' * 3
    scan = scan_bytes("r.ndjson", data, PLAN)
    assert (scan.pairs, scan.pairs_unread, scan.placeholders) == ({}, False, [3])


def test_a_record_that_names_no_file_here_is_not_parsed() -> None:
    data = b'{"path": "elsewhere/x.json", "sha256": "' + DIGEST.encode() + b'"\n'
    assert scan_bytes("r.ndjson", data, PLAN).pairs_unread is False
    escaped = b'{"path": "run\\/a.json", "sha256": "' + DIGEST.encode() + b'"}\n'
    assert scan_bytes("r.ndjson", escaped, PLAN).pairs == {("sha256", TARGET, DIGEST): [1, 0]}


def test_a_record_longer_than_a_block_is_parsed_whole() -> None:
    pad = "x" * 50_000
    record = orjson.dumps({"pad": pad, "reads": {"path": TARGET, "sha256": DIGEST}, "more": pad}) + b"\n"
    data = b'{"a": 1}\n' + record + record
    for size in (100, 4096, 1 << 20):
        plan = ScanPlan(PLAN.records, PLAN.paths, PLAN.placeholders, block_size=size)
        scan = scan_blocks("r.ndjson", _blocks(data, size), plan)
        assert scan.pairs == {("reads.sha256", TARGET, DIGEST): [2, 9]}
    small = ScanPlan(PLAN.records, PLAN.paths, PLAN.placeholders, pair_limit=10_000)
    assert scan_blocks("r.ndjson", _blocks(data, 4096), small).pairs_unread is True


def test_matches_cut_by_a_block_edge_are_found_once() -> None:
    line = b"see " + PLACEHOLDER.encode() + b" desktop sha256:" + DIGEST.encode() + b" /home/bob mail bob@example.org\n"
    data = b"y" * 9000 + b"\n" + line * 3
    for cut in range(9001, 9001 + len(line)):
        scan = scan_blocks("r.txt", [data[:cut], data[cut:]], PLAN)
        assert scan.placeholders == [3] and scan.words == [_reference_count(forms, data) for forms in PLAN.words] and scan.words[0] == 3
        assert scan.digests == {DIGEST: [3, 9001 + line.index(DIGEST.encode())]}
        assert [leak.code for leak in scan.leaks] == ["KB501", "KB502"] * 3


def test_locate_counts_lines_and_columns_from_one() -> None:
    data = b"ab\ncd\r\n\nxyz"
    offsets = [0, 1, 3, 7, 8, 10]
    for size in (1, 2, 5, 100):
        assert locate(_blocks(data, size), offsets) == {0: (1, 1), 1: (1, 2), 3: (2, 1), 7: (3, 1), 8: (4, 1), 10: (4, 3)}


# -- many files ---------------------------------------------------------------------------------


def test_chunks_keep_order_and_cover_every_file() -> None:
    paths = [f"f{i:03d}" for i in range(100)]
    sizes = [10] * 90 + [10_000] * 10
    runs = chunks(paths, sizes, 2)
    assert [p for run in runs for p in run] == paths
    # Each run ends at its share of the bytes or of the files, a quarter of each in the last quarter of the work.
    assert len(runs) <= 3.5 * (2 * filescan._CHUNKS_PER_JOB) + 2
    assert max(len(run) for run in runs) <= -(-len(paths) // (2 * filescan._CHUNKS_PER_JOB))
    share = sum(sizes) // (2 * filescan._CHUNKS_PER_JOB)
    assert all(sum(sizes[paths.index(p)] for p in run[:-1]) < share for run in runs)  # a big file ends its run
    assert chunks([], [], 4) == []
    assert chunks(["a"], [0], 8) == [["a"]]


def _chunks_file_by_file(paths: list[str], sizes: list[int], jobs: int) -> list[list[str]]:
    """The rule for runs, one file at a time: a run ends at its share of the bytes or of the files,
    a quarter of each for a run that starts past three quarters of the estimated work."""
    parts = min(jobs * filescan._CHUNKS_PER_JOB, crew.MAX_RUNS // 4)
    byte_target, file_target = max(1, sum(sizes) // parts), max(1, -(-len(paths) // parts))
    tail_from = filescan._TAIL_FROM * (len(paths) * filescan._FILE_S + sum(sizes) * filescan._BYTE_S)
    out: list[list[str]] = []
    current: list[str] = []
    held = before = 0
    shares = (byte_target, file_target)
    for i, (path, size) in enumerate(zip(paths, sizes)):
        if not current:
            in_tail = i * filescan._FILE_S + before * filescan._BYTE_S >= tail_from
            tail = (max(1, byte_target // filescan._TAIL_SHARE), max(1, file_target // filescan._TAIL_SHARE))
            shares = tail if in_tail else (byte_target, file_target)
        current.append(path)
        held += size
        if held >= shares[0] or len(current) >= shares[1]:
            out.append(current)
            before += held
            current, held = [], 0
    return out + [current] if current else out


def test_the_last_quarter_of_the_work_is_cut_four_times_as_fine() -> None:
    """The workers take runs in order: small last runs keep one from waiting long for the other."""
    paths = [f"f{i:04d}" for i in range(2000)]
    runs = chunks(paths, [425_000] * 2000, 2)  # workload B: 16 shares of 125 files
    assert [len(run) for run in runs] == [125] * 12 + [31] * 16 + [4]


@pytest.mark.parametrize("jobs", [64, 500])
def test_chunks_for_many_cores_are_few_enough_for_the_pipe_of_run_numbers(jobs: int) -> None:
    # A crew's run numbers all go into one pipe before any worker reads them (kitbuild.crew).
    sizes = [1] * 20_000 + [1 << 20] * 300
    paths = [f"f{i:05d}" for i in range(len(sizes))]
    runs = chunks(paths, sizes, jobs)
    assert [p for run in runs for p in run] == paths
    assert len(runs) <= crew.MAX_RUNS
    assert runs == _chunks_file_by_file(paths, sizes, jobs)


@settings(max_examples=300, deadline=None)
# Sizes from a few round values too, so that a run's bytes often come to its share exactly.
@given(st.lists(st.one_of(st.integers(min_value=0, max_value=5000), st.sampled_from([0, 10, 100])), max_size=300), st.integers(min_value=1, max_value=4))
@example([10] * 8 + [0] * 800, 1)
def test_chunks_end_each_run_where_the_file_by_file_rule_does(sizes: list[int], jobs: int) -> None:
    paths = [f"f{i:03d}" for i in range(len(sizes))]
    assert chunks(paths, sizes, jobs) == _chunks_file_by_file(paths, sizes, jobs)


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_kit(tmp_path_factory.mktemp("bench"))


def _broken(kit: Path, where: Path) -> Path:
    """A copy with a wrong pair, an unresolved digest and leaks, so every figure has something in it."""
    copy = copy_kit(kit, where)
    edit_json(copy / READING, lambda d: d["digests"].update({ROWS: EXTERNAL}))
    with open(copy / NOTES, "ab") as f:
        f.write(b"\nsha " + b"ab" * 32 + b"\nread /home/bob/data\nmail bob@example.org\n")
    refresh(copy)
    return copy


def test_workers_give_the_report_one_process_gives(kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = _broken(kit, tmp_path / "kit")
    serial = verify_json(verify(copy, jobs=1))
    monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)  # a pool even for a kit this small
    assert verify_json(verify(copy, jobs=2)) == serial
    assert {"KB401", "KB402", "KB501", "KB502"} <= {f["code"] for f in orjson.loads(serial)["findings"]}


def test_files_below_the_root_are_read_while_the_pages_are_rendered(kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers start before the pages are rendered (they need no page), and the report,
    a page that differs from its template included, is the one a single process gives."""
    import kitbuild.pages

    copy = _broken(kit, tmp_path / "kit")
    with open(copy / "README.md", "ab") as f:
        f.write(b"an edit\n")
    serial = verify_json(verify(copy, jobs=1))
    monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)  # a pool even for a kit this small
    started: list[list[str]] = []
    render = kitbuild.pages.render_pages

    def watched(*args: object, **kwargs: object) -> dict[str, bytes]:
        # Which files were handed to workers before this call, if any were.
        started.extend(list(s.paths) for s in started_scans if s._crew is not None)
        return render(*args, **kwargs)  # type: ignore[arg-type]

    started_scans: list[filescan.StartedScan] = []
    init = filescan.StartedScan.__init__

    def remember(self: filescan.StartedScan, *args: object) -> None:
        init(self, *args)  # type: ignore[arg-type]
        started_scans.append(self)

    monkeypatch.setattr(kitbuild.pages, "render_pages", watched)
    monkeypatch.setattr(filescan.StartedScan, "__init__", remember)
    assert verify_json(verify(copy, jobs=2)) == serial
    assert {"KB601", "KB401", "KB501"} <= {f["code"] for f in orjson.loads(serial)["findings"]}
    assert len(started) == 1
    assert NOTES in started[0] and ROWS in started[0]
    assert not [p for p in started[0] if "/" not in p]  # the pages, at the root, wait for their plan


def _forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process ids of the workers forked from here on."""
    pids: list[int] = []
    fork = os.fork

    def recorded() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recorded)
    return pids


def _all_ended(pids: list[int]) -> bool:
    """Whether each of ``pids`` has ended and been waited for (no zombie left)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def test_a_check_that_fails_after_the_head_start_stops_its_workers(kit: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kitbuild.pages

    def fails(*args: object, **kwargs: object) -> dict[str, bytes]:
        raise RuntimeError("rendering failed")

    monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)
    monkeypatch.setattr(kitbuild.pages, "render_pages", fails)
    pids = _forked(monkeypatch)
    with pytest.raises(RuntimeError, match="rendering failed"):
        verify(kit, jobs=2)
    assert len(pids) == 2 and _all_ended(pids)


@pytest.mark.parametrize("pooled", [False, True])
def test_a_started_scan_is_collected_once_and_never_after_a_cancel(kit: Path, monkeypatch: pytest.MonkeyPatch, pooled: bool) -> None:
    """A second collect, or one after cancel, would read every file again in this process and
    pass for the workers' answer: it is an error instead."""
    fs = FolderKit(kit)
    members = [m for m in fs.members() if m.kind == "file"]
    paths, sizes = [m.path for m in members], [m.size or 0 for m in members]
    plan = ScanPlan(records=frozenset(paths), paths=frozenset(paths), placeholders=("withheld",))
    if pooled:
        monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)
    started = filescan.StartedScan(fs, paths, sizes, plan, 2)
    assert (started._crew is not None) is pooled
    assert list(started.collect()) == paths
    with pytest.raises(RuntimeError, match="collected once"):
        started.collect()
    cancelled = filescan.StartedScan(fs, paths, sizes, plan, 2)
    cancelled.cancel()
    if pooled:
        with pytest.raises(RuntimeError, match="cancelled"):
            cancelled.collect()


def test_scan_files_in_a_pool_equals_one_by_one(kit: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs = FolderKit(kit)
    members = [m for m in fs.members() if m.kind == "file"]
    paths = [m.path for m in members]
    plan = ScanPlan(records=frozenset(paths), paths=frozenset(paths), placeholders=("withheld",))
    serial = scan_files(fs, paths, [m.size or 0 for m in members], plan, 1)
    monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)
    monkeypatch.setattr(filescan, "_CHUNKS_PER_JOB", 3)
    pooled = scan_files(fs, paths, [m.size or 0 for m in members], plan, 2)
    assert list(pooled) == paths
    assert {p: _summary(s) for p, s in pooled.items()} == {p: _summary(s) for p, s in serial.items()}


def test_cli_takes_jobs(kit: Path) -> None:
    from typer.testing import CliRunner

    from kitbuild.cli import app

    result = CliRunner().invoke(app, ["verify", str(kit), "--jobs", "2"])
    assert result.exit_code == 0, result.stdout
    assert CliRunner().invoke(app, ["verify", str(kit), "--jobs", "0"]).exit_code == 2


def test_a_folder_listed_without_sizes_lists_the_same_members(tmp_path: Path) -> None:
    import os

    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "a.ndjson").write_bytes(b"{}\n")
    (tmp_path / "index.json").write_bytes(b"{}")
    (tmp_path / "link").symlink_to(tmp_path / "index.json")
    os.mkfifo(tmp_path / "records" / "pipe")
    fs = FolderKit(tmp_path)
    with_sizes = list(fs.members())
    without = list(fs.members(sizes=False))
    assert [(m.path, m.kind) for m in without] == [(m.path, m.kind) for m in with_sizes]
    assert {m.kind for m in without} == {"file", "dir", "symlink", "other"}
    assert [m.size for m in with_sizes if m.kind == "file"] == [2, 3]
    assert all(m.size is None for m in without)


def test_a_pool_sends_back_every_kind_of_finding_a_file_alone_can_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers send a file with nothing to report as its size and digest alone; each file here
    # holds exactly one thing that makes it worth more, so none of them may be sent short.
    digest = hashlib.sha256(b"x").hexdigest()
    files = {
        "r/plain.txt": b"nothing to see\n",
        "r/word.txt": b"the desktop ran it\n",
        "r/placeholder.txt": b"sha256 withheld\n",
        "r/digest.txt": digest.encode() + b"\n",
        "r/leak.txt": b"read /home/alice/rows\n",
        "r/email.txt": b"mail alice@example.org\n",
        "r/pair.ndjson": b'{"path": "r/plain.txt", "sha256": "' + digest.encode() + b'"}\n',
        "README.md": b"not the page\n",
    }
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    fs = FolderKit(tmp_path)
    paths = sorted(files)
    plan = ScanPlan(
        records=frozenset(p for p in paths if p.startswith("r/")),
        paths=frozenset(paths),
        placeholders=("withheld",),
        words=(("desktop",),),
        expect={"README.md": b"the page\n"},
    )
    serial_loud: list[str] = []
    serial = scan_files(fs, paths, [len(files[p]) for p in paths], plan, 1, loud=serial_loud)
    monkeypatch.setattr(filescan, "_SERIAL_BELOW_S", 0.0)
    monkeypatch.setattr(filescan, "_CHUNKS_PER_JOB", 1)
    pooled_loud: list[str] = []
    pooled = scan_files(fs, paths, [len(files[p]) for p in paths], plan, 2, loud=pooled_loud)
    assert {p: (*_summary(s), s.page_diff) for p, s in pooled.items()} == {p: (*_summary(s), s.page_diff) for p, s in serial.items()}
    worth_more = {p for p, s in serial.items() if not filescan._plain(s)}
    assert worth_more == set(paths) - {"r/plain.txt"}
    # Both ways name those files, and only those, as the ones a check needs to look at.
    assert serial_loud == pooled_loud == [p for p in paths if p in worth_more]


_PATH_PARTS = st.sampled_from(["a", "b", "..", ".", "", "C:", "x\\y", "n\0", "l\n", "README.md", "index.json", "SHA256SUMS"])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_PATH_PARTS, min_size=1, max_size=3).map("/".join), max_size=6))
@example(["a", "a"])
@example(["b", "a"])
@example(["a/", "b"])
@example(["l\n/../a"])
@example(["README.md"])
def test_paths_taken_at_once_are_those_the_loop_takes_without_a_finding(paths: list[str]) -> None:
    # The test over all of index.json's paths at once stands for the entry-by-entry loop only
    # where that loop would find nothing: every path refused, twice, never listed or out of
    # order must send the entries through the loop.
    findings: list[object] = []
    listed, in_order = verify_module._listed_one_by_one([{"path": p} for p in paths], [], findings)  # type: ignore[arg-type]
    assert verify_module._plainly_listed(paths) == (not findings)
    if not findings:
        assert in_order and list(listed) == paths


def test_a_kit_without_figures_is_verified_without_the_figure_modules(kit: Path) -> None:
    """The recounts, values and tables are a fifth of the pages' import, made in the main process
    while the workers hash; a kit that declares no figures needs none of them."""
    code = (
        "import sys\n"
        "from kitbuild import verify\n"
        f"assert not verify({str(kit)!r}).findings\n"
        "print(sorted(m for m in sys.modules if m.startswith('kitbuild.figures.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['kitbuild.figures.errors', 'kitbuild.figures.verify']"


def test_a_shape_without_an_anchor_is_searched_for_in_a_record_the_walk_found_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record in which the walk finds no anchor and no '@' skips the leak shapes' search only
    while every shape stands on an anchor: one that has none is searched for everywhere."""
    from kitbuild import leaks

    record = b'{"route": "desktop", "note": "saved under /mnt/scratch/run"}\n' * 40
    plan = ScanPlan(records=frozenset({"r.ndjson"}), paths=frozenset(), placeholders=(PLACEHOLDER,), words=(("desktop",),))
    assert [leak.what for leak in filescan._scan_one("r.ndjson", record, plan).leaks] == ["a mounted volume path (/mnt/...)"] * 40
    monkeypatch.setitem(leaks.SHAPE_ANCHORS, "a mounted volume path (/mnt/...)", ())
    unanchored = ScanPlan(records=frozenset({"r.ndjson"}), paths=frozenset(), placeholders=(PLACEHOLDER,), words=(("desktop",),))
    assert not filescan._compiled(unanchored).all_anchored
    assert [leak.what for leak in filescan._scan_one("r.ndjson", record, unanchored).leaks] == ["a mounted volume path (/mnt/...)"] * 40
