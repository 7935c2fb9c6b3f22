"""The compiled byte scans (kitbuild/_speedups.c) give exactly their pure-Python twins' answers.

Hypothesis writes the data out of small alphabets and pieces, so that the cases the C code
treats apart (runs of 63, 64 and 65 hex digits, runs at either end of the buffer or across a
16-byte step, overlapping needles, an '@' near ``end``) come up in every run, not by luck.
A kit built with the C scans and one built with the twins must be the same bytes.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import example, given, settings

from kitbuild import speedups
from kitbuild.leaks import GENERIC_SHAPES, SHAPE_ANCHORS
from kitbuild.matchers import Matcher
from kitbuild.speedups import (
    BOUNDARY_NAME,
    BOUNDARY_NONE,
    BOUNDARY_PATH,
    MAX_NEEDLES,
    py_census,
    py_contains,
    py_count_starts,
    py_email_ats,
    py_find_starts,
    py_leftmost_starts,
    py_record_walk,
    py_hex_runs,
    py_quiet,
    py_refill,
    py_replace_bounded,
    py_replace_values,
)

from kittest import read_tree

try:
    from kitbuild import _speedups
except ImportError:  # installed without a C compiler: only the twins run, nothing to compare
    _speedups = None

needs_c = pytest.mark.skipif(_speedups is None, reason="kitbuild._speedups is not compiled in this install")


def _kernels():
    """The candidate scans this processor runs (``_speedups.kernel``), each to be checked."""
    if _speedups is None:
        return []
    chosen = _speedups.kernel()
    runs = []
    for name in ("sse2", "avx2", "avx512", "bytes"):
        try:
            _speedups.kernel(name)
        except ValueError:
            continue
        runs.append(name)
    _speedups.kernel(chosen)
    return runs


KERNELS = _kernels()


@contextmanager
def kernel(name):
    """Needles searched by the candidate scan ``name`` while the block runs."""
    before = _speedups.kernel()
    _speedups.kernel(name)
    try:
        yield
    finally:
        _speedups.kernel(before)


def chunks(piece, max_size=10):
    """Up to ``max_size`` short lists of ``piece`` joined: hypothesis keeps one list short, and the
    C scans take 16 bytes a step, so data must often run past 32 bytes."""
    return st.lists(st.lists(piece, max_size=10).map(b"".join), max_size=max_size).map(b"".join)


@st.composite
def with_bounds(draw, data):
    """Data and a (start, end) pair as slicing takes them: mostly a span of the data, written
    from either end or past it; sometimes empty or reversed."""
    b = draw(data)
    n = len(b)
    start, end = sorted((draw(st.integers(0, n)), draw(st.integers(0, n))))
    start = draw(st.sampled_from([start, start - n, -n - 3]))  # the same offset, or clamped to 0
    end = draw(st.sampled_from([end, end - n, n + 3]))  # end - n is 0 (empty) when end is n
    if draw(st.integers(0, 7)) == 0:
        start, end = end, start
    return b, start, end


# -- hex_runs ------------------------------------------------------------------------------

HEX_DIGITS = b"0123456789abcdefABCDEF"
# Runs of digits alone, of the lengths the scan treats apart or any up to 130, each after a
# little of the whole alphabet ('g' is the letter just past 'f'): a draw from 25 bytes alone
# would almost never hold 64 digits in a row, nor start them off a 16-byte step.
hex_run = st.builds(lambda n, k: (HEX_DIGITS * 7)[k:k + n],
                    st.one_of(st.sampled_from([15, 16, 17, 63, 64, 65, 130]), st.integers(0, 130)),
                    st.integers(0, 21))
hex_filler = st.lists(st.sampled_from([bytes([c]) for c in HEX_DIGITS + b" g\n"]), max_size=20).map(b"".join)
hex_data = st.builds(lambda pairs, tail: b"".join(f + r for f, r in pairs) + tail,
                     st.lists(st.tuples(hex_filler, hex_run), max_size=4), hex_filler)

DIGEST = b"0123456789abcdef" * 4


@pytest.mark.parametrize(("data", "runs"), [
    (DIGEST, [(0, 64)]),                                      # the whole buffer, nothing else
    (DIGEST[:63], []),                                        # one short
    (b"g" + DIGEST[:63] + b"g", []),
    (DIGEST + b"A", [(0, 65)]),
    (b" " + DIGEST.upper() + b"\n", [(1, 65)]),               # upper case, a byte off the steps
    (b"x" * 15 + DIGEST, [(15, 79)]),                         # touches the end, off the steps
    (b"z" * 17 + DIGEST * 2 + b"Abc", [(17, 148)]),           # 131 digits across eight steps
    (DIGEST + b"g" + DIGEST[:-1] + b" " + DIGEST, [(0, 64), (129, 193)]),  # a 63 between two
    (b"0" * 47 + b"g" + b"0" * 64, [(48, 112)]),              # a short run first, then one off the steps
])
def test_hex_runs_explicit_cases(data, runs):
    """The runs the scan must find at its edges: lengths 63/64/65/131, either end, off the 16-byte steps."""
    assert py_hex_runs(data) == runs
    if _speedups is not None:
        assert _speedups.hex_runs(data) == runs


@needs_c
@settings(max_examples=500, deadline=None)
@given(hex_data)
def test_hex_runs_agree(data):
    """C hex_runs gives py_hex_runs' runs for any data."""
    assert _speedups.hex_runs(data) == py_hex_runs(data)


# -- census and withheld_spans ---------------------------------------------------------------

# Digests in either case, with and without ``sha256:``, among longer runs and other bytes: what
# the census counts by printed bytes, and what withholding compares lower-cased.
digest_piece = st.sampled_from([b"a" * 64, b"A" * 64, DIGEST, DIGEST.upper(), b"f" * 65, b"sha256:", b"sha25", b"x", b"\n", b"ab" * 32])
digest_data = st.lists(digest_piece, max_size=12).map(b"".join)
WITHHELD = frozenset({b"a" * 64, DIGEST, b"f" * 64})


@needs_c
@settings(max_examples=300, deadline=None)
@given(with_bounds(digest_data), st.integers(0, 1000), st.sampled_from([{}, {b"a" * 64: [2, 0]}]))
@example((b"a" * 64 + b"A" * 64, 0, 200), 7, {})
@example((b"\n".join([DIGEST, DIGEST, DIGEST, b"a" * 64, DIGEST, b"a" * 64, b"a" * 64]), 0, 500), 0, {b"a" * 64: [2, 0]})
def test_census_agrees(bounded, base, before):
    """C census gives py_census' offsets, and leaves the same counts, also in a census begun before."""
    data, start, stop = bounded
    c_counts = {k: list(v) for k, v in before.items()}
    py_counts = {k: list(v) for k, v in before.items()}
    assert _speedups.census(data, start, stop, base, c_counts) == speedups.py_census(data, start, stop, base, py_counts)
    assert c_counts == py_counts


@needs_c
@settings(max_examples=300, deadline=None)
@given(digest_data)
@example(b"sha256:" + DIGEST.upper() + b"\n" + b"a" * 64)
def test_withheld_spans_agree(data):
    """C withheld_spans gives py_withheld_spans' spans: a digest withheld in either case, its prefix taken along."""
    assert _speedups.withheld_spans(data, WITHHELD) == speedups.py_withheld_spans(data, WITHHELD)
    assert _speedups.withheld_spans(bytearray(data), WITHHELD) == speedups.py_withheld_spans(bytearray(data), WITHHELD)


