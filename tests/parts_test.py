"""A large text file observed in parts by several workers (kitbuild/parts.py): the parts' merged
observation is the whole file's, wherever the cuts fall at line starts, and verify reports the
same kit the same way with one job or two."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import BinaryIO, Iterator

import hypothesis.strategies as st
import pytest
from hypothesis import given

from commands.verify_kits import copy_kit, make_bench, sha
from observe_test import PLAN, PROPERTY, SMALL_BLOCK, SMALL_SNIFF, files, small_blocks

from kitbuild import build, parts
from kitbuild.commands import verify as verify_module
from kitbuild.commands.verify import verify
from kitbuild.hashing import HEADS
from kitbuild.kitfs import FolderKit
from kitbuild.kitview import KitFS, Member
from kitbuild.observe import Observation, Plan, observe_stream
from kitbuild.parts import MARGIN, Part, cut, merge, observe_part
from kitbuild.verify_report import verify_text


class Bytes(KitFS):
    """One file in memory, read as a folder kit reads: from any offset."""

    label = "memory"
    seekable = True

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data

    def members(self, sizes: bool = True) -> Iterator[Member]:
        return iter([Member(self.path, "file", len(self.data))])

    def open(self, path: str) -> BinaryIO:
        return io.BytesIO(self.data)


def in_parts(name: str, data: bytes, starts: list[int], plan: Plan = PLAN) -> Observation:
    fs = Bytes(name, data)
    jobs = [Part(name, -1, None)] + [Part(name, s, e) for s, e in zip(starts, [*starts[1:], None])]
    return merge(name, [observe_part(fs, plan, job) for job in jobs])


@pytest.mark.parametrize("name", ["r.ndjson", "r.txt"])
@PROPERTY
@given(data=st.data())
def test_the_parts_observe_what_the_whole_does_wherever_the_line_starts_cut(name, data):
    text = data.draw(files(name), label="data")
    if b"\0" in text[:SMALL_SNIFF]:
        text = text.replace(b"\0", b" ")  # parts are made of text files only
    line_starts = [0] + [i + 1 for i in range(len(text)) if text[i : i + 1] == b"\n" and i + 1 < len(text)]
    chosen = data.draw(st.lists(st.sampled_from(line_starts), max_size=6), label="cuts")
    with small_blocks(), pytest.MonkeyPatch.context() as mp:
        mp.setattr(parts, "BLOCK_SIZE", SMALL_BLOCK)
        whole = observe_stream(name, io.BytesIO(text), PLAN)
        assert in_parts(name, text, sorted({0, *chosen})) == whole


def test_a_leak_a_digest_and_a_pair_either_side_of_a_cut_are_each_found_once():
    head = b'{"note": "x"}\n' * 2000
    tail = b'{"path": "a/b.txt", "sha256": "' + b"ab" * 32 + b'", "at": "/home/bob/x"}\n'
    text = head + b'{"at": "/home/bob/y"}\n' + tail + head
    cut_at = len(head) + len(b'{"at": "/home/bob/y"}\n')
    whole = observe_stream("r.ndjson", io.BytesIO(text), PLAN)
    assert len(whole.leaks) == 2 and len(whole.pairs) == 1
    for at in (len(head), cut_at, cut_at + len(tail)):
        assert in_parts("r.ndjson", text, [0, at]) == whole


def test_a_private_string_of_two_lines_cut_between_them_is_found_once():
    # What a part finds starting in it may run past its end: the part reads MARGIN bytes more.
    plan = Plan(private={"gpu-b17\nrack 4": "a machine and its rack"})
    text = b"x\n" * 5000 + b"on gpu-b17\nrack 4 today\n" + b"y\n" * 5000
    whole = observe_stream("r.txt", io.BytesIO(text), plan)
    assert [leak.code for leak in whole.leaks] == ["KB901"]
    assert in_parts("r.txt", text, [0, text.index(b"rack 4")], plan) == whole


def test_a_cut_is_made_only_at_a_line_start_of_a_large_text_file(monkeypatch):
    monkeypatch.setattr(parts, "PART_BYTES", 1 << 12)
    text = b"".join(b'{"n": %d}\n' % i for i in range(5000))
    jobs = cut(Bytes("r.ndjson", text), "r.ndjson", len(text), 2, PLAN)
    assert jobs is not None and jobs[0] == Part("r.ndjson", -1, None)
    starts = [p.start for p in jobs[1:]]
    assert starts[0] == 0 and len(starts) == 2 * parts.PARTS_PER_WORKER // 2 * 2
    assert all(text[s - 1 : s] == b"\n" for s in starts[1:])
    assert [p.end for p in jobs[1:]] == [*starts[1:], None]


@pytest.mark.parametrize(
    "name, data, jobs, plan",
    [
        ("r.ndjson", b"x\n" * 10, 2, PLAN),  # small
        ("r.ndjson", b"x\n" * 50_000, 1, PLAN),  # one core
        ("r.json", b"x\n" * 50_000, 2, PLAN),  # a JSON document: its pairs need it whole
        ("SHA256SUMS", b"x\n" * 50_000, 2, PLAN),  # a file the build writes about the kit
        ("r.bin", b"\0" + b"x\n" * 50_000, 2, PLAN),  # binary
        ("r.txt.zst", b"\x28\xb5\x2f\xfd" + b"x\n" * 50_000, 2, PLAN),  # compressed: read through from its start
        ("fig.pdf", b"%PDF-1.4\n" + b"x\n" * 50_000, 2, PLAN),  # a PDF: its streams run across lines
        ("r.txt", b"x" * 100_000, 2, PLAN),  # one line: nowhere to cut
        ("r.txt", b"x\n" * 50_000, 2, Plan(words=(("two\nlines",),))),  # a word that runs across a line end
    ],
)
def test_a_file_is_observed_whole_where_parts_would_not_be_the_same(monkeypatch, name, data, jobs, plan):
    monkeypatch.setattr(parts, "PART_BYTES", 1 << 12)
    assert cut(Bytes(name, data), name, len(data), jobs, plan) is None


def test_a_reader_that_cannot_seek_reads_a_file_whole(monkeypatch):
    monkeypatch.setattr(parts, "PART_BYTES", 1 << 12)
    fs = Bytes("r.txt", b"x\n" * 50_000)
    fs.seekable = False
    assert cut(fs, "r.txt", 100_000, 2, PLAN) is None


def test_a_file_that_cannot_be_opened_is_left_whole_for_its_finding(monkeypatch):
    # Cut in the main process: an error there would stop verify, where a worker makes it KB111.
    monkeypatch.setattr(parts, "PART_BYTES", 1 << 12)
    fs = Bytes("r.txt", b"x\n" * 50_000)

    def refuse(path: str) -> BinaryIO:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fs, "open", refuse)
    assert cut(fs, "r.txt", 100_000, 2, PLAN) is None


def test_merge_reports_a_part_that_could_not_be_read():
    obs = merge("r.txt", [Observation("r.txt", size=3, sha256="a" * 64), Observation("r.txt", error="gone")])
    assert obs.error == "gone"


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The verify tests' small bench with a large NDJSON file whose every rule fires on every line:
    a machine name, a private path and the digest of a rewritten file (withheld)."""
    root = tmp_path_factory.mktemp("bench")
    config = make_bench(root)
    run = root.resolve() / "bench" / "ls-2026-11-07" / "full-s1" / "run"
    lock = sha((run / "lock.json").read_bytes())
    line = '{"qid": "q%d", "route": "gpu-b17", "lock": {"path": "' + str(run) + '/lock.json", "sha256": "' + lock + '"}, "score": %d}\n'
    (run / "big.ndjson").write_bytes("".join(line % (i, i % 2) for i in range(8000)).encode())
    build(config, jobs=1)
    return root / "kit"


