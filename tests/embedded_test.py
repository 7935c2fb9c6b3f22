"""Compressed data in base64 inside a text record (kitbuild.embedded), read by the one pass."""

from __future__ import annotations

import base64
import bz2
import gzip
import io
import lzma
import zipfile

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild import compressed
from kitbuild.observe import Observer, Plan, observe_bytes

SECRET_LINE = b'{"run": 7, "path": "/home/ada/runs/x.json"}\n'
TEXT = b"".join(b'{"run": %d, "ok": true}\n' % i for i in range(40)) + SECRET_LINE  # the path at line 41, column 21


def _zip(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("log.ndjson", data)
    return out.getvalue()


COMPRESS = {
    "gzip": lambda d: gzip.compress(d, mtime=0),
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstandard": lambda d: zstandard.ZstdCompressor().compress(d),
    "zip": _zip,
}
LABEL = {"gzip": "its gzip content", "bzip2": "its bzip2 content", "xz": "its xz content", "zstandard": "its zstandard content", "zip": "its zip member 1"}


def _observe(name: str, data: bytes, block: int) -> list[tuple[str, int, str]]:
    observer = Observer(name, Plan())
    for at in range(0, len(data), block):
        observer.feed(data[at : at + block])
    return [(leak.code, leak.offset, leak.what) for leak in observer.finish().leaks]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted(COMPRESS)), st.booleans(), st.integers(1, 5000), st.binary(max_size=30).filter(lambda b: b"\0" not in b))
def test_a_secret_in_compressed_base64_is_found_at_the_runs_start_in_blocks_of_any_size(kind, url_safe, block, before):
    encode = base64.urlsafe_b64encode if url_safe else base64.b64encode
    data = before + b'\n{"log": "' + encode(COMPRESS[kind](TEXT)) + b'"}\n'
    found = _observe("r.ndjson", data, block)
    start = len(before) + 10
    assert ("KB501", start, f"in the base64 here, in {LABEL[kind]} at line 41, column 21: a private path (/home/…)") in found
    assert {offset for _, offset, what in found if what.startswith("in the base64")} == {start}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000))
def test_a_run_whose_slashes_a_json_encoder_escaped_is_read_whole(block):
    # PHP and .NET write each '/' of a string as '\\/': base64 has one every 64 letters or so.
    letters = base64.b64encode(gzip.compress(TEXT, mtime=0))
    assert letters.count(b"/") > 3
    data = b'{"log": "' + letters.replace(b"/", b"\\/") + b'"}\n'
    assert ("KB501", 9, f"in the base64 here, in {LABEL['gzip']} at line 41, column 21: a private path (/home/…)") in _observe("r.json", data, block)


def test_a_run_is_read_whole_wherever_a_window_ends_in_it():
    # Every place a window can end, a '\\/' cut in two included.
    from kitbuild.compressed import Budget
    from kitbuild.embedded import Embedded

    data = b'{"log": "' + base64.b64encode(gzip.compress(TEXT, mtime=0)).replace(b"/", b"\\/") + b'"}\n'
    for cut in range(10, len(data)):
        budget = Budget()
        embedded = Embedded(lambda: Observer("r.json", Plan(), (budget, 1)), budget, outermost=True)
        embedded.settle(data, 0, 0, cut, [9])
        embedded.settle(data, 0, cut, len(data), [])
        assert [leak.offset for leak in embedded.finish()] == [9], cut


def test_a_run_longer_than_a_window_is_read_to_its_end():
    text = b"".join(b'{"i": %d}\n' % i for i in range(400_000)) + SECRET_LINE
    blob = base64.b64encode(gzip.compress(text, mtime=0))
    assert len(blob) > 1 << 20  # more than a window
    found = [(leak.offset, leak.what) for leak in observe_bytes("r.txt", b"x" * 999_990 + b" " + blob + b"\n", Plan()).leaks]
    assert found == [(999_991, "in the base64 here, in its gzip content at line 400001, column 21: a private path (/home/…)")]


def test_compressed_base64_inside_a_compressed_file_is_read_too():
    inner = b'{"log": "' + base64.b64encode(gzip.compress(TEXT, mtime=0)) + b'"}\n'
    found = [leak.what for leak in observe_bytes("r.ndjson.xz", lzma.compress(inner), Plan()).leaks]
    assert found == ["in its xz content at line 1, column 10: in the base64 here, in its gzip content at line 41, column 21: a private path (/home/…)"]


@pytest.mark.parametrize(
    "data",
    [
        b"H4sIgnificant words, Qlpo and UEsDB are names; KLUv/ too\n" * 50,
        b'{"log": "' + base64.b64encode(gzip.compress(TEXT, mtime=0))[:60] + b'"}\n',  # cut short
        b'{"log": "H4sI' + base64.b64encode(b"\xff" * 300) + b'"}\n',  # corrupt after the magic
        b'{"log": "UEsDB' + b"A" * 5000 + b'"}\n',
        b"H4sI",
        b"H4sIAAAAAAAA/w==",
    ],
)
def test_look_alikes_and_corrupt_runs_give_nothing(data):
    assert observe_bytes("r.txt", data, Plan()).leaks == []


def test_a_bomb_in_base64_is_reported_not_read_on(monkeypatch):
    monkeypatch.setattr(compressed, "FLOOR", 1 << 20)
    bomb = base64.b64encode(gzip.compress(b"\0" * (64 << 20) + SECRET_LINE, mtime=0))
    found = observe_bytes("r.txt", b'{"log": "' + bomb + b'"}\n', Plan()).leaks
    assert [leak.code for leak in found] == ["KB504"]
    assert found[0].offset == 9 and found[0].what.startswith("in the base64 here, its gzip content expands past")


def test_base64_in_a_binary_file_is_not_decoded():
    # A binary file's bytes are no record's base64 (its raw bytes are scanned as any are).
    data = b"\0" * 10 + b" " + base64.b64encode(gzip.compress(TEXT, mtime=0)) + b"\n"
    assert observe_bytes("blob.bin", data, Plan()).leaks == []


def test_a_mib_of_small_compressed_runs_is_read_in_reasonable_time():
    # Each run gets a decompressor and an inner pass of its own (about 20 µs): the cost grows with
    # the runs, never faster. The bound is a hang's, not a speed goal's.
    import time

    blob = base64.b64encode(gzip.compress(b"/home/ada/x\n", mtime=0))
    data = b"".join(b'{"i": %d, "log": "%s"}\n' % (i, blob) for i in range(16_000))
    started = time.process_time()
    found = observe_bytes("r.ndjson", data, Plan()).leaks
    assert time.process_time() - started < 3
    assert len(found) == 16_000