def test_withheld_spans_explicit_case():
    """Upper case is withheld as its lower case; ``sha256:`` goes with it; 65 digits are no digest."""
    data = b"x sha256:" + DIGEST.upper() + b" " + b"f" * 65 + b" " + b"a" * 64
    assert speedups.py_withheld_spans(data, WITHHELD) == [(2, 73), (140, 204)]
    if _speedups is not None:
        assert _speedups.withheld_spans(data, WITHHELD) == [(2, 73), (140, 204)]


# -- count_starts --------------------------------------------------------------------------

# Two letters make overlaps ('aa' in 'aaa', 'aba' in 'ababa') common; a byte past 0x7f catches
# a signed-char slip in the 16-at-once compare. The longer ones stand on both sides of the
# 8 bytes that a count compares as one word, and end past them.
LETTERS = b"ab\xff"
LONG_NEEDLES = [b"a" * 7, b"a" * 8, b"a" * 9, b"ab" * 6, b"abababa\xffa", b"aaaa\xff"]
needle = st.one_of(st.sampled_from([b"a", b"aa", b"aba", b"\xff", b"a\xff"]),
                   st.lists(st.sampled_from(LETTERS), min_size=1, max_size=5).map(bytes),
                   st.sampled_from(LONG_NEEDLES))
needles = st.lists(needle, min_size=1, max_size=MAX_NEEDLES).map(tuple)
letter_data = chunks(st.sampled_from([b"a", b"b", b"\xff", b"aaaa", b"abab"]))


@needs_c
@settings(max_examples=500, deadline=None)
@given(with_bounds(letter_data), needles)
@example((b"aaaaa" * 8, 0, 40), (b"aa", b"a"))
@example((b"ab" * 20, 3, -2), (b"aba", b"b"))
def test_count_starts_agree(bounded, needles):
    """C count_starts gives py_count_starts' counts for any needles, data and bounds."""
    data, start, stop = bounded
    for name in KERNELS:
        with kernel(name):
            assert _speedups.count_starts(data, needles, start, stop) == py_count_starts(data, needles, start, stop), name


@pytest.mark.parametrize("impl", [
    py_count_starts,
    pytest.param(getattr(_speedups, "count_starts", None), marks=needs_c, id="c"),
])
def test_more_needles_than_the_scan_holds_are_refused(impl):
    """Seventeen needles are a ValueError, not a count (C keeps them in fixed arrays of 16)."""
    with pytest.raises(ValueError):
        impl(b"abc", tuple(b"n%d" % i for i in range(MAX_NEEDLES + 1)), 0, 3)


@needs_c
def test_an_empty_needle_is_refused():
    """An empty needle is a ValueError in C (it would 'start' everywhere)."""
    with pytest.raises(ValueError):
        _speedups.count_starts(b"abc", (b"a", b""), 0, 3)


# -- find_starts ---------------------------------------------------------------------------

# Needles that overlap themselves and each other, that are prefixes of each other ('a', 'aa',
# 'aab'), of one byte, and of the bytes 0x00 and 0xff (a signed-char slip in the compares, a
# zeroed vector mistaken for a match); many share a first byte and differ in the second, which
# the scan groups by.
FIND_BYTES = b"ab\x00\xff"
find_needle = st.one_of(st.sampled_from([b"a", b"aa", b"aab", b"\x00", b"\xff", b"\xff\x00", b"\x00\x00\xff", b"ba" * 4]),
                        st.lists(st.sampled_from(FIND_BYTES), min_size=1, max_size=6).map(bytes))
find_needles = st.lists(find_needle, min_size=1, max_size=MAX_NEEDLES).map(tuple)
# The leak gate's anchors, the search find_starts was made for.
GATE_ANCHORS = tuple(anchor for what, _ in GENERIC_SHAPES for anchor, _ in SHAPE_ANCHORS[what])


@st.composite
def find_cases(draw):
    """Needles and data made of them, their pieces and other bytes, long enough to cross the
    scan's 64-byte steps; a needle often stands at the very start or end of the data."""
    needles = draw(st.one_of(find_needles, st.just(GATE_ANCHORS)))
    pieces = [*needles, *(n[:-1] for n in needles if len(n) > 1), *(bytes([c]) for c in FIND_BYTES), b"/", b"\\"]
    middle = draw(chunks(st.sampled_from(pieces)))
    lead, tail = (draw(st.sampled_from([b"", *needles])) for _ in range(2))
    bounded = draw(with_bounds(st.just(lead + middle + tail)))
    return bounded, needles


def brute_starts(data, needles, start, stop):
    """What find_starts means, position by position."""
    lo, hi, _ = slice(start, stop).indices(len(data))
    return [(i, k) for i in range(lo, hi) for k, n in enumerate(needles) if i + len(n) <= hi and data[i:i + len(n)] == n]


@settings(max_examples=300, deadline=None)
@given(find_cases())
@example(((b"aaaa", 0, 4), (b"aa", b"a")))
def test_py_find_starts_is_every_occurrence(case):
    """The twin finds every occurrence wholly in the bounds, overlapping ones too, in order."""
    (data, start, stop), needles = case
    assert py_find_starts(data, needles, start, stop) == brute_starts(data, needles, start, stop)


@needs_c
@settings(max_examples=1000, deadline=None)
@given(find_cases())
@example(((b"aaaaa" * 30, 0, 150), (b"aa", b"a", b"aaa")))
@example(((b"\xff" * 17 + b"\x00" * 80, 1, -1), (b"\xff\x00", b"\x00", b"\xff")))
@example(((b"x" * 60 + b"/home/" + b"x" * 60 + b"file://", 0, 133), GATE_ANCHORS))
def test_find_starts_agrees(case):
    """C find_starts gives py_find_starts' occurrences for any needles, data and bounds."""
    (data, start, stop), needles = case
    want = py_find_starts(data, needles, start, stop)
    for name in KERNELS:
        with kernel(name):
            assert _speedups.find_starts(data, needles, start, stop) == want, name
            assert _speedups.find_starts(bytearray(data), needles, start, stop) == want, name


@needs_c
def test_find_starts_on_a_long_buffer():
    """Anchors put among random bytes over a few hundred KiB: the twin's answer, and each anchor found that still stands whole where it was put."""
    rng = random.Random(7)
    data = bytearray(rng.randbytes(300_000))
    for anchor in GATE_ANCHORS:  # random bytes could hold one by chance: none is left
        while (at := data.find(anchor)) >= 0:
            data[at] ^= 0x55
    placed = sorted((rng.randrange(len(data) - 10), k) for k in range(len(GATE_ANCHORS)) for _ in range(20))
    for at, k in placed:
        data[at:at + len(GATE_ANCHORS[k])] = GATE_ANCHORS[k]
    data = bytes(data)
    for name in KERNELS:
        with kernel(name):
            assert _speedups.find_starts(data, GATE_ANCHORS, 0, len(data)) == py_find_starts(data, GATE_ANCHORS, 0, len(data))
            found = {(at, k) for at, k in _speedups.find_starts(data, GATE_ANCHORS, 0, len(data))}
            assert {(at, k) for at, k in placed if data[at:at + len(GATE_ANCHORS[k])] == GATE_ANCHORS[k]} <= found


both_find = pytest.mark.parametrize("impl", [
    py_find_starts,
    pytest.param(getattr(_speedups, "find_starts", None), marks=needs_c, id="c"),
])


