"""Compressed streams as they are inside a binary file (kitbuild.embedded): a tar of .gz logs."""

from __future__ import annotations

import gzip
import io
import os
import random
import tarfile
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild import compressed
from kitbuild.observe import Observer, Plan
from embedded_test import COMPRESS, LABEL, TEXT
from kittest import refused_then_caught, write_kit

SECRET = "a private path (/home/…)"


def tarred(*members: tuple[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def found(name: str, data: bytes, block: int = 1 << 20) -> list[tuple[str, int, str]]:
    observer = Observer(name, Plan())
    for at in range(0, len(data), block):
        observer.feed(data[at : at + block])
    return [(leak.code, leak.offset, leak.what) for leak in observer.finish().leaks]


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_compressed_member_of_a_tar_is_read_from_its_first_byte(kind):
    data = tarred(("notes.txt", b"clean\n" * 100), (f"log.{kind}", COMPRESS[kind](TEXT)), ("end.txt", b"clean\n"))
    assert found("logs.tar", data) == [("KB501", 2048, f"in the compressed data here, in {LABEL[kind]} at line 41, column 21: {SECRET}")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(COMPRESS)), min_size=1, max_size=4), st.integers(1, 3000), st.integers(0, 40))
def test_every_stream_of_a_tar_is_read_once_in_blocks_of_any_size(kinds, block, gap):
    # In a tar, and one right after another with ``gap`` bytes between (none: a stream's end is
    # known only from the next one's first bytes): each is read by its own reader, once,
    # wherever a block ends. (Two of one kind with no gap are one stream, as zcat reads them.)
    if gap == 0:
        kinds = [kind for k, kind in enumerate(kinds) if k == 0 or kind != kinds[k - 1]]
    streams = [COMPRESS[kind](TEXT) for kind in kinds]
    for data, starts in (
        (tarred(*((f"m{k}", s) for k, s in enumerate(streams))), None),
        (b"\0" * 8 + b"".join(s + b"\0" * gap for s in streams), [8 + sum(len(s) + gap for s in streams[:k]) for k in range(len(streams))]),
    ):
        leaks = found("r.bin", data, block)
        assert [what for _, _, what in leaks] == [f"in the compressed data here, in {LABEL[kind]} at line 41, column 21: {SECRET}" for kind in kinds]
        assert leaks == found("r.bin", data)
        if starts is not None:
            assert [offset for _, offset, _ in leaks] == starts


def test_the_members_of_a_concatenated_gzip_and_of_a_zip_in_a_tar_are_read_by_one_reader():
    two = gzip.compress(b"ok\n", mtime=0) + gzip.compress(b"ran in /home/ada/x\n", mtime=0)
    data = tarred(("a.gz", two), ("b.zip", COMPRESS["zip"](TEXT) + b""))
    assert found("r.tar", data) == [
        ("KB501", 512, f"in the compressed data here, in its gzip content at line 2, column 8: {SECRET}"),
        ("KB501", 512 + 1024, f"in the compressed data here, in its zip member 1 at line 41, column 21: {SECRET}"),
    ]


def test_a_tar_gz_of_gz_files_is_read_through_both_layers():
    data = gzip.compress(tarred(("log.jsonl.gz", COMPRESS["gzip"](TEXT))), mtime=0)
    assert found("logs.tar.gz", data) == [("KB501", -1, f"in its gzip content at line 1, column 513: in the compressed data here, in its gzip content at line 41, column 21: {SECRET}")]


def test_a_magic_found_by_chance_gives_nothing_and_costs_little():
    rng = random.Random(7)
    noise = bytearray(rng.randbytes(4 << 20))
    for at in range(1000, len(noise) - 64, 4099):  # a thousand false starts of each format
        noise[at : at + 6] = (b"\x1f\x8b\x08", b"BZh91AY&SY", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"PK\x03\x04")[at % 5][:6]
    began = time.process_time()
    assert found("r.bin", b"\0" + bytes(noise)) == []
    assert time.process_time() - began < 20  # about 1 s; a reader per magic left open would be minutes


def test_a_zstandard_magic_found_by_chance_that_asks_for_a_huge_window_is_passed_over():
    # Once in 4 GiB of a JPEG's or a video's bytes; the bytes after it read as a frame header
    # that asks for more than 128 MiB as often as not.
    header = b"\x28\xb5\x2f\xfd" + bytes([0x00, 0xF8])  # no single segment, window 2^(10+31)
    noise = random.Random(5).randbytes(3000)
    assert found("photo.jpg", b"\xff\xd8\xff\0" + noise + header + noise) == []
    # A real one that asks for little is read.
    import zstandard

    data = b"\0" * 600 + zstandard.ZstdCompressor().compress(TEXT) + noise
    assert [code for code, _, _ in found("r.bin", data)] == ["KB501"]


