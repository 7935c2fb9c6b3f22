"""zlib streams a PDF or a PNG holds (kitbuild.compressed.stream_at, read by kitbuild.embedded):
a figure's title, its labels or the metadata its program wrote, compressed with no magic."""

from __future__ import annotations

import random
import struct
import time
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.compressed import stream_at
from kittest import write_kit
from streams_test import found

SECRET = "a private path (/home/…)"


def pdf(text: bytes, pad: int = 0, eol: bytes = b"\r\n") -> bytes:
    """A PDF of one page whose content stream shows ``text``; ``pad`` bytes of comment first
    (with no NUL in its first 8 KiB, a PDF is text by the pass's test)."""
    content = zlib.compress(b"BT /F1 12 Tf 72 712 Td (" + text + b") Tj ET")
    head = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n%" + b"x" * pad + b"\n"
    stream = b"4 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream" % len(content) + eol + content + b"\nendstream\nendobj\n"
    return head + stream + b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"


def png(text: bytes, chunk_type: bytes = b"zTXt") -> bytes:
    """A 1x1 PNG with one compressed text chunk holding ``text``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    if chunk_type == b"zTXt":
        data = b"Comment\0\0" + zlib.compress(text)
    else:
        data = b"Comment\0\1\0en-GB\0Kommentar\0" + zlib.compress(text)
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + ihdr + chunk(chunk_type, data) + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b"")


@pytest.mark.parametrize("pad", [0, 9000], ids=["binary", "text"])
@pytest.mark.parametrize("eol", [b"\r\n", b"\n"], ids=["crlf", "lf"])
def test_a_path_in_a_pdfs_compressed_stream_is_found(pad, eol):
    data = pdf(b"results of /home/ada/runs", pad, eol)
    at = data.index(b"stream" + eol)
    assert found("fig.pdf", data) == [("KB501", at, f"in the compressed data here, in its zlib content at line 1, column 36: {SECRET}")]
    assert found("fig.pdf", pdf(b"Recall at 10", pad, eol)) == []


@pytest.mark.parametrize("chunk_type", [b"zTXt", b"iTXt"])
def test_a_path_and_an_e_mail_in_a_pngs_compressed_text_chunk_are_found(chunk_type):
    data = png(b"made by ada@example.org from /home/ada/x.json", chunk_type)
    at = data.index(chunk_type)
    assert sorted(found("fig.png", data)) == [
        ("KB501", at, f"in the compressed data here, in its zlib content at line 1, column 30: {SECRET}"),
        ("KB502", at, "in the compressed data here, in its zlib content at line 1, column 9: an e-mail address"),
    ]
    assert found("fig.png", png(b"Software: a plotting library", chunk_type)) == []


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.sampled_from(["pdf", "png"]))
def test_a_pdf_or_png_read_in_blocks_of_any_size_gives_what_it_gives_whole(block, kind):
    data = pdf(b"/home/ada/runs", 300) if kind == "pdf" else png(b"/home/ada/runs")
    whole = found("f", data)
    assert whole and found("f", data, block) == whole


def test_where_the_structure_says_no_zlib_stream_starts_none_is_read():
    assert stream_at(b"xx stream\nplain text follows", 3) is None
    assert stream_at(b"stream\n\x78\x9c", 0) == ("zlib", 7)
    assert stream_at(b"stream\r\n\x78\x9c", 0) == ("zlib", 8)
    assert stream_at(b"stream\n\x78\x9d", 0) is None  # not a multiple of 31
    assert stream_at(b"stream\n\x78\xbb", 0) is None  # a preset dictionary: no reader has it
    assert stream_at(b"zTXtkey\0\0\x78\x9c", 0) == ("zlib", 9)
    assert stream_at(b"zTXtkey\0\1\x78\x9c", 0) is None  # no compression method 0
    assert stream_at(b"iTXtkey\0\0\0en\0k\0plain text", 0) is None  # an iTXt chunk left uncompressed
    assert stream_at(b"iTXtkey\0\1\0en\0k\0\x78\x9c", 0) == ("zlib", 15)
    assert stream_at(b"zTXt" + b"k" * 200, 0) is None  # no keyword's end in 79 bytes


def test_pdf_keywords_and_chance_headers_in_random_bytes_give_nothing_and_cost_little():
    rng = random.Random(11)
    noise = bytearray(rng.randbytes(4 << 20))
    for at in range(500, len(noise) - 64, 4099):  # a thousand false starts with a valid header
        noise[at : at + 9] = (b"stream\n\x78\x9c", b"zTXtk\0\0\x78\xda", b"iTXtk\0\1\0\0")[at % 3][:9]
    began = time.process_time()
    assert found("r.bin", b"\0" + bytes(noise)) == []
    assert time.process_time() - began < 20  # about 1 s


def test_build_stops_on_a_path_in_a_pdf_figure_and_verify_finds_it_in_a_kit(tmp_path, cli):
    bench = tmp_path / "bench" / "r"
    bench.mkdir(parents=True)
    (bench / "ok.json").write_text('{"a": 1}\n')
    (bench / "fig.pdf").write_bytes(pdf(b"loss of /home/ada/ckpt"))
    config = write_kit(tmp_path, out="kit", sources=[{"path": "bench/r", "as": "r"}])
    result = cli("build", config)
    said = result.stdout + result.stderr
    assert result.exit_code == 1 and not (tmp_path / "kit").exists()
    assert "KB902 r/fig.pdf:6: column 1: in the compressed data here, in its zlib content at line 1, column 33: a private path (/home/…)" in said
    assert "make the file again without the private text" in said and "decompress it in the bench" not in said
    # The same PDF put into a kit built without it: verify finds it.
    (bench / "fig.pdf").rename(tmp_path / "fig.pdf")
    assert cli("build", config).exit_code == 0
    (tmp_path / "kit" / "r" / "ok.json").write_bytes((tmp_path / "fig.pdf").read_bytes())
    report = cli("verify", tmp_path / "kit")
    assert report.exit_code == 1
    assert "KB501 r/ok.json:6: column 1: in the compressed data here, in its zlib content at line 1, column 33: a private path (/home/…)" in report.stdout