@both_find
def test_find_starts_refuses_too_many_needles_and_an_empty_one(impl):
    """Seventeen needles, or an empty one (it would stand everywhere), are a ValueError."""
    with pytest.raises(ValueError):
        impl(b"abc", tuple(b"n%d" % i for i in range(MAX_NEEDLES + 1)), 0, 3)
    with pytest.raises(ValueError):
        impl(b"abc", (b"a", b""), 0, 3)
    assert impl(b"abc", tuple(b"n%d" % i for i in range(MAX_NEEDLES)), 0, 3) == []


@needs_c
def test_find_starts_takes_its_needles_as_a_tuple_of_bytes():
    """A list could be changed while the scan runs without the GIL: only a tuple is taken."""
    with pytest.raises(TypeError):
        _speedups.find_starts(b"abc", [b"a"], 0, 3)
    with pytest.raises(ValueError):
        _speedups.find_starts(b"abc", ("a",), 0, 3)


IP_GUARD = (b"0123456789.", b"0123456789")


@pytest.mark.parametrize(("data", "needles", "guards", "want"), [
    (b"10.1 x10.2 10.", (b"10.",), (IP_GUARD,), [(0, 0), (6, 0)]),       # nothing before the first; nothing after the last
    (b"0.10.1 110.2 10.x", (b"10.",), (IP_GUARD,), []),                  # a digit or dot before, no digit after
    (b"192.168.1.1,172.16.0.1", (b"192.168.", b"172.", b"10."), (IP_GUARD,) * 3, [(0, 0), (12, 1)]),
    (b"/home/root/x", (b"/home/", b"/root/"), (None, None), [(0, 0)]),  # '/root/' overlaps the '/home/' taken
    (b"xaab", (b"aa", b"a", b"ab"), (None, None, None), [(1, 0)]),        # at one offset the first listed; then none overlapping
    (b"x10.5", (b"x1", b"10."), (None, IP_GUARD), [(0, 0)]),             # a needle taken hides one it overlaps, guarded or not
    (b"1x10.5", (b"10.", b"x1"), (IP_GUARD, None), [(1, 1)]),
])
@pytest.mark.parametrize("impl", [py_leftmost_starts, pytest.param(getattr(_speedups, "leftmost_starts", None), marks=needs_c, id="c")])
def test_leftmost_starts_explicit_cases(impl, data, needles, guards, want):
    assert impl(data, needles, guards) == want


@needs_c
@settings(max_examples=500, deadline=None)
@given(find_cases(), st.sampled_from([IP_GUARD, (b"", b"ab"), (b"a\x00", b"\x00\xffab"), None]), st.integers(0, 2**16))
def test_leftmost_starts_agrees(case, guard, which):
    """C leftmost_starts gives py_leftmost_starts' occurrences, with either candidate scan."""
    (data, _, _), needles = case
    guards = tuple(guard if which >> k & 1 else None for k in range(len(needles)))
    want = py_leftmost_starts(data, needles, guards)
    for name in KERNELS:
        with kernel(name):
            assert _speedups.leftmost_starts(data, needles, guards) == want, name
            assert _speedups.leftmost_starts(bytearray(data), needles, guards) == want, name


@pytest.mark.parametrize("impl", [py_leftmost_starts, pytest.param(getattr(_speedups, "leftmost_starts", None), marks=needs_c, id="c")])
def test_leftmost_starts_wants_a_guard_or_none_for_each_needle(impl):
    with pytest.raises(ValueError):
        impl(b"abc", (b"a", b"b"), (None,))


# -- email_ats -----------------------------------------------------------------------------

EMAIL_PIECES = [b"@", b".", b"a", b"Z", b"9", b"-", b"..", b"@x.co", b" ", b"\n", b"any@5"]
# Near-addresses too: an '@' and labels of 0-3 domain bytes joined by dots, so that an empty
# label, '..', and a last label of one letter or with a digit come up often, not by luck.
label = st.lists(st.sampled_from([b"a", b"Z", b"9", b"-"]), max_size=3).map(b"".join)
near_address = st.builds(lambda first, rest: b"@" + first + b"".join(b"." + r for r in rest),
                         label, st.lists(label, max_size=3))
email_data = chunks(st.one_of(near_address, st.sampled_from(EMAIL_PIECES)), 4)


@needs_c
@settings(max_examples=500, deadline=None)
@given(with_bounds(email_data))
@example((b"@x.co", 0, 1))        # the domain runs past end
@example((b"a@b.c.de", 0, 8))
@example((b"@a..bc @-.Zz", 0, 12))
@example((b"@.co @a.9Z @a.b", 0, 15))  # no label before the dot; a digit or one letter last
def test_email_ats_agree(bounded):
    """C email_ats gives py_email_ats' offsets for any data and bounds."""
    data, start, end = bounded
    assert _speedups.email_ats(data, start, end) == py_email_ats(data, start, end)


# -- record_walk ---------------------------------------------------------------------------

@st.composite
def record_cases(draw):
    """Two sets of needles (the words counted, and anchors with guards) and data made of both
    sets' pieces, near-addresses, '@' and hex runs about a digest's length, long enough to cross
    the scan's 64-byte steps; one set may be empty."""
    counted = draw(st.one_of(find_needles, st.just(())))
    anchors = draw(st.one_of(find_needles, st.just(GATE_ANCHORS), st.just(())))
    guard = draw(st.sampled_from([IP_GUARD, (b"", b"ab"), (b"a\x00", b"\x00\xffab"), None]))
    which = draw(st.integers(0, 2**16))
    guards = tuple(guard if which >> k & 1 else None for k in range(len(anchors)))
    needles = [*counted, *anchors]
    pieces = [*needles, *(n[:-1] for n in needles if len(n) > 1), *(bytes([c]) for c in FIND_BYTES), b"/", b"\\", b"@x.co", b"@", b"any@5"]
    middle = draw(chunks(st.one_of(st.sampled_from(pieces), near_address, hex_run)))
    lead, tail = (draw(st.sampled_from([b"", b"@a.bc", DIGEST, *needles])) for _ in range(2))
    return lead + middle + tail, counted, anchors, guards


def _four(data, counted, anchors, guards):
    """What record_walk stands for: the four searches, each by its own twin, and the census's counts."""
    counts = {}
    n = len(data)
    found = (py_census(data, 0, n, 0, counts), py_count_starts(data, counted, 0, n), py_leftmost_starts(data, anchors, guards), py_email_ats(data, 0, n))
    return found, counts


def _walked(walk, data, counted, anchors, guards):
    counts = {}
    return walk(data, counted, anchors, guards, counts), counts


@needs_c
@settings(max_examples=1000, deadline=None)
@given(record_cases())
@example((b"x" * 60 + b"/home/" + b"a@b.co " + b"x" * 60 + b"10.1", (b"x" * 8, b"b"), GATE_ANCHORS, (None,) * len(GATE_ANCHORS)))
@example((b"aa@b.cd" * 30, (b"a", b"aa"), (b"@b", b"b."), (None, IP_GUARD)))
@example((b"a" * 64, (b"b",), (b"c",), (None,)))             # a digest that fills the data (no step past it)
@example((b"x" * 3 + b"a" * 64, (b"b",), (b"c",), (None,)))  # one that ends it, after a whole step
@example((b"x" * 60 + b"a" * 65 + b"x" * 70, (b"b",), (b"c",), (None,)))
def test_record_walk_agrees(case):
    """C record_walk gives the four twins' answers, with every candidate scan (AVX-512's walks
    once for all four; the others run the four searches in turn)."""
    data, counted, anchors, guards = case
    want = _four(data, counted, anchors, guards)
    assert _walked(py_record_walk, data, counted, anchors, guards) == want
    for name in KERNELS:
        with kernel(name):
            assert _walked(_speedups.record_walk, data, counted, anchors, guards) == want, name
            assert _walked(_speedups.record_walk, bytearray(data), counted, anchors, guards) == want, name


