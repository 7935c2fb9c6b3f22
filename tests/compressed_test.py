"""What a compressed file holds is read by the one pass (kitbuild.compressed through
kitbuild.observe): every layer, every member, placed by line and column, within bounds."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import random
import time
import zipfile
import zlib

import pytest
import zstandard
from hypothesis import given, settings, strategies as st

from kitbuild import compressed, index
from kitbuild.compressed import MEMORY, compression_of
from kitbuild.observe import Observer, Plan, observe_bytes, observe_stream
from kittest import make_files, write_kit

COMPRESS = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstandard": lambda d: zstandard.ZstdCompressor().compress(d),
}
PLAN = Plan(private={"gpu07": "a machine name"})


def inside(data: bytes, plan: Plan = PLAN, name: str = "r.gz") -> list[tuple[str, str]]:
    return [(leak.code, leak.what) for leak in observe_bytes(name, data, plan).leaks if leak.offset < 0]


def place(text: bytes, needle: bytes) -> tuple[int, int]:
    at = text.index(needle)
    return text.count(b"\n", 0, at) + 1, at - text.rfind(b"\n", 0, at)


@pytest.mark.parametrize("kind", COMPRESS)
def test_each_compression_is_named_from_its_first_bytes(kind):
    assert compression_of(COMPRESS[kind](b"hello\n")) == kind
    assert compression_of(b"hello\n") is None and compression_of(b"") is None


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(sorted(COMPRESS)),
    lines_before=st.integers(0, 300_000),
    column=st.integers(0, 5000),
    cut=st.integers(1, 3 << 20),
)
def test_a_leak_inside_is_placed_at_its_line_and_column_in_the_decompressed_text(kind, lines_before, column, cut):
    text = b"row\n" * lines_before + b"x" * column + b" /home/ada/runs/a.json gpu07\n" + b"tail\n" * 10
    data = COMPRESS[kind](text)
    observer = Observer("r.bin", PLAN)
    for at in range(0, len(data), cut):  # blocks of any size: as build and verify read
        observer.feed(data[at : at + cut])
    found = {(leak.code, leak.what) for leak in observer.finish().leaks if leak.offset < 0}
    line, col = place(text, b"/home/")
    gline, gcol = place(text, b"gpu07")
    assert found == {
        ("KB501", f"in its {kind} content at line {line}, column {col}: a private path (/home/…)"),
        ("KB901", f"in its {kind} content at line {gline}, column {gcol}: a machine name"),
    }


@pytest.mark.parametrize("cut_at", range(-12, 13))
def test_a_member_whose_magic_is_cut_by_a_block_edge_is_read_on(cut_at):
    first = gzip.compress(os.urandom(5000))
    data = first + gzip.compress(b"run on gpu07\n")
    observer = Observer("r.gz", PLAN)
    edge = len(first) + cut_at
    observer.feed(data[:edge])
    observer.feed(data[edge:])
    assert [leak.code for leak in observer.finish().leaks if leak.offset < 0] == ["KB901"]


def test_layers_are_opened_to_the_depth_limit_and_no_further():
    text = b"ok\nrun on gpu07\n"
    layered = text
    for kind in ("gzip", "xz", "bzip2"):
        layered = COMPRESS[kind](layered)
    assert inside(layered) == [("KB901", "in its bzip2 content, in its xz content, in its gzip content at line 2, column 8: a machine name")]
    assert inside(gzip.compress(layered)) == []  # a fourth layer: the scan does not go on


def test_bytes_that_only_start_like_a_compressed_file_give_nothing():
    # Random bytes after a magic are a corrupt stream: nothing comes out and nothing is found.
    # Only a zstandard frame says in its first bytes how much memory it needs, and one random
    # header in nine asks for more than MEMORY: that is reported as not read (KB504), as a real
    # such stream would be. (Seeded: which tails ask so is fixed.)
    rnd = random.Random(3)
    for magic in (b"\x1f\x8b\x08", b"BZh91AY&SY", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"):
        for tail in [rnd.randbytes(20_000) for _ in range(30)] + [b"", b"\0" * 50]:
            found = [(leak.code, leak.what.split(":")[0]) for leak in observe_bytes("r.bin", magic + tail, PLAN).leaks if leak.offset < 0]
            allowed = [[], [("KB504", f"its zstandard content needs more than {MEMORY >> 20} MiB of memory to decompress")]]
            assert found in (allowed if magic.startswith(b"\x28") else allowed[:1]), (magic, found)


def test_a_truncated_file_is_read_as_far_as_it_goes():
    data = gzip.compress(b"run on gpu07\n" + os.urandom(300_000).hex().encode())
    assert inside(data[: len(data) // 2]) == [("KB901", "in its gzip content at line 1, column 8: a machine name")]


def test_trailing_bytes_after_the_last_member_are_ignored_as_zcat_does():
    data = gzip.compress(b"clean\n") + b"\0\0junk gpu07"
    assert inside(data) == []  # the raw scan still sees the raw bytes
    assert [leak.code for leak in observe_bytes("r.gz", data, PLAN).leaks] == ["KB901"]


def test_a_decompression_bomb_is_reported_not_read_to_its_end(monkeypatch):
    monkeypatch.setattr(compressed, "FLOOR", 8 << 20)
    zeros = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(zeros.compress(b"\0" * (1 << 20)) for _ in range(256)) + zeros.flush()  # 256 MiB in 250 KB
    started = time.process_time()
    found = inside(bomb)
    assert time.process_time() - started < 5  # read to the bound (24 MiB), not to the end
    (code, what), = found
    assert code == "KB504" and what.startswith("its gzip content expands past")


def test_a_bomb_inside_a_layer_is_counted_against_the_outer_file(monkeypatch):
    monkeypatch.setattr(compressed, "FLOOR", 4 << 20)
    inner = bz2.compress(b"\0" * (64 << 20))  # bzip2: 64 MiB in about 50 bytes
    assert [code for code, _ in inside(gzip.compress(inner))] == ["KB504"]


def test_a_stream_that_needs_too_much_memory_is_reported(monkeypatch):
    monkeypatch.setattr(compressed, "MEMORY", 1 << 20)
    text = os.urandom(3 << 20)
    data = lzma.compress(text, preset=9)  # a 64 MiB dictionary
    (code, what), = inside(data)
    assert code == "KB504" and "memory" in what
    big_window = zstandard.ZstdCompressor(compression_params=zstandard.ZstdCompressionParameters(window_log=24)).compress(text)
    assert [code for code, _ in inside(big_window)] == ["KB504"]


def test_a_clean_compressed_file_gives_no_finding():
    text = b'{"run": "a", "score": 0.5, "note": "nothing private"}\n' * 200_000
    observation = observe_stream("r.jsonl.gz", io.BytesIO(gzip.compress(text)), PLAN)
    assert observation.leaks == [] and observation.binary


def test_a_compressed_record_builds_and_verifies_and_a_secret_put_in_it_later_is_found(bench, cli):
    make_files(bench / "src", {"runs.jsonl.gz": gzip.compress(b'{"q": 1, "ok": true}\n' * 5000), "a.txt": "one\n"})
    write_kit(bench, out="./kit", sources=[{"path": "src", "as": "runs"}])
    assert cli("build", "kit.yaml").exit_code == 0
    assert cli("verify", "kit").exit_code == 0
    # Swapped for one that holds a path, with index.json and SHA256SUMS fixed up to match.
    tampered = gzip.compress(b'{"q": 1}\n' * 40 + b'{"log": "/home/ada/run.log"}\n')
    (bench / "kit" / "runs" / "runs.jsonl.gz").write_bytes(tampered)
    document = __import__("orjson").loads((bench / "kit" / "index.json").read_bytes())
    entries = [index.entry(e["path"], (bench / "kit" / e["path"]).read_bytes()) for e in document["files"]]
    provenance = index.entry("provenance.json", (bench / "kit" / "provenance.json").read_bytes())
    (bench / "kit" / "index.json").write_bytes(index.index_bytes(document["kit"], entries, provenance))
    result = cli("verify", "kit")
    assert result.exit_code == 1
    assert "KB501 runs/runs.jsonl.gz: in its gzip content at line 41, column 10: a private path (/home/…) that" in result.stdout


# -- zip members -----------------------------------------------------------------------------------


class _Unseekable(io.RawIOBase):
    """Where zipfile must write each member's sizes in a data descriptor after its data."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.data += data
        return len(data)