BIG = "learned-sparse-2026-11-07/full-s1/run/big.ndjson"


@pytest.mark.parametrize("broken", [False, True], ids=["clean", "a leak and a changed digest near a cut"])
def test_verify_reports_a_kit_cut_into_parts_as_it_does_on_one_job(kit, tmp_path, monkeypatch, broken):
    copy = copy_kit(kit, tmp_path / "kit")
    big = copy / BIG
    if broken:
        text = big.read_bytes()
        middle = text.index(b"\n", len(text) // 2) + 1
        big.write_bytes(text[:middle] + b'{"at": "/home/bob/secret", "sha": "' + b"0" * 64 + b'"}\n' + text[middle:])
    monkeypatch.setattr(parts, "PART_BYTES", 1 << 16)
    with FolderKit(copy) as fs:
        assert cut(fs, BIG, big.stat().st_size, 2, Plan()) is not None
    merged: list[str] = []
    monkeypatch.setattr(verify_module, "merge", lambda path, found: merged.append(path) or merge(path, found))
    one, two = verify(copy, jobs=1), verify(copy, jobs=2)
    assert merged == [BIG]  # two jobs: observed in parts; one job: whole
    assert verify_text(two) == verify_text(one)
    assert two.findings == one.findings
    assert one.ok is not broken, verify_text(one)
    if broken:
        assert {"KB104", "KB402", "KB501"} <= one.codes(), verify_text(one)


def test_a_file_in_parts_has_the_heads_of_the_whole():
    # The hash job keeps the digests of the file's first bytes, as the whole pass does.
    text = b"".join(b'{"i": %d, "v": "%s"}\n' % (i, b"x" * (i % 50)) for i in range(40_000))
    whole = observe_stream("r.ndjson", io.BytesIO(text), PLAN)
    assert len(text) > HEADS[-1] and whole.heads == tuple(hashlib.sha256(text[:mark]).hexdigest() for mark in HEADS)
    cuts = [0, text.index(b"\n", len(text) // 3) + 1, text.index(b"\n", 2 * len(text) // 3) + 1]
    assert in_parts("r.ndjson", text, cuts) == whole