@needs_c
@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 66, 67, 127, 128, 130, 131, 2047, 2048, 2051, 4200])
def test_record_walk_finds_a_run_of_hex_wherever_it_ends(size):
    """Runs of hex digits (of a digest's length, and longer) ending at every offset near the
    walk's step and span edges, and at the end of the data: the census finds each digest."""
    for k in range(0, 70):
        data = b"g" * size + DIGEST + b"F" * (k % 3 == 0) + b"g" * (k // 2)  # a digest, or a run of 65
        want = _four(data, (b"zz",), (b"qq",), (None,))
        for name in KERNELS:
            with kernel(name):
                assert _walked(_speedups.record_walk, data, (b"zz",), (b"qq",), (None,)) == want, (name, size, k)


@needs_c
def test_record_walk_on_a_long_buffer():
    """Words, anchors, addresses and digests put among random bytes and text over a few hundred
    KiB: past many of the walk's spans of 2 KiB, and at the very end of the data."""
    rng = random.Random(11)
    counted = (b"withheld-2026-09-29", b"earlier-run", b"records", b"desktop")
    guards = tuple(IP_GUARD if a in (b"10.", b"172.", b"192.168.") else None for a in GATE_ANCHORS)
    text = b"".join(rng.choice([b'{"path":"records/run-0001/rows.ndjson","route":"desktop"}\n', b"any@5 ", b"bob@example.org ", b"10.1.2.3 ", b"/home/",
                                b'"sha256":"' + DIGEST + b'" ', b"x" * 40]) for _ in range(4000))
    data = bytearray(rng.randbytes(100_000) + text)
    for _ in range(300):
        piece = rng.choice([*counted, *GATE_ANCHORS, b"a@b.cd", DIGEST.upper()])
        at = rng.randrange(len(data) - len(piece))
        data[at:at + len(piece)] = piece
    data = bytes(data) + DIGEST
    want = _four(data, counted, GATE_ANCHORS, guards)
    (starts, words, leftmost, ats), counts = want
    assert len(starts) > 400 and words[2] > 400 and len(leftmost) > 400 and len(ats) > 400  # each search finds plenty
    for name in KERNELS:
        with kernel(name):
            assert _walked(_speedups.record_walk, data, counted, GATE_ANCHORS, guards) == want, name


# Needles of three bytes or more, the first three ASCII (the walk then skips masking those
# positions' low nibbles, see kitbuild/_speedups.c), among bytes of 0x80 and above: right after a
# needle's first bytes, and right after a three-byte needle, where its bucket takes any byte.
ascii_needle = st.lists(st.sampled_from(b"ab0.@"), min_size=3, max_size=6).map(bytes)
short_ascii_needle = st.lists(st.sampled_from(b"ab0.@"), min_size=1, max_size=2).map(bytes)
high_pieces = [b"\x80", b"\xe1", b"\xff", b"\xc3\xa9", b"\xb0\xe1\xe0\xe6"]


@st.composite
def ascii_record_cases(draw):
    # Now and then a shorter needle too, which the walk must take with every position masked.
    counted = tuple(draw(st.lists(st.one_of(ascii_needle, ascii_needle, ascii_needle, short_ascii_needle), min_size=1, max_size=4)))
    anchors = draw(st.one_of(st.just(GATE_ANCHORS), st.lists(ascii_needle, min_size=1, max_size=4).map(tuple)))
    needles = [*counted, *anchors]
    pieces = [*needles, *(n[:k] for n in needles for k in (1, 2, 3)), *high_pieces, b"a", b"0", b"@x.co"]
    data = draw(chunks(st.one_of(st.sampled_from(pieces), hex_run), max_size=40))
    return data, counted, anchors, (None,) * len(anchors)


@needs_c
@settings(max_examples=600, deadline=None)
@given(ascii_record_cases())
@example((b"x" * 61 + b"10.\xff" + b"x" * 70, (b"abc",), GATE_ANCHORS, (None,) * len(GATE_ANCHORS)))
@example((b"ab0\x80" * 40 + b"ab0", (b"ab0",), (b"@@@",), (None,)))
@example((b"ab\xff" * 40, (b"ab",), (b"@@@",), (None,)))
def test_record_walk_agrees_where_the_needles_lead_with_ascii(case):
    """With every needle ASCII in its first three bytes and at least that long, the AVX2 walk
    reads those positions' bytes unmasked; bytes of 0x80 and above, anywhere, change nothing,
    nor does a shorter needle among them."""
    data, counted, anchors, guards = case
    want = _four(data, counted, anchors, guards)
    for name in KERNELS:
        with kernel(name):
            assert _walked(_speedups.record_walk, data, counted, anchors, guards) == want, name


@needs_c
@pytest.mark.parametrize("length", [5, 8, 9, 12, 16, 17, 19, 24, 25, 33])
def test_a_needle_with_any_one_byte_changed_is_not_found(length):
    """A needle beside copies of itself with one byte changed, at each of its positions: the
    compiled searches compare a needle a word at a time (its first 8 bytes, its last 8, and up
    to 24 bytes the 8 after its first, memcmp for the rest), so a word left uncompared would
    let a copy with a changed byte pass for the needle."""
    needle = b"withheld-2026-09-29/earlier-run/x"[:length]
    # Each copy keeps the needle's first four bytes, which the vector scans select candidates by.
    near = [needle[:i] + b"#" + needle[i + 1:] for i in range(4, length)]
    rng = random.Random(length)
    pieces = [needle] * 5 + near * 3
    rng.shuffle(pieces)
    data = b"".join(p + b" " * rng.randrange(1, 70) for p in pieces)
    guards = (None, None)
    anchors = (b"zzzz", needle)
    for name in KERNELS:
        with kernel(name):
            assert _speedups.count_starts(data, (needle,), 0, len(data)) == [5], name
            assert len(_speedups.find_starts(data, (needle,), 0, len(data))) == 5, name
            walked = _walked(_speedups.record_walk, data, (needle,), anchors, guards)
            assert walked == _four(data, (needle,), anchors, guards), name
            assert walked[0][1] == [5] and len(walked[0][2]) == 5, name


needs_buckets = pytest.mark.skipif(_speedups is None or _speedups.buckets((b"a",), 1) is None, reason="the vector scans are not built here")


def _shared(needles, buckets):
    """The needles grouped by the bucket each was put in, each group in needle order."""
    return sorted(tuple(n for n, b in zip(needles, buckets) if b == k) for k in set(buckets))


# Every leak shape's anchors but the '@' (which the walk finds apart): what a record walk takes.
LEAK_ANCHORS = tuple(anchor for anchors in SHAPE_ANCHORS.values() for anchor, _ in anchors if anchor != b"@")


@needs_buckets
def test_a_short_anchor_keeps_away_from_the_paths():
    """'10.' takes any fourth byte: in a bucket with ':/Users', as the split in order of bytes
    put it, the bucket took '1', one of "079/ '" and one of ".2>U%^..." wherever hex digits and
    numbers stand. The leak anchors in the four buckets a record walk leaves them, and in eight:
    '10.' shares its bucket with the other addresses at most."""
    for count in (4, 8):
        groups = _shared(LEAK_ANCHORS, _speedups.buckets(LEAK_ANCHORS, count))
        assert len(groups) == count, groups
        ten = next(g for g in groups if b"10." in g)
        assert set(ten) <= {b"10.", b"172.", b"192.168."}, (count, groups)


@needs_buckets
def test_buckets_share_nothing_when_there_are_enough_and_hold_every_needle():
    """A bucket each while there are buckets enough; all in the one when there is one; every
    needle somewhere in range."""
    words = (b"withheld-2026-09-29", b"earlier-run", b"records", b"desktop")
    assert sorted(_speedups.buckets(words, 4)) == [0, 1, 2, 3]
    assert sorted(_speedups.buckets(words, 8)) == [0, 1, 2, 3]
    assert _speedups.buckets(LEAK_ANCHORS, 1) == [0] * len(LEAK_ANCHORS)
    assert _speedups.buckets((), 4) == []
    many = tuple(b"n%02d" % i for i in range(MAX_NEEDLES))
    for count in range(1, 9):
        got = _speedups.buckets(many, count)
        assert len(got) == MAX_NEEDLES and all(0 <= b < count for b in got)
    for count in (0, 9):
        with pytest.raises(ValueError):
            _speedups.buckets(words, count)


def _afresh(needles, count):
    """buckets() in a thread of its own, whose kept assignments are none yet."""
    out = []
    thread = threading.Thread(target=lambda: out.append(_speedups.buckets(needles, count)))
    thread.start()
    thread.join()
    return out[0]


@needs_buckets
def test_buckets_kept_for_the_same_needles_are_the_ones_made_afresh():
    """The assignments a thread keeps are looked up by the needles' first four bytes, their
    lengths up to four and the count of buckets: sets that differ only past the fourth byte, or
    only in a needle's length (b"10." against b"10.\\0", which assign apart), or only in the
    count, each get what a thread that kept nothing gets, however many sets came between."""
    short = (b"10.", b"172.", b"/mnt/", b"/hom", b"1x")
    padded = (b"10.\0", b"172.", b"/mnt/", b"/hom", b"1x\0\0")
    assert _afresh(short, 2) != _afresh(padded, 2)  # (else the pair below would test nothing)
    rng = random.Random(5)
    sets = [LEAK_ANCHORS, LEAK_ANCHORS[::-1], tuple(a + b"zz" for a in LEAK_ANCHORS), LEAK_ANCHORS[:9], short, padded]
    # More sets than the thread keeps (256), so that the first are pushed out and made again.
    sets += [tuple(bytes(rng.choices(b"ab01/.", k=rng.randint(1, 6))) for _ in range(rng.randint(5, MAX_NEEDLES))) for _ in range(150)]
    want = {(k, count): _afresh(needles, count) for k, needles in enumerate(sets) for count in (2, 3)}
    for round_no in range(3):
        for (k, count), fresh in sorted(want.items(), key=lambda item: (item[0][1] * 7 + item[0][0] * (round_no + 1)) % 11):
            assert _speedups.buckets(sets[k], count) == fresh, (round_no, k, count)


@needs_c
def test_tables_kept_for_recent_needles_serve_only_those_needles():
    """A thread keeps the tables of the last few sets of needles it searched with (eight): sets
    of as many needles, sharing first bytes or lengths, searched in turn (more sets than are
    kept, in the order verify's quiet test asks them), each count what its own needles count."""
    rng = random.Random(11)
    data = bytes(rng.choices(b"ab01/.\n", k=4000)) + b"/home/x 10.0.0.1 172.16.0.1 records desktop"
    sets = [LEAK_ANCHORS, LEAK_ANCHORS[::-1], (b"records", b"desktop"), (b"desktop", b"records"), (b"recorder", b"desk")]
    sets += [tuple(bytes(rng.choices(b"ab01/.", k=rng.randint(1, 6))) for _ in range(5)) for _ in range(12)]
    for name in KERNELS:
        with kernel(name):
            for round_no in range(3):
                for k in (list(range(len(sets))) if round_no != 1 else [0, 2, 4, 0, 2, 4, 1, 3] + list(range(len(sets)))[::-1]):
                    assert _speedups.count_starts(data, sets[k], 0, len(data)) == py_count_starts(data, sets[k], 0, len(data)), (name, round_no, k)


@pytest.mark.parametrize("impl", [py_record_walk, pytest.param(getattr(_speedups, "record_walk", None), marks=needs_c, id="c")])
def test_record_walk_refuses_what_its_searches_refuse(impl):
    """Seventeen needles in either set, an empty needle, or a guard missing: a ValueError, and
    the census's counts untouched."""
    many = tuple(b"n%d" % i for i in range(MAX_NEEDLES + 1))
    counts = {}
    data = DIGEST + b" abc"
    for counted, anchors, guards in [(many, (b"a",), (None,)), ((b"a",), many, (None,) * len(many)), ((b"a",), (b"b", b""), (None, None)), ((b"a",), (b"a", b"b"), (None,))]:
        with pytest.raises(ValueError):
            impl(data, counted, anchors, guards, counts)
    assert counts == {}


@needs_c
def test_record_walk_takes_tuples_and_a_dict():
    """Lists could change while the walk runs without the GIL: needles and guards come as tuples."""
    with pytest.raises(TypeError):
        _speedups.record_walk(b"abc", [b"a"], (b"b",), (None,), {})
    with pytest.raises(TypeError):
        _speedups.record_walk(b"abc", (b"a",), (b"b",), [None], {})
    with pytest.raises(TypeError):
        _speedups.record_walk(b"abc", (b"a",), (b"b",), (None,), [])


# -- replace_bounded and contains ----------------------------------------------------------

# Literals with what their boundaries look at: a path, a name, a self-overlapping pair, one byte,
# a dot inside, quotes, a UTF-8 letter; and 'a a', which overlaps itself after a byte that is no
# boundary's, so a later occurrence may stand at a boundary inside a failed one.
BOUNDED_LITERALS = [b"/x/ls", b"gpu-b17", b"aa", b"a", b"a.b", b'"q"', "caf\u00e9".encode(), b"a a"]
# Each byte class a boundary tests, from either side: name and path bytes, '.' before a letter
# or not, white space (also \v, \f), quotes and separators, a byte past 0x7f.
BOUNDARY_BYTES = [b"a", b"Z", b"0", b"_", b"-", b".", b"~", b"/", b" ", b"\n", b"\t", b"\x0b", b"\x0c", b'"', b"'",
                  b"`", b",", b":", b"(", b"]", b"{", b"<", b"|", b"\\", b"@", b"\xff", b".x", b"._", b"x"]
REPLACEMENTS = [b"", b"L", b"desktop-role", b"\\1\\g<0>"]  # shorter, longer, and what re reads as escapes


def literal_pieces(literal):
    return [literal, literal, literal[:-1], literal[1:], *BOUNDARY_BYTES]


@st.composite
def bounded_cases(draw):
    """A literal, a replacement, a boundary kind and data made of the literal, its parts and
    boundary bytes; the literal often stands at the very start or end."""
    literal = draw(st.sampled_from(BOUNDED_LITERALS))
    middle = draw(chunks(st.sampled_from(literal_pieces(literal))))
    lead, tail = (draw(st.sampled_from([b"", literal, literal + literal[:1]])) for _ in range(2))
    return literal, draw(st.sampled_from(REPLACEMENTS)), draw(st.sampled_from([0, 1, 2])), lead + middle + tail


def reference_replace(data, literal, replacement, boundary):
    """What the rule's one-regex form (Matcher.compiled: lookbehind first) does, or bytes.replace."""
    if boundary == BOUNDARY_NONE:
        return data.replace(literal, replacement), data.count(literal)
    primitive = "path_prefix" if boundary == BOUNDARY_PATH else "literal_names"
    pattern = Matcher(primitive, pairs={literal.decode(): "r"}).compiled()
    return pattern.subn(lambda m: replacement, data)


@settings(max_examples=1000, deadline=None)
@given(bounded_cases())
@example((b"aa", b"b", BOUNDARY_NAME, b"aaa aa"))            # a failed 'aa' at 0 must not hide the one at 1... nor at 4
@example((b"aa", b"L", BOUNDARY_PATH, b"aaaa"))
@example((b"/x/ls", b"L", BOUNDARY_PATH, b"/x/ls/x/ls /x/ls"))
@example((b"gpu-b17", b"d", BOUNDARY_NAME, b"gpu-b17.x gpu-b17. gpu-b17"))
def test_replace_bounded_agrees_with_the_regex_reference(case):
    """C replace_bounded and its twin give the rule's regex result, for each boundary kind."""
    literal, replacement, boundary, data = case
    want = reference_replace(data, literal, replacement, boundary)
    assert py_replace_bounded(data, literal, replacement, boundary) == want
    if _speedups is not None:
        assert _speedups.replace_bounded(data, literal, replacement, boundary) == want
        assert _speedups.replace_bounded(bytearray(data), literal, replacement, boundary) == want
        assert _speedups.replace_bounded(memoryview(b"a/" + data)[2:], literal, replacement, boundary) == want


both_replace = pytest.mark.parametrize("impl", [
    py_replace_bounded,
    pytest.param(getattr(_speedups, "replace_bounded", None), marks=needs_c, id="c"),
])


@both_replace
@pytest.mark.parametrize(("data", "literal", "boundary", "out", "n"), [
    # none: bytes.replace, from the left, without overlaps
    (b"aaaaa", b"aa", BOUNDARY_NONE, b"RRa", 2),
    (b"x.a.x", b".", BOUNDARY_NONE, b"xRaRx", 2),
    # path: not after a path byte, and before a '/', white space, a quote, a separator or the end
    (b"/x/ls", b"/x/ls", BOUNDARY_PATH, b"R", 1),
    (b"/x/ls/a /x/ls\t/x/ls\"", b"/x/ls", BOUNDARY_PATH, b"R/a R\tR\"", 3),
    (b"/y/x/ls a/x/ls ~/x/ls .x/ls", b"/x/ls", BOUNDARY_PATH, b"/y/x/ls a/x/ls ~/x/ls .x/ls", 0),
    (b"/x/ls-smoke /x/ls.bak /x/ls0 /x/ls\xff", b"/x/ls", BOUNDARY_PATH, b"/x/ls-smoke /x/ls.bak /x/ls0 /x/ls\xff", 0),
    (b"\n/x/ls\x0b(/x/ls)", b"/x/ls", BOUNDARY_PATH, b"\nR\x0b(R)", 2),
    # name: not after a name byte or '.', not before one, nor before '.' and a letter or digit
    (b"gpu-b17", b"gpu-b17", BOUNDARY_NAME, b"R", 1),
    (b"on gpu-b17. @gpu-b17:80 /gpu-b17/", b"gpu-b17", BOUNDARY_NAME, b"on R. @R:80 /R/", 3),
    (b"gpu-b170 xgpu-b17 .gpu-b17 gpu-b17.net gpu-b17_", b"gpu-b17", BOUNDARY_NAME,
     b"gpu-b170 xgpu-b17 .gpu-b17 gpu-b17.net gpu-b17_", 0),
    (b"gpu-b17._ gpu-b17.", b"gpu-b17", BOUNDARY_NAME, b"R._ R.", 2),
    # a candidate that fails is skipped by one byte: the 'aa' at 1 of 'aaa' stands at the end
    (b"aaa", b"aa", BOUNDARY_NAME, b"aaa", 0),
    (b"-aa a", b"a", BOUNDARY_NAME, b"-aa R", 1),
    (b"/aa aaa", b"aa", BOUNDARY_PATH, b"/aa aaa", 0),
    (b"aa/aa", b"aa", BOUNDARY_PATH, b"R/aa", 1),
    (b"xa a a", b"a a", BOUNDARY_NAME, b"xa R", 1),  # the 'a a' at 3 overlaps the failed one at 1
    (b".a a a/", b"a a", BOUNDARY_PATH, b".a R/", 1),
])
def test_replace_bounded_explicit_cases(impl, data, literal, boundary, out, n):
    """Each boundary kind at its edges: the start and end of data, each side's classes, a failed candidate."""
    assert impl(data, literal, b"R", boundary) == (out, n)


@both_replace
def test_replace_bounded_takes_the_replacement_literally(impl):
    """No template escapes: a backslash, \\1 and \\g<0> are written as they are."""
    assert impl(b"a /x/ls b", b"/x/ls", b"\\1\\g<0>\\", BOUNDARY_PATH) == (b"a \\1\\g<0>\\ b", 1)


@both_replace
@pytest.mark.parametrize("boundary", [BOUNDARY_NONE, BOUNDARY_PATH, BOUNDARY_NAME])
def test_replace_bounded_returns_the_same_bytes_when_nothing_fires(impl, boundary):
    """Callers tell an unchanged chunk by identity: nothing found, or nothing at a boundary."""
    failing = [b"xaax" * 100] if boundary != BOUNDARY_NONE else []  # occurrences, none at a boundary
    for data in [b"no literal here " * 100, b"", *failing]:
        out, n = impl(data, b"aa", b"R", boundary)
        assert n == 0 and out is data
    out, n = impl(bytearray(b"xyz"), b"aa", b"R", boundary)
    assert (out, n) == (b"xyz", 0) and type(out) is bytes


@both_replace
def test_replace_bounded_refuses_an_empty_literal_and_an_unknown_boundary(impl):
    """An empty literal would 'stand' everywhere; boundary kinds are 0, 1 and 2."""
    with pytest.raises(ValueError):
        impl(b"abc", b"", b"x", BOUNDARY_NONE)
    with pytest.raises(ValueError):
        impl(b"abc", b"a", b"x", 3)


@needs_c
def test_replace_bounded_on_a_long_buffer():
    """Many firings among failed candidates in a buffer of a few hundred KiB, as in a record file."""
    line = b'{"path":"/x/ls/a","in":"/y/x/ls/b","host":"gpu-b17","near":"gpu-b170","at":"/x/ls"}\n'
    data = line * 5000
    for literal, boundary in [(b"/x/ls", BOUNDARY_PATH), (b"gpu-b17", BOUNDARY_NAME), (b"/x/ls", BOUNDARY_NONE)]:
        want = reference_replace(data, literal, b"R", boundary)
        assert _speedups.replace_bounded(data, literal, b"R", boundary) == want
        assert py_replace_bounded(data, literal, b"R", boundary) == want


# -- replace_values ------------------------------------------------------------------------

# Compact JSON pieces around one field's values: the marker, quotes, escapes, names and near-names.
SAFES = {b"node-01": b"n1", b"gpu-b17": b"", b"": b"empty", b'x"': b"never"}
value_data = st.lists(st.sampled_from([b'"r":"', b'"r"', b'":"', b'"', b"\\", b":", b"node-01", b"gpu-b17", b"node-0", b"x", b","]),
                      max_size=24).map(b"".join)


def reference_values(data, marker, safes):
    """The answer from bytes.split: each piece after a marker looked up up to its first quote."""
    parts = data.split(marker)
    unmatched, unread, fired = set(), False, 0
    for k in range(1, len(parts)):
        value, quote, rest = parts[k].partition(b'"')
        if not quote or value.endswith(b"\\"):
            unread = True
        elif value in safes:
            parts[k] = safes[value] + quote + rest
            fired += 1
        else:
            unmatched.add(value)
    return marker.join(parts), len(parts) - 1, fired, unread, unmatched


@settings(max_examples=1000, deadline=None)
@given(value_data, st.sampled_from([b'"r":"', b'"r"', b'"']))
@example(b'"r":"node-01"r":"gpu-b17"', b'"r":"')  # a value's closing quote starts the next marker
@example(b'"r":"x\\"node-01"', b'"r":"')           # an escaped quote
def test_replace_values_agrees_with_the_split_reference(data, marker):
    """C replace_values and its twin give what splitting at each marker gives, for any buffer."""
    want = reference_values(data, marker, SAFES)
    assert py_replace_values(data, marker, SAFES) == want
    if _speedups is not None:
        assert _speedups.replace_values(data, marker, SAFES) == want
        assert _speedups.replace_values(memoryview(b"##" + data)[2:], marker, SAFES) == want


both_values = pytest.mark.parametrize("impl", [
    py_replace_values,
    pytest.param(getattr(_speedups, "replace_values", None), marks=needs_c, id="c"),
])


@both_values
@pytest.mark.parametrize(("data", "out", "found", "fired", "unread", "unmatched"), [
    (b'{"r":"node-01","s":"node-01"}', b'{"r":"n1","s":"node-01"}', 1, 1, False, set()),
    (b'{"r":"gpu-b17"}{"r":""}', b'{"r":""}{"r":"empty"}', 2, 2, False, set()),
    (b'{"r":"node-0","r":"node-01 b"}', b'{"r":"node-0","r":"node-01 b"}', 2, 0, False, {b"node-0", b"node-01 b"}),
    (b'{"r":"a\\"node-01"}', b'{"r":"a\\"node-01"}', 1, 0, True, set()),
    (b'{"r":"node-01', b'{"r":"node-01', 1, 0, True, set()),  # no closing quote
    (b'{"r": "node-01"}', b'{"r": "node-01"}', 0, 0, False, set()),  # spaced: not this marker
])
def test_replace_values_explicit_cases(impl, data, out, found, fired, unread, unmatched):
    assert impl(data, b'"r":"', SAFES) == (out, found, fired, unread, unmatched)


@both_values
def test_replace_values_returns_the_same_bytes_when_nothing_fires_and_wants_a_quoted_marker(impl):
    data = b'{"r":"box"}' * 50
    out, *_ = impl(data, b'"r":"', SAFES)
    assert out is data
    with pytest.raises(ValueError):
        impl(data, b'r":"', SAFES)


@needs_c
@settings(max_examples=500, deadline=None)
@given(letter_data, st.one_of(needle, st.just(b"")))
@example(b"", b"a")
@example(b"ab" * 40 + b"\xff", b"b\xff")
def test_contains_agrees(data, needle):
    """C contains is ``needle in data`` (an empty needle is in anything)."""
    assert _speedups.contains(data, needle) == py_contains(data, needle) == (needle in data)
    assert _speedups.contains(bytearray(data), needle) == (needle in data)


# -- quiet ---------------------------------------------------------------------------------

# Data that mixes everything quiet looks for with near misses: the leak anchors and pieces of
# them, addresses and near-addresses, hex runs of 63 to 65 digits, and needles of a second group.
QUIET_NEEDLES = (GATE_ANCHORS[:MAX_NEEDLES], (b"[withheld]", b"aab"))
quiet_piece = st.one_of(
    st.sampled_from([*GATE_ANCHORS, *(a[:-1] for a in GATE_ANCHORS), b"[withheld", b"aab", b"aa", b"b"]),
    near_address,
    st.sampled_from(EMAIL_PIECES),
    hex_run,
)
quiet_data = chunks(quiet_piece, 4)


@pytest.mark.parametrize("impl", [py_quiet, pytest.param(getattr(_speedups, "quiet", None), marks=needs_c, id="c")])
@pytest.mark.parametrize(("data", "groups", "calm"), [
    (b"", QUIET_NEEDLES, True),
    (b"plain words, a@5 and 63 digits " + DIGEST[:63], QUIET_NEEDLES, True),
    (b"x /home/ x", QUIET_NEEDLES, False),                  # a leak anchor
    (b"x" * 40 + b"[withheld]", QUIET_NEEDLES, False),      # a needle of the second group, past a 16-byte step
    (b"x [withheld] x", (), True),                          # ... which is no needle without its group
    (b"digest " + DIGEST + b"0", (), False),                # a run of 65 digits: the census looks at it
    (b"mail ada@lab.example.org", (), False),               # an address
    (b"mail ada@y.z, any@5", (), True),                      # '@' with no label of two letters after a dot
])
def test_quiet_explicit_cases(impl, data, groups, calm):
    assert impl(data, groups) is calm


@needs_c
@settings(max_examples=1000, deadline=None)
@given(quiet_data, st.sampled_from([QUIET_NEEDLES, (), ((b"b",),)]))
@example(b"", QUIET_NEEDLES)
@example(b"x" * 40 + b"/home/", QUIET_NEEDLES)       # a needle ending the data, past the 16-byte steps
@example(b"x" * 16 + DIGEST, ())                      # a digest at the very end
@example(b"a@b.cd" + b"x" * 40, ())                   # an address first
@example(b"x" * 33 + b"[withheld]", QUIET_NEEDLES)    # a needle of the second group
def test_quiet_agrees(data, groups):
    """C quiet is py_quiet, for bytes and for a bytearray window."""
    for name in KERNELS:
        with kernel(name):
            assert _speedups.quiet(data, groups) == py_quiet(data, groups), name
            assert _speedups.quiet(bytearray(data), groups) == py_quiet(data, groups), name


@pytest.mark.parametrize("impl", [py_quiet, pytest.param(getattr(_speedups, "quiet", None), marks=needs_c, id="c")])
def test_quiet_refuses_what_the_scans_refuse(impl):
    """Seventeen needles in a group and an empty needle are ValueErrors, as for count_starts."""
    with pytest.raises(ValueError):
        impl(b"abc", (tuple(b"n%d" % i for i in range(MAX_NEEDLES + 1)),))
    with pytest.raises(ValueError):
        impl(b"abc", ((b"a", b""),))


# -- buffers -------------------------------------------------------------------------------

SAMPLE = b"mail ada@lab.example.org, digest " + DIGEST + b" aa aba\n"


@needs_c
@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview, lambda b: memoryview(b"##" + b)[2:]],
                         ids=["bytes", "bytearray", "memoryview", "memoryview-slice"])
