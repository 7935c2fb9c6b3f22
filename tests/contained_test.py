"""zlib streams a PDF or a PNG holds (kitbuild.compressed.stream_at, read by kitbuild.embedded):
a figure's title, its labels or the metadata its program wrote, compressed with no magic."""

from __future__ import annotations

import base64
import hashlib
import io
import random
import struct
import time
import zipfile
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.streamstarts import stream_at
from kittest import refused_then_caught
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
    said, verified = refused_then_caught(tmp_path, cli, "fig.pdf", pdf(b"loss of /home/ada/ckpt"))
    assert "KB902 r/fig.pdf:6: column 1: in the compressed data here, in its zlib content at line 1, column 33: a private path (/home/…)" in said
    assert "make the file again without the private text" in said and "decompress it in the bench" not in said
    assert "KB501 r/ok.json:6: column 1: in the compressed data here, in its zlib content at line 1, column 33: a private path (/home/…)" in verified


# -- git's objects: a loose object is a zlib stream from its first byte, a pack a row of them ----

COMMIT = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor Ada Lovelace <ada@uni-example.de> 1700000000 +0100\ncommitter Ada Lovelace <ada@uni-example.de> 1700000000 +0100\n\nrun from /home/ada/runs\n"
BLOB = b"/home/ada/secret/notes\n"


def loose(kind: bytes, data: bytes) -> bytes:
    return zlib.compress(kind + b" %d\0" % len(data) + data)


def pack(*objects: tuple[int, bytes]) -> bytes:
    """A git pack (version 2) of whole objects: (type, data), 1 a commit, 3 a blob."""
    out = b"PACK" + struct.pack(">II", 2, len(objects))
    for kind, data in objects:
        size, header = len(data) >> 4, bytearray()
        first = kind << 4 | len(data) & 15
        while size:
            header.append(first | 0x80)
            first, size = size & 0x7F, size >> 7
        header.append(first)
        out += bytes(header) + zlib.compress(data)
    return out + hashlib.sha1(out).digest()


def test_a_path_and_an_e_mail_in_gits_loose_objects_are_found():
    assert [(code, what) for code, _, what in found("objects/da/f0cf", loose(b"commit", COMMIT))] == [
        ("KB502", "in its zlib content at line 2, column 22: an e-mail address"),
        ("KB502", "in its zlib content at line 3, column 25: an e-mail address"),
        ("KB501", f"in its zlib content at line 5, column 10: {SECRET}"),
    ]
    assert [what for _, _, what in found("objects/f0/9861", loose(b"blob", BLOB))] == [f"in its zlib content at line 1, column 9: {SECRET}"]


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 300))
def test_a_path_and_an_e_mail_in_a_git_pack_are_found_in_blocks_of_any_size(block):
    data = pack((3, b"clean\n" * 40), (1, COMMIT), (3, BLOB))
    leaks = found("objects/pack/pack-1.pack", data, block)
    assert [(code, what.split(": ", 1)[-1]) for code, _, what in leaks] == [("KB502", "an e-mail address")] * 2 + [("KB501", SECRET)] * 2
    assert leaks == found("objects/pack/pack-1.pack", data)


def test_a_file_that_starts_as_zlib_by_chance_gives_nothing():
    rng = random.Random(3)
    for _ in range(200):
        assert found("r.bin", b"x\x9c" + rng.randbytes(rng.randrange(0, 5000))) == []
    assert found("notes.txt", b"x^2 + y^2 = z^2, see /data\n") == []