def test_a_stream_that_passes_the_bounds_is_reported(monkeypatch):
    monkeypatch.setattr(compressed, "FLOOR", 1 << 20)
    data = tarred(("bomb.gz", gzip.compress(b"\0" * (4 << 20), mtime=0)))
    assert [(code, offset) for code, offset, _ in found("r.tar", data)] == [("KB504", 512)]


def test_a_stored_zip_member_and_a_compressed_file_are_read_by_their_own_reader_alone():
    # A gzip file's bytes are its stream's, and a zip's are its members': no second reader.
    inner = COMPRESS["gzip"](TEXT)
    assert found("r.gz", gzip.compress(b"\0" + inner, mtime=0)) == [("KB501", -1, f"in its gzip content at line 1, column 2: in the compressed data here, in its gzip content at line 41, column 21: {SECRET}")]
    assert [what for _, _, what in found("r.zip", COMPRESS["zip"](b"\0" + inner))] == [f"in its zip member 1 at line 1, column 2: in the compressed data here, in its gzip content at line 41, column 21: {SECRET}"]


def test_build_refuses_a_tar_of_gz_logs_and_verify_finds_it_in_a_kit(tmp_path, cli):
    data = tarred(("train.log.gz", gzip.compress(b"loss 0.1\nsaved /home/ada/ckpt\n", mtime=0)))
    said, verified = refused_then_caught(tmp_path, cli, "logs.tar", data)
    assert "KB902 r/logs.tar:1: column 513: in the compressed data here, in its gzip content at line 2, column 7: a private path (/home/…)" in said
    assert "or a tar holding one, is copied as it is" in said
    assert "KB501 r/ok.json:1: column 513: in the compressed data here, in its gzip content at line 2, column 7: a private path (/home/…)" in verified


# -- a tar's text members are read as text (kitbuild.tarlayout) --------------------------------

LOG = b"job by carol@example.org on 10.1.2.3\n"


def tar_of(members, fmt=tarfile.USTAR_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_an_e_mail_and_an_address_in_a_tars_text_member_are_found_and_not_in_its_binary_ones(fmt):
    noise = random.Random(3).randbytes(200_000)
    data = tar_of([("noise.bin", noise), ("run.log", b"ok\n" * 3000 + LOG), ("dump.bin", b"\0" + LOG), ("long/" + "d" * 120 + "/x.log", LOG)], fmt)
    leaks = found("logs.tar", data)
    first, second = data.find(b"ok\nok\n") + 9000, data.rfind(LOG)
    assert [(code, offset) for code, offset, _ in leaks] == [("KB502", first + 7), ("KB503", first + 28), ("KB502", second + 7), ("KB503", second + 28)]
    def at(offset: int) -> str:
        line, column = data.count(b"\n", 0, offset) + 1, offset - data.rfind(b"\n", 0, offset)
        return f"line {line}, column {column}"

    assert found("logs.tar.gz", gzip.compress(data, mtime=0)) == [
        (code, -1, f"in its gzip content at {at(start + shift)}: {what}")
        for start in (first, second)
        for code, shift, what in (("KB502", 7, "an e-mail address"), ("KB503", 28, "a private IPv4 address"))
    ]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5000))
def test_a_tar_read_in_blocks_of_any_size_gives_what_it_gives_whole(block):
    data = tar_of([(f"f{i}.log", b"line %d\n" % i * (i * 37 % 300)) for i in range(40)] + [("z.log", LOG)])
    assert found("r.tar", data, block) == found("r.tar", data) != []


def test_a_tar_of_many_small_text_files_is_read_in_bounded_time():
    data = tar_of([(f"f{i}.log", b"ok %d\n" % i) for i in range(5000)] + [("z.log", LOG)])
    began = time.process_time()
    assert [code for code, _, _ in found("many.tar", data)] == ["KB502", "KB503"]
    assert time.process_time() - began < 20  # about 0.4 s


def test_a_tar_whose_header_breaks_is_binary_from_there():
    data = bytearray(tar_of([("a.log", LOG), ("b.log", LOG)]))
    second = data.find(b"b.log")
    data[second + 148 : second + 156] = b"0000000\0"  # its checksum no longer holds
    assert [code for code, _, _ in found("r.tar", bytes(data))] == ["KB502", "KB503"]  # a.log only


def test_build_stops_on_an_e_mail_in_a_tarred_log_and_an_allow_entry_passes_it(tmp_path, cli):
    bench = tmp_path / "bench" / "r"
    bench.mkdir(parents=True)
    (bench / "logs.tar").write_bytes(tar_of([("train.log", b"loss 0.1\nmail carol@example.org\n")]))
    config = write_kit(tmp_path, out="kit", sources=[{"path": "bench/r", "as": "r"}])
    result = cli("build", config)
    assert result.exit_code == 1 and "KB502 r/logs.tar:" in result.stderr
    config = write_kit(tmp_path, out="kit", sources=[{"path": "bench/r", "as": "r"}], allow=[{"text": "carol@example.org", "why": "the project's public contact"}])
    assert cli("build", config).exit_code == 0
    assert cli("verify", tmp_path / "kit").exit_code == 0