def test_any_buffer_is_read_alike(wrap):
    """bytes, bytearray and memoryview (also one not at its buffer's start) give the same answers."""
    data = wrap(SAMPLE)
    assert _speedups.hex_runs(data) == py_hex_runs(SAMPLE) == [(33, 97)]
    assert _speedups.count_starts(data, (b"a", b"ab"), 0, -1) == py_count_starts(SAMPLE, (b"a", b"ab"), 0, -1)
    assert _speedups.email_ats(data, 0, len(SAMPLE)) == py_email_ats(SAMPLE, 0, len(SAMPLE)) == [8]
    assert _speedups.find_starts(data, (b"a", b"ab"), 1, -1) == py_find_starts(SAMPLE, (b"a", b"ab"), 1, -1)


# -- the compiled module is there, and a kit does not depend on it ---------------------------

@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler on PATH: the twins serve")
@pytest.mark.skipif(not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file(), reason="no Python headers to compile against: the twins serve")
@pytest.mark.skipif(bool(os.environ.get("KITBUILD_PURE_PYTHON")), reason="KITBUILD_PURE_PYTHON asks for the twins")
def test_a_machine_with_a_compiler_runs_the_compiled_scans():
    """With a C compiler at hand the install compiled the scans (a build hook that silently stops fails here)."""
    assert speedups.COMPILED, "a C compiler is on PATH but kitbuild._speedups did not import: did the build hook compile it?"
    from kitbuild import kitfs

    assert kitfs._listing is not None, "a C compiler is on PATH but kitbuild._listing did not import: did the build hook compile it?"


