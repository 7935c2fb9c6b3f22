"""E-mail addresses in binary files of records (kitbuild.recordfiles): a SQLite database, a
pickle, a parquet file's compressed pages."""

from __future__ import annotations

import gzip
import pickle
import random
import sqlite3
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.observe import Observer, Plan
from kittest import write_kit
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
    bench = tmp_path / "bench" / "r"
    bench.mkdir(parents=True)
    (bench / "ok.json").write_text('{"a": 1}\n')
    database(bench / "results.db", "jane.doe@uni-example.de")
    config = write_kit(tmp_path, out="kit", sources=[{"path": "bench/r", "as": "r"}])
    result = cli("build", config)
    assert result.exit_code == 1 and not (tmp_path / "kit").exists()
    assert "KB502 r/results.db:" in result.stdout + result.stderr
    (bench / "results.db").rename(tmp_path / "results.db")
    assert cli("build", config).exit_code == 0
    (tmp_path / "kit" / "r" / "ok.json").write_bytes((tmp_path / "results.db").read_bytes())
    report = cli("verify", tmp_path / "kit")
    assert report.exit_code == 1 and "KB502 r/ok.json:" in report.stdout