def zipped(members: list[tuple[str, bytes]], *, method: int = zipfile.ZIP_DEFLATED, streamed: bool = False, zip64: bool = False) -> bytes:
    target = _Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(target, "w", compression=method) as archive:
        for name, data in members:
            with archive.open(name, "w", force_zip64=zip64) as member:
                member.write(data)
    return bytes(target.data) if streamed else target.getvalue()


ZIPS = {
    "deflated": {},
    "bzip2": {"method": zipfile.ZIP_BZIP2},
    "sizes after the data": {"streamed": True},
    "ZIP64": {"zip64": True},
    "ZIP64, sizes after the data": {"zip64": True, "streamed": True},
}


@pytest.mark.parametrize("how", ZIPS)
def test_each_member_of_a_zip_is_read_and_named_by_its_place(how):
    text = b"ok\n" * 1000 + b"ran on gpu07\n"
    data = zipped([("a.txt", os.urandom(5000)), ("xl/sharedStrings.xml", text), ("b.txt", b"clean\n"), ("c.log", text)], **ZIPS[how])
    assert inside(data, name="results.xlsx") == [
        ("KB901", "in its zip member 2 at line 1001, column 8: a machine name"),
        ("KB901", "in its zip member 4 at line 1001, column 8: a machine name"),
    ]