@needs_c
def test_the_widest_candidate_scan_the_processor_runs_is_the_one_used():
    """On a processor with AVX-512BW the needles' candidates are found 64 bytes at a time, with
    AVX2 32, without either by SSE2; asking for a scan the processor lacks, or one not known,
    changes nothing."""
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else None
    if flags is not None and "sse2" in flags:
        assert _speedups.kernel() == ("avx512" if "avx512bw" in flags else "avx2" if "avx2" in flags else "sse2")
    before = _speedups.kernel()
    with pytest.raises(ValueError):
        _speedups.kernel("neon")
    assert _speedups.kernel() == before


@needs_c
@pytest.mark.parametrize("name", KERNELS)
def test_nine_to_sixteen_needles_share_buckets_and_are_all_found(name):
    """Past eight needles the AVX2 scan puts two in a bucket, whose mixed nibbles let false
    candidates through: every needle is still found where it stands, and nothing else."""
    needles = tuple(b"n%02d-x" % i for i in range(MAX_NEEDLES))
    data = b"".join(b"..%s..n%02d-y.." % (needles[i], (i + 1) % 16) for i in range(MAX_NEEDLES)) * 5
    with kernel(name):
        assert _speedups.find_starts(data, needles, 0, len(data)) == brute_starts(data, needles, 0, len(data))
        assert _speedups.count_starts(data, needles, 0, len(data)) == [5] * MAX_NEEDLES


