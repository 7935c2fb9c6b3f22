"""The escapes of binary data read without a view of their own (kitbuild.leaksieve) change no finding."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitbuild import leaks, leaksieve
from kitbuild.leaks import LeakScanner

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])

LONG = "lab-node-0042.rack-17.row-b.datacenter-west.cluster.example.org"
PRIVATE = {"gpu-b17.cluster.example.net": "a machine name", "gpu-b17": "its short name", LONG: "a node of a long name"}
DIGEST = "ab" * 32
# Escaped spellings a view decodes, whole or in part, next to raw text or alone; and what a
# snippet of random bytes around an escape can make of them.
PIECES = [
    "%2Fhome%2Fada%2Fx", "/home%2Fada/x", "%2Fhome/ada", "/home/ada%2F", "\\/home\\/ada", "\\u002fhome/ada",
    "&#47;home&#47;ada", "&#x2F;Users&#x2f;ada", "&sol;home&sol;ada", "gpu%2Db17", "gpu&#45;b17", "gpu\\u002db17",
    "%67pu-b17.cluster.example.net", "%25252Fhome/ada", "%2f", "%41", "\\/", "&#5", "/home/", "gpu-b17",
    "ab" * 31 + "%61b", LONG[:-1] + "%67", "%6C" + LONG[1:], LONG.replace(".", "&#46;", 1), "%4", "&#", "\\u00", "L2hvbWUvYWRh", "Z3B1LWIxNw",
]


@st.composite
def binary_data(draw: st.DrawFn) -> bytes:
    rng = random.Random(draw(st.integers(0, 1 << 30)))
    parts = [b"\0"]
    for _ in range(draw(st.integers(1, 12))):
        parts.append(rng.randbytes(draw(st.sampled_from([0, 1, 3, 40, 700, 5000]))))
        around = draw(st.sampled_from([b"", b" "]))  # a name is found only where it stands alone
        parts.append(around + draw(st.sampled_from(PIECES)).encode() + around)
    return b"".join(parts)


def scans(data: bytes, scanner: LeakScanner) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    with pytest.MonkeyPatch.context() as mp:
        sieved = [(leak.code, leak.offset, leak.what) for leak in scanner.scan(data, binary=True)]
        mp.setattr(leaks, "sieve", lambda data, escapes, *_: escapes)  # every stretch gets its view
        whole = [(leak.code, leak.offset, leak.what) for leak in scanner.scan(data, binary=True)]
    return sieved, whole


@PROPERTY
@given(data=binary_data(), allow=st.sampled_from([(), ("/home/ada/x",), ("gpu-b17",)]))
def test_the_sieve_changes_no_finding_in_binary_data(data, allow):
    sieved, whole = scans(data, LeakScanner(PRIVATE, allow, {DIGEST: "a withheld digest"}))
    assert sieved == whole


@pytest.mark.parametrize("piece", PIECES)
@pytest.mark.parametrize("around", [b"", b" "])
def test_each_spelling_alone_in_random_bytes_is_found_as_with_every_view(piece, around):
    noise = random.Random(piece).randbytes(6000)
    data = b"\0" + noise[:3000] + around + piece.encode() + around + noise[3000:]
    sieved, whole = scans(data, LeakScanner(PRIVATE, (), {DIGEST: "a withheld digest"}))
    assert sieved == whole


def test_escapes_in_random_bytes_get_no_view_and_those_near_a_pattern_do():
    data = b"\0" + random.Random(7).randbytes(4 << 20)
    scanner = LeakScanner(PRIVATE)
    kept: list[int] = []
    found: list[int] = []

    def counted(data, escapes, *rest):
        out = leaksieve.sieve(data, escapes, *rest)
        found.append(sum(map(len, escapes)))
        kept.append(sum(map(len, out)))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(leaks, "sieve", counted)
        scanner.scan(data, binary=True)
        assert found[-1] > 100 and kept[-1] <= found[-1] // 20
        # An escape that decodes part of a path: its stretch is viewed, and the path found.
        hidden = data[:5000] + b"%2Fhome%2Fada%2Fx" + data[5000:]
        assert [(leak.code, leak.offset) for leak in scanner.scan(hidden, binary=True)] == [("KB501", 5000)]
        assert kept[-1] >= 1