def test_a_compressed_file_stored_in_a_zip_is_opened_and_a_text_one_read_as_text():
    text = b"ran on gpu07 for bob.smith@lab.example.org\n"
    data = zipped([("a.txt.gz", gzip.compress(text)), ("b.txt", text), ("c.bin", b"\0" + text)], method=zipfile.ZIP_STORED)
    leaks = observe_bytes("r.zip", data, PLAN).leaks
    # The raw bytes are binary (the zip's headers): its text members are read as text files are,
    # e-mail addresses included (Python's zipfile stores members as they are by default).
    assert [(leak.code, leak.what) for leak in leaks if leak.offset < 0] == [
        ("KB901", "in its zip member 1, in its gzip content at line 1, column 8: a machine name"),
        ("KB502", "in its zip member 1, in its gzip content at line 1, column 18: an e-mail address"),
        ("KB901", "in its zip member 2 at line 1, column 8: a machine name"),
        ("KB502", "in its zip member 2 at line 1, column 18: an e-mail address"),
    ]
    assert [leak.code for leak in leaks if leak.offset >= 0] == ["KB901", "KB901"]  # b.txt and c.bin, as the raw bytes hold them


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(ZIPS)), st.lists(st.integers(1, 4000), min_size=1, max_size=8))
def test_a_zip_read_in_blocks_of_any_size_gives_what_it_gives_whole(how, cuts):
    data = zipped([("a", os.urandom(700)), ("b", b"x\n" * 900 + b"/home/ada/y gpu07\n"), ("c", b"gpu07\n")], **ZIPS[how])
    observer, at = Observer("r.zip", PLAN), 0
    for k in range(10_000):
        step = cuts[k % len(cuts)]
        observer.feed(data[at : at + step])
        at += step
        if at >= len(data):
            break
    assert [(leak.code, leak.what) for leak in observer.finish().leaks] == [(code, what) for code, what in inside(data, name="r.zip")] != []


def test_a_zip_bomb_is_reported(monkeypatch):
    monkeypatch.setattr(compressed, "FLOOR", 4 << 20)
    data = zipped([(f"m{k}", b"\0" * (4 << 20)) for k in range(4)])
    assert [code for code, _ in inside(data, name="r.zip")] == ["KB504"]