def env(pure: bool) -> dict[str, str]:
    """This process's environment, asking for the twins when ``pure`` and for the C scans otherwise."""
    out = {k: v for k, v in os.environ.items() if k != "KITBUILD_PURE_PYTHON"}
    return {**out, "KITBUILD_PURE_PYTHON": "1"} if pure else out


def test_the_environment_variable_selects_the_twins():
    """KITBUILD_PURE_PYTHON=1 makes kitbuild use the twins (else the test below would compare C with C)."""
    probe = "import kitbuild.speedups as s; print(s.COMPILED, s.email_ats is s.py_email_ats)"
    done = subprocess.run([sys.executable, "-c", probe], env=env(True), capture_output=True, text=True, check=True)
    assert done.stdout == "False True\n"


def kitbuild_both(*args: str, cwd: dict[bool, Path]) -> dict[bool, bytes]:
    """Run ``kitbuild ARGS`` in ``cwd[False]`` with the C scans and in ``cwd[True]`` with the twins,
    side by side (a demo takes a few seconds); the stdout of each."""
    procs = {pure: subprocess.Popen([sys.executable, "-m", "kitbuild", *args], cwd=folder, env=env(pure),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for pure, folder in cwd.items()}
    done = {pure: proc.communicate(timeout=120) for pure, proc in procs.items()}
    for pure, proc in procs.items():
        assert proc.returncode == 0, done[pure][1].decode()
    return {pure: out for pure, (out, _) in done.items()}


@needs_c
def test_the_demo_kit_is_the_same_bytes_with_the_c_scans_and_the_twins(tmp_path):
    """`kitbuild demo` builds the same kit, and verify reports the same JSON, with either scans."""
    folders = {pure: tmp_path / ("pure" if pure else "c") for pure in (False, True)}
    for folder in folders.values():
        folder.mkdir()
    kitbuild_both("demo", "demo", cwd=folders)
    kits = {pure: read_tree(folder / "demo" / "kit") for pure, folder in folders.items()}
    assert kits[False].keys() == kits[True].keys() and "SHA256SUMS" in kits[False]
    assert [name for name in kits[False] if kits[False][name] != kits[True][name]] == []
    # The kit's path is given relative, the same in both, so the reports may be compared whole.
    reports = {pure: json.loads(out) for pure, out in kitbuild_both("verify", "--format", "json", "demo/kit", cwd=folders).items()}
    assert reports[False] == reports[True]
    assert reports[False]["ok"] is True


# -- refill ----------------------------------------------------------------------------------

both_refill = pytest.mark.parametrize("impl", [
    py_refill,
    pytest.param(getattr(_speedups, "refill", None), marks=needs_c, id="c"),
])


@both_refill
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=40), st.data())
def test_refill_keeps_the_tail_and_reads_after_it(impl, stream, start, data):
    """Round after round, the window is what it kept followed by what it read, and reads end at 0."""
    r, w = os.pipe()
    try:
        os.write(w, stream)
        os.close(w)
        w = -1
        buf = bytearray(start)
        model = bytes(start)
        while True:
            keep = data.draw(st.integers(0, len(buf)))
            size = data.draw(st.integers(1, 64))
            n = impl(r, buf, keep, size)
            model = model[keep:] + stream[:n]
            stream = stream[n:]
            assert buf == model and 0 <= n <= size
            if n == 0:
                assert stream == b""
                break
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