def test_init_leaves_a_git_folder_out_and_a_build_that_keeps_it_stops(tmp_path, cli, monkeypatch):
    from kittest import make_files

    monkeypatch.chdir(tmp_path)
    make_files(tmp_path / "bench", {"scores.tsv": "q\tscore\n1\t0.5\n", ".git": {"HEAD": "ref: refs/heads/main\n", "objects": {"da": {"f0cf": loose(b"commit", COMMIT)}}}})
    assert cli("init", "bench", "--date", "2026-12-01").exit_code == 0
    config = (tmp_path / "kit.yaml").read_text()
    assert 'exclude: ["**/.git/**"]' in config and "authors' e-mail addresses" in config
    assert cli("build").exit_code == 0 and not (tmp_path / "kit" / "bench" / ".git").exists()
    (tmp_path / "kit.yaml").write_text(config.replace('    exclude: ["**/.git/**"]\n', ""))
    result = cli("build")
    said = result.stdout + result.stderr
    assert result.exit_code == 1 and "KB502 bench/.git/objects/da/f0cf: in its zlib content at line 2" in said
    assert "git's objects are read decompressed too" in said


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 400))
def test_a_path_and_an_e_mail_in_an_hdf5_files_deflated_chunks_are_found(block):
    # Fixed-length strings, NUL-padded (binary), in chunks an HDF5 deflate filter wrote as zlib.
    cells = b"".join(text.ljust(32, b"\0") for text in (b"q1", b"/home/ada/runs/x", b"ada@uni-example.de", b"q2"))
    data = b"\x89HDF\r\n\x1a\n" + bytes(200) + zlib.compress(bytes(range(256)) * 8) + zlib.compress(cells) + bytes(64)
    leaks = found("scores.h5", data, block)
    assert sorted((code, what.split(": ", 1)[-1]) for code, _, what in leaks) == [("KB501", SECRET), ("KB502", "an e-mail address")]
    assert leaks == found("scores.h5", data)
    # Without the HDF5 magic, a zlib stream in binary data is not looked for (its two header
    # bytes turn up every 16 KiB of random bytes).
    assert found("scores.bin", b"\0" * 8 + data[8:]) == []


def pdf85(text: bytes, noise: bytes = b"") -> bytes:
    """A PDF whose page is written /ASCII85Decode /FlateDecode, as reportlab writes it: no NUL
    byte anywhere. ``noise``: more ASCII85 text, in a stream of its own."""
    content = base64.a85encode(zlib.compress(b"BT /F1 12 Tf 72 712 Td (" + text + b") Tj ET"), wrapcol=75) + b"~>"
    stream = b"4 0 obj\n<< /Filter [ /ASCII85Decode /FlateDecode ] /Length %d >>\nstream\n" % len(content) + content + b"\nendstream\nendobj\n"
    other = b"5 0 obj\n<< /Filter /ASCII85Decode >>\nstream\n" + noise + b"~>\nendstream\nendobj\n"
    return b"%PDF-1.3\n% ReportLab Generated PDF document\n" + stream + other + b"trailer\n<< >>\n%%EOF\n"


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 300))
def test_a_path_in_a_pdfs_ascii85_stream_is_found_in_blocks_of_any_size(block):
    data = pdf85(b"from /home/ada/runs")
    at = data.index(b"stream\n")
    assert found("fig.pdf", data, block) == found("fig.pdf", data) == [("KB501", at, f"in the compressed data here, in its zlib content at line 1, column 30: {SECRET}")]


def test_a_pdf_is_binary_so_its_ascii85_text_makes_no_e_mail_by_chance():
    # ASCII85 letters make an e-mail shape every few MB ('M@OJ.CYbi'): read as text, a clean
    # reportlab PDF could stop a build. A PDF is binary, whatever its first 8 KiB hold.
    noise = b"9jqo^BlbD-BleB1DJ+*+F(f,q/0JhKF<GL>Cj@.ada.lo@OJ.CYbi DIal(DId<j@<?3r@:F%a+D58'ATD4$Bl@l3De:,-DJs`8ARoFb/0JMK@qB4^F!,R<AKZ&-DfTqBG%G>uD.RTpAKYo'+CT/5+Cei#DII?(E,9)oF*2M7/c"
    data = pdf85(b"Recall at 10", noise)
    assert b"\0" not in data and found("fig.pdf", data) == []
    assert found("fig.txt", data[1:]) != []  # the same bytes, no PDF: text, and the shape found


