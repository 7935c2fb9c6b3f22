"""E-mail addresses in binary files of records (kitbuild.recordfiles): a SQLite database, a
pickle, a parquet file's compressed pages."""

from __future__ import annotations

import gzip
import io
import pickle
import random
import sqlite3
import struct
import zipfile

from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.observe import Observer, Plan
from kittest import refused_then_caught
from streams_test import found

EMAIL = "an e-mail address"


def database(path, annotator: str, rows: int = 2000) -> bytes:
    con = sqlite3.connect(path)
    con.execute("create table r (q text, annotator text, score real)")
    con.executemany("insert into r values (?, ?, ?)", [(f"q{i}", annotator if i == rows * 3 // 4 else "anon", i / 7) for i in range(rows)])
    con.commit()
    con.close()
    return path.read_bytes()


def observed(name: str, data: bytes, allow: tuple[str, ...] = (), block: int = 1 << 20) -> list[tuple[str, str]]:
    observer = Observer(name, Plan(allow=allow))
    for at in range(0, len(data), block):
        observer.feed(data[at : at + block])
    return [(leak.code, leak.what) for leak in observer.finish().leaks]


def test_an_address_in_a_sqlite_database_is_found_and_an_allow_entry_passes_it(tmp_path):
    data = database(tmp_path / "r.db", "jane.doe@uni-example.de")
    assert observed("r.db", data) == [("KB502", EMAIL)]
    # Its row packs 'q1500' right before it: the allowed address is still the one allowed.
    assert observed("r.db", data, allow=("jane.doe@uni-example.de",)) == []
    assert observed("r.db", data, allow=("doe@uni-example.de",)) == []
    assert observed("r.db", data, allow=("jane.doe@uni-example.com",)) == [("KB502", EMAIL)]


def test_an_address_in_a_pickle_and_in_a_parquet_files_gzip_page_is_found():
    assert observed("meta.pkl", pickle.dumps({"by": "bob@lab.example.org", "n": list(range(50))}, protocol=4)) == [("KB502", EMAIL)]
    # A page of length-prefixed values (NULs: binary), in gzip, in a file of records.
    page = b"".join(struct.pack("<I", len(v)) + v for v in (b"q1", b"carol@example.com", b"q2"))
    data = b"PAR1" + b"\0" * 100 + gzip.compress(page, mtime=0) + b"\0" * 100 + b"PAR1"
    assert [code for code, _ in observed("t.parquet", data)] == ["KB502"]
    # The same bytes in a file that holds no records: binary data is not searched for addresses.
    assert observed("t.bin", b"\0\0\0\0" + data[4:]) == []


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5000))
def test_a_sqlite_database_read_in_blocks_of_any_size_gives_what_it_gives_whole(block):
    data = DATABASE
    assert observed("r.db", data, block=block) == observed("r.db", data) == [("KB502", EMAIL)]


def _database() -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        return database(Path(folder) / "r.db", "ada@cs.example.ac.uk", rows=300)


DATABASE = _database()


def test_what_chance_makes_in_random_bytes_of_a_database_is_not_taken_for_an_address():
    rng = random.Random(13)
    noise = bytearray(rng.randbytes(8 << 20))
    # Addresses too short to tell from chance (one letter before the '@', two in the name, an
    # unlisted domain), a thousand times: random bytes hold such shapes every few hundred MB.
    for at in range(1000, len(noise) - 64, 8191):
        noise[at : at + 12] = (b" a@xyz.de   ", b" ab@xy.de   ", b" ab@xyz.zz  ")[at % 3]
    assert found("r.db", b"SQLite format 3\0" + bytes(noise)) == []


def test_build_stops_on_an_address_in_a_database_and_verify_finds_it_in_a_kit(tmp_path, cli):
    said, verified = refused_then_caught(tmp_path, cli, "results.db", database(tmp_path / "r.db", "jane.doe@uni-example.de"))
    assert "KB502 r/results.db:" in said
    # A rule could not settle it: the build copies a database as it is, and says so.
    assert "A rule never rewrites inside a binary file (a SQLite database, a pickle, a NumPy array: build copies it as it is)" in said
    assert "KB502 r/ok.json:" in verified


def _column(*cells: bytes) -> bytes:
    """A string column as Arrow, Feather and ORC store it: its offsets, then its cells end to end."""
    offsets = b"".join(struct.pack("<i", sum(map(len, cells[:i]))) for i in range(len(cells) + 1))
    return offsets + b"\0" * 4 + b"".join(cells)


def test_an_address_the_cells_around_it_run_into_is_found_and_its_allow_entry_passes_it():
    column = _column(*[b"anon"] * 40, b"ada.lovelace@uni-example.de", *[b"anon"] * 40)
    data = b"ARROW1\0\0" + b"\xff" * 8 + column + b"\0" * 64 + b"ARROW1"
    # 160 letters run into its local part, and 'anon...' into its domain ('...@uni-example.deanon').
    assert observed("t.feather", data) == [("KB502", EMAIL)]
    assert observed("t.feather", data, allow=("ada.lovelace@uni-example.de",)) == []
    # A cell that starts with a digit or a dot after it ('.deq1', a pickle's memo: '.deq\x08').
    assert observed("t.feather", data.replace(b"example.deanon", b"example.deq1an")) == [("KB502", EMAIL)]
    assert observed("t.feather", data.replace(b"example.deanon", b"example.deq1an"), allow=("ada.lovelace@uni-example.de",)) == []
    # An allowed address is no cover for another whose domain only starts the same.
    longer = data.replace(b"example.deanon", b"example.dept.example.com")
    assert observed("t.feather", longer, allow=("ada.lovelace@uni-example.de",)) == [("KB502", EMAIL)]


def test_an_address_in_a_pickle_of_protocol_2_and_3_is_found():
    # Their memo opcode ('q', a byte) follows every string: '...@lab.example.orgq\x01'.
    for protocol in (2, 3):
        data = pickle.dumps({"by": "bob.smith@lab.example.org", "n": list(range(50))}, protocol=protocol)
        assert observed("meta.pkl", data) == [("KB502", EMAIL)], protocol


def test_an_address_in_an_arrow_stream_and_in_a_numpy_savez_file_is_found():
    # An Arrow IPC stream starts with a continuation marker and its schema's padded length.
    stream = b"\xff\xff\xff\xff" + struct.pack("<i", 328) + b"\0" * 328 + _column(b"q1", b"carol@example.com", b"q2")
    assert observed("data.arrow", stream) == [("KB502", EMAIL)]
    # np.savez stores each array's .npy in the zip as it is.
    array = b"\x93NUMPY\x01\x00v\x00{'descr': '|S20', 'fortran_order': False, 'shape': (3,), }" + b" " * 51 + b"\n"
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("annotator.npy", array + b"anon\0" * 4 + b"carol@example.com\0\0\0" + b"anon\0" * 4)
    assert observed("arrays.npz", npz.getvalue()) == [("KB502", EMAIL)]


def test_a_path_after_a_length_byte_that_reads_as_a_letter_is_found_in_a_pickle():
    # Protocol 4 writes a string of fewer than 256 bytes after '\x8c' and its length: for 48 to
    # 57, 65 to 90 and 97 to 122 bytes, a digit or a letter right before the '/'.
    for length in [*range(48, 58), *range(65, 91), *range(97, 123)]:
        data = pickle.dumps({"out": "/home/ada/" + "x" * (length - 10)}, protocol=4)
        assert observed("meta.pkl", data) == [("KB501", "a private path (/home/…)")], length
    # Relative paths stay relative: './data/x' (the '.' is the path's), 'runs/data/x'.
    data = pickle.dumps({"a": "./data/" + "x" * 60, "b": "runs/data/" + "x" * 60}, protocol=4)
    assert observed("meta.pkl", data) == []


MACHINE = {"gpu07.lab.example.org": "a machine", "gpu07": "a machine's short name"}


def named(name: str, data: bytes) -> list[str]:
    observer = Observer(name, Plan(private=MACHINE))
    observer.feed(data)
    return [leak.what for leak in observer.finish().leaks]


def _rows(path, *rows: tuple) -> bytes:
    con = sqlite3.connect(path)
    con.execute(f"create table r ({', '.join(f'c{i}' for i in range(len(rows[0])))})")
    con.executemany(f"insert into r values ({', '.join('?' * len(rows[0]))})", rows)
    con.commit()
    con.close()
    return path.read_bytes()


def test_a_machine_name_the_cells_around_it_run_into_is_found_in_a_file_of_records(tmp_path):
    # A SQLite row packs its text cells end to end: ('r17', 'gpu07', 'done') is 'r17gpu07done'.
    for i, row in enumerate([("r17", "gpu07", 0.5), ("gpu07", "done"), (17, "gpu07.lab.example.org", "ok")]):
        assert named("results.db", _rows(tmp_path / f"{i}.db", row)), row
    # A NumPy array of strings as wide as its widest: 'gpu06gpu07gpu08', in UTF-32 or in bytes.
    for dtype in ("<U5", "|S5"):
        array = io.BytesIO()
        numpy_header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': (3,), }}"
        array.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + numpy_header.encode().ljust(117) + b"\n")
        array.write("gpu06gpu07gpu08".encode("utf-32-le" if dtype[1] == "U" else "ascii"))
        assert named("hosts.npy", array.getvalue()), dtype
    # Another machine's name stays another's: a digit after it, a '-' or a '.' before it.
    for i, row in enumerate([("a", "gpu070"), ("run", "gpu07-b"), ("a", "x.gpu07.other.org")]):
        assert named("results.db", _rows(tmp_path / f"other{i}.db", row)) == [], row
    # The same bytes in a file that holds no records: a letter before the name is a word's.
    assert named("blob.bin", b"\0\0" + b"r17gpu07done" + b"\0\0") == []