@both_refill
def test_refill_refuses_a_window_with_a_view_on_it_and_leaves_it_as_it_was(impl, tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = bytearray(b"abcdef")
        with memoryview(buf):
            with pytest.raises(BufferError):
                impl(fd, buf, 2, 4)
            with pytest.raises(BufferError):
                impl(fd, buf, 4, 1)  # a window that would shrink
        assert buf == b"abcdef"
        with pytest.raises(ValueError):
            impl(fd, buf, 7, 4)  # more to drop than the window holds
        assert impl(fd, buf, 6, 4) == 4 and buf == b"0123"
    finally:
        os.close(fd)


@both_refill
def test_refill_reports_a_read_error_as_os_error(impl):
    r, w = os.pipe()
    os.close(r)
    try:
        with pytest.raises(OSError):
            impl(w, bytearray(b"kept"), 0, 4)  # a pipe's write end cannot be read
    finally:
        os.close(w)


@needs_c
def test_count_starts_counts_one_byte_over_many_steps():
    """Line ends over a buffer of many 255-step rounds (the first all line ends, where a round
    one step longer would wrap its counters), and from and to odd offsets in it."""
    data = b"\n" * 9000 + random.Random(5).randbytes(100_003)
    for start, stop in [(0, len(data)), (3, len(data) - 5), (4077, 4096 * 3 + 1), (17, 18)]:
        assert _speedups.count_starts(data, (b"\n",), start, stop) == [data.count(b"\n", start, stop)]


@needs_c
def test_hex_runs_on_a_long_buffer_find_every_digest_wherever_it_starts():
    """Digests at every offset from a 48-byte step, among random bytes with no hex digit."""
    rng = random.Random(6)
    filler = bytes(rng.choice(b"ghijklmnopqrstuvwxyz \n") for _ in range(5000))
    data, runs = b"", []
    for k in range(96):
        data += filler[: 48 + k]
        runs.append((len(data), len(data) + 64 + k % 3))
        data += (DIGEST + b"abc")[: 64 + k % 3]
    assert _speedups.hex_runs(data) == runs == py_hex_runs(data)