def _drawn(text: str) -> bytes:
    """``text`` as matplotlib draws a title in a PDF (Type 3 fonts): a character a piece, each
    moved by a kerning number, a line end every few pieces."""
    pieces = [f"({c}) {(-1) ** i * 0.3255208333:.10f}" for i, c in enumerate(text)]
    return b"BT\n/F1 12 Tf\n0 0 Td\n\n[ " + "\n".join(" ".join(pieces[k : k + 4]) for k in range(0, len(pieces), 4)).rsplit(" ", 1)[0].encode() + b" ]\nTJ\nET\n"


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 400))
def test_a_path_a_pdf_draws_a_character_at_a_time_is_found(block):
    content = _drawn("/home/ada/runs/x.json")
    assert found("page.txt", content, block) == found("page.txt", content) == [("KB501", content.index(b"(/)") + 1, SECRET)]
    data = pdf(b"")[:-60] + b"5 0 obj\n<< /Filter /FlateDecode >>\nstream\n" + zlib.compress(content) + b"\nendstream\nendobj\n%%EOF\n"
    assert [what for _, _, what in found("fig.pdf", data, block)] == [f"in the compressed data here, in its zlib content at line 5, column 4: {SECRET}"]
    assert found("page.txt", _drawn("Recall at 10 for BM25")) == []
    # Parentheses and numbers in prose or code are not taken for pieces of one string.
    assert found("notes.txt", b"f(x) 0.5 (y) and see (1) 2 (home/ada)\n") == []


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["pdf", "png"]), st.booleans(), st.integers(1, 3000))
def test_a_pdf_or_png_in_base64_is_read_through_its_streams_in_blocks_of_any_size(kind, url_safe, block):
    # A notebook keeps each figure it drew as base64 (application/pdf, image/png); a figure's
    # title, labels or metadata are zlib streams inside it.
    figure = pdf(b"results of /home/ada/runs") if kind == "pdf" else png(b"made from /home/ada/x.json")
    encode = base64.urlsafe_b64encode if url_safe else base64.b64encode
    data = b'{"outputs": [{"data": {"application/' + kind.encode() + b'": "' + encode(figure) + b'"}}]}\n'
    leaks = found("nb.ipynb", data, block)
    start = data.index(b'": "', 30) + 4
    assert [(code, offset) for code, offset, _ in leaks] == [("KB501", start)]
    assert leaks[0][2].startswith(f"in the base64 here, in its {kind.upper()} file at line ")
    assert leaks[0][2].endswith("in the compressed data here, in its zlib content at line 1, column " + ("36" if kind == "pdf" else "11") + ": a private path (/home/…)")
    clean = pdf(b"Recall at 10") if kind == "pdf" else png(b"Software: a plotting library")
    assert found("nb.ipynb", data.replace(encode(figure), encode(clean)), block) == []


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
@pytest.mark.parametrize("kind", ["pdf", "png"])
def test_a_pdf_or_png_in_a_zip_is_read_through_its_streams(kind, method):
    # Python's zipfile stores members as they are unless told otherwise: a zip of figures then
    # holds each one's bytes, whose zlib streams the zip's raw scan does not follow.
    figure = pdf(b"results of /home/ada/runs") if kind == "pdf" else png(b"made from /home/ada/x.json")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as archive:
        archive.writestr("notes.txt", b"figures for the paper\n")
        archive.writestr(f"fig.{kind}", figure)
    leaks = found("figures.zip", out.getvalue())
    assert [code for code, _, _ in leaks] == ["KB501"]
    assert leaks[0][2].startswith("in its zip member 2 at line ") and "in its zlib content at line 1" in leaks[0][2]


@pytest.mark.parametrize("kind", ["pdf", "png"])
def test_an_e_mail_in_a_figures_own_metadata_is_found(kind):
    # A PDF's info dictionary and a PNG's tEXt chunks are plain text in a binary file: searched
    # for the addresses chance does not make, as a file of records is (kitbuild.recordfiles).
    def chunk(name: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + name + data + struct.pack(">I", zlib.crc32(name + data))

    def figure(author: bytes) -> bytes:
        if kind == "pdf":
            return pdf(b"Recall at 10").replace(b"trailer\n", b"5 0 obj\n<< /Author (" + author + b") >>\nendobj\ntrailer\n")
        image = png(b"Software: a plotting library")
        return image[:-12] + chunk(b"tEXt", b"Author\0" + author) + image[-12:]

    data = figure(b"Ada Lovelace <ada@lab.example.org>")
    assert found(f"fig.{kind}", data) == [("KB502", data.index(b"ada@"), "an e-mail address")]
    assert found(f"fig.{kind}", figure(b"Ada Lovelace")) == []
