"""The one pass over a file (kitbuild/observe.py): what it finds does not depend on how the bytes come.

A file is searched a window at a time, each settled up to the leak scanner's ``MAX_MATCH`` before
its end. Here the pieces ``observe_bytes`` and ``observe_stream`` read are made small
(``BLOCK_SIZE`` 300 bytes) and so is the sniffed head (``BINARY_SNIFF`` 1 KiB), so that some tens
of kilobytes cross many windows; ``MAX_MATCH`` is left as it is. The leaks looked for are the ones
any scanner finds: a private literal named in ``Plan.private`` (KB901) and a ``/home/...`` path
(KB501).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import tracemalloc
from typing import Iterator

import hypothesis.strategies as st
import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from kitbuild import observe
from kitbuild.leaks import LeakScanner
from kitbuild.pairs import json_pairs
from kitbuild.lines import line_chunks, locate
from kitbuild.observe import Observation, Observer, Plan, observe_bytes, observe_stream

# No example database: a run writes nothing into the tree.
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

HEX = "0123456789abcdef" * 4  # one digest, lower case
OTHER = "fedcba9876543210" * 4
PRIVATE = "gpu-b17.cluster.example.net"
PLACEHOLDER = "withheld-2026-09-29"
WORDS = ("desktop", "first author")
PLAN = Plan(
    paths=frozenset({"a/b.txt", "c/d.json"}),
    placeholders=(PLACEHOLDER,),
    words=(WORDS,),
    private={PRIVATE: "a machine name"},
)
SMALL_BLOCK = 300
SMALL_SNIFF = 1024
MARGIN = LeakScanner.MAX_MATCH  # how far before a window's end it is settled
_DIGEST = re.compile(rb"(?<![0-9A-Fa-f])[0-9A-Fa-f]{64}(?![0-9A-Fa-f])")


@contextlib.contextmanager
def small_blocks() -> Iterator[None]:
    """Small reads (observe_bytes, observe_stream) and a small sniffed head."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(observe, "BLOCK_SIZE", SMALL_BLOCK)
        mp.setattr(observe, "BINARY_SNIFF", SMALL_SNIFF)
        yield


def fed(path: str, pieces: list[bytes], plan: Plan = PLAN) -> Observation:
    observer = Observer(path, plan)
    for piece in pieces:
        observer.feed(piece)
    return observer.finish()


def cut(data: bytes, at: list[int]) -> list[bytes]:
    edges = [0, *sorted(set(at)), len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


def leaks_of(obs: Observation) -> list[tuple[str, int]]:
    return [(leak.code, leak.offset) for leak in obs.leaks]


def filler(pairs: int) -> bytes:
    # Spaced, so that no scan meets a long run of word characters.
    return b"x " * pairs


# -- the key property: the pieces do not matter ----------------------------------------------------

# 'sha256-' and 'sha256=' may begin a digest in another spelling (hidden_digest); a backslash may
# spell a kit path (a record holding one is read for pairs).
TOKENS = [PRIVATE, "/home/bob/x", PLACEHOLDER, "desktop", "first author", HEX, HEX.upper(), "sha256:" + OTHER, "f" * 70, "plain", "sha256-abc", "sha256=abc", "a\\/b.txt"]
HIDDEN = re.compile(rb"[0-9A-Fa-f]{65}|sha256[-=]")


@st.composite
def record_lines(draw: st.DrawFn) -> bytes:
    """One line, without its end: a JSON record, a mapping, plain text, a long line, or a non-JSON digest."""
    kind = draw(st.sampled_from(["record", "mapping", "text", "long", "unparsed"]))
    words = draw(st.lists(st.sampled_from(TOKENS), max_size=4))
    if kind == "record":
        record = {
            "path": draw(st.sampled_from(["a/b.txt", "./c/d.json", "not/in/kit.txt"])),
            "sha256": draw(st.sampled_from([HEX, HEX.upper(), "sha256:" + OTHER, PLACEHOLDER])),
            "note": " ".join(words),
        }
        if draw(st.booleans()):
            record["blob"] = filler(draw(st.integers(MARGIN // 4, MARGIN))).decode()
        return orjson.dumps(record)
    if kind == "mapping":
        return orjson.dumps({draw(st.sampled_from(["a/b.txt", "c/d.json"])): draw(st.sampled_from(["sha256:" + HEX, OTHER, PLACEHOLDER]))})
    if kind == "text":
        return " ".join(words).encode()
    if kind == "long":
        # Longer than the margin: windows are settled inside it.
        pad = [filler(draw(st.integers(0, MARGIN // 2))) for _ in range(len(words) + 1)]
        parts = [pad[0]] + [w.encode() + b" " + p for w, p in zip(words, pad[1:])]
        return filler(MARGIN // 2) + b"".join(parts)
    return b"digest " + draw(st.sampled_from([HEX, OTHER])).encode() + b" not json"


@st.composite
def files(draw: st.DrawFn, name: str) -> bytes:
    lines = draw(st.lists(record_lines(), min_size=1, max_size=25))
    for _ in range(draw(st.integers(0, 3))):
        # Plain lines of half a margin: most files then span several windows.
        lines.insert(draw(st.integers(0, len(lines))), filler(MARGIN // 4))
    if name == "r.json" and draw(st.booleans()):
        # One JSON document over many lines.
        records = [orjson.dumps({"path": "a/b.txt", "sha256": HEX, "note": line.decode("utf-8", "replace")}) for line in lines]
        data = b"[" + b",\n".join(records) + b"]"
    else:
        data = b"".join(line + draw(st.sampled_from([b"\n", b"\r\n"])) for line in lines)
    if draw(st.booleans()):
        data = data.rstrip(b"\r\n")
    nul = draw(st.sampled_from(["none", "none", "none", "early", "late"]))
    if nul != "none":
        # Within the sniffed head (binary) or after it (text that holds a NUL).
        at = draw(st.integers(0, min(len(data), SMALL_SNIFF - 1)) if nul == "early" else st.integers(min(len(data), SMALL_SNIFF), len(data)))
        data = data[:at] + b"\0" + data[at:]
    return data


def expected_pairs(name: str, data: bytes) -> tuple[dict[tuple[str, str, str], list[int]], int]:
    """The pairs and unread records, read line by line (NDJSON) or whole (JSON), without windows."""
    pairs: dict[tuple[str, str, str], list[int]] = {}
    unread = 0

    def read(text: bytes, offset: int) -> None:
        nonlocal unread
        # Only a record that names a kit path (or spells one with escapes) can pair a digest
        # with it: the others are not parsed at all.
        if not any(p.encode() in text for p in PLAN.paths) and b"\\" not in text:
            return
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError:
            unread += 1
            return
        for triple in json_pairs(document, PLAN.paths, PLAN.placeholders):
            pairs.setdefault(triple, [0, offset])[0] += 1

    if name == "r.json" and _DIGEST.search(data):
        read(data, -1)
    elif name == "r.ndjson":
        offset = 0
        for line in data.split(b"\n"):
            if _DIGEST.search(line):
                read(line, offset)
            offset += len(line) + 1
    return pairs, unread


@pytest.mark.parametrize("name", ["r.ndjson", "r.json", "r.txt"])
@PROPERTY
@given(data=st.data())
def test_any_cutting_into_pieces_observes_what_the_whole_does(name, data):
    data, cuts = data.draw(files(name), label="data"), data.draw(st.lists(st.integers(0, 1 << 20), max_size=30), label="cuts")
    with small_blocks():
        whole = fed(name, [data])
        pieces = fed(name, cut(data, [c % (len(data) + 1) for c in cuts]))
        assert pieces == whole
        assert observe_bytes(name, data, PLAN) == whole
        assert observe_stream(name, io.BytesIO(data), PLAN) == whole

    # ... and what the whole observes is what the bytes hold, searched in one go.
    binary = b"\0" in data[:SMALL_SNIFF]
    assert (whole.size, whole.sha256, whole.binary) == (len(data), hashlib.sha256(data).hexdigest(), binary)
    scanner = LeakScanner(PLAN.private, PLAN.allow, PLAN.withheld)
    assert leaks_of(whole) == [(leak.code, leak.offset) for leak in scanner.scan(data, binary=binary)]
    # The placeholder and the words are counted in any file, binary or not: a rewrite can pull a
    # NUL into a text file's first 8 KiB, and build and verify must count them the same way.
    assert whole.placeholders == [data.count(PLACEHOLDER.encode())]
    assert whole.words == [sum(data.count(w.encode()) for w in WORDS)]
    if binary:
        # No digests or pairs are read from binary data.
        assert (whole.digests, whole.hidden_digest, whole.pairs, whole.pairs_unread) == ({}, False, {}, 0)
        return
    digests: dict[str, list[int]] = {}
    for m in _DIGEST.finditer(data):
        digests.setdefault(m.group().decode().lower(), [0, m.start()])[0] += 1
    assert whole.digests == digests
    assert whole.hidden_digest == (HIDDEN.search(data) is not None)
    assert whole.placeholders == [data.count(PLACEHOLDER.encode())]
    assert whole.words == [sum(data.count(w.encode()) for w in WORDS)]
    assert (whole.pairs, whole.pairs_unread) == expected_pairs(name, data)


@pytest.mark.parametrize(
    "token, code",
    [
        (PRIVATE, "KB901"),
        ("/home/bob/x", "KB501"),
        (PLACEHOLDER, None),
        ("desktop", None),
        (HEX, None),
        # What comes before decides these: a relative path is no leak, and no 64 digits inside a
        # longer run of hex are a digest. A window must keep what is before its settled part.
        ("runs/home/bob/x", None),
        ("f" * 70, None),
    ],
)
@pytest.mark.parametrize("long_line", [False, True], ids=["short-lines", "long-line"])
def test_a_match_cut_by_a_piece_edge_or_the_settle_point_is_found_once(token, code, long_line):
    with small_blocks():
        sep = b" " if long_line else b"\n"
        data = filler(3 * MARGIN // 2) + sep + token.encode() + sep + filler(3 * MARGIN // 2)
        start = data.index(token.encode())
        # A cut inside the token, or MAX_MATCH after one inside it: the first window is then
        # settled inside the token.
        edges = [start + k for k in range(len(token) + 1)]
        edges += [e + MARGIN for e in edges]
        for edge in edges:
            obs = fed("r.txt", [data[:edge], data[edge:]])
            if code is not None:
                assert leaks_of(obs) == [(code, start)], edge
            else:
                assert leaks_of(obs) == [], edge
            assert (obs.placeholders, obs.words) == ([int(token == PLACEHOLDER)], [int(token == "desktop")]), edge
            assert obs.digests == ({HEX: [1, start]} if token == HEX else {}), edge
            assert obs.hidden_digest == (token == "f" * 70), edge


def test_a_word_inside_a_longer_word_is_not_counted_again_after_the_settle_point():
    # box-name-to-role with names {gpu-b17: desktop, gpu-b18: gpu-desktop} writes both words.
    plan = Plan(words=(("desktop", "gpu-desktop"),))
    data = b"line\n" * MARGIN + b"gpu-desktop\n" + b"line\n" * MARGIN
    start = data.index(b"gpu-desktop")
    whole = fed("r.txt", [data], plan).words
    # The first window is settled MAX_MATCH before the end of the first piece.
    counts = {edge: fed("r.txt", [data[:edge], data[edge:]], plan).words for edge in range(start + MARGIN, start + MARGIN + 12)}
    assert (whole, counts) == ([1], {edge: [1] for edge in counts})


# -- binary -----------------------------------------------------------------------------------------

NUL_RECORD = ("%s %s desktop /home/bob/x\n" % (HEX, PLACEHOLDER)).encode()


@pytest.mark.parametrize("size", [100, 3 * observe.BINARY_SNIFF])
def test_a_nul_in_the_first_8_kib_makes_a_file_binary_whatever_its_size(size):
    assert observe.BINARY_SNIFF == 8192
    at = min(size, observe.BINARY_SNIFF) - 1
    data = bytearray(b"x" * size)
    data[at] = 0
    assert observe_bytes("blob.bin", bytes(data), PLAN).binary
    assert fed("blob.bin", [bytes(data[:10]), bytes(data[10:])]).binary


def test_a_nul_after_the_first_8_kib_does_not_make_a_file_binary():
    data = b"x" * observe.BINARY_SNIFF + b"\0" + NUL_RECORD
    obs = observe_bytes("late.txt", data, PLAN)
    assert not obs.binary
    assert (obs.placeholders, obs.words) == ([1], [1])


def test_binary_data_counts_placeholders_and_words_and_is_hashed_and_scanned():
    data = b"\0" + NUL_RECORD
    obs = observe_bytes("blob.bin", data, PLAN)
    assert obs.binary
    assert (obs.placeholders, obs.words) == ([data.count(PLACEHOLDER.encode())], [sum(data.count(w.encode()) for w in WORDS)])
    assert (obs.size, obs.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert leaks_of(obs) == [("KB501", data.index(b"/home/"))]


def test_binary_data_censuses_no_digests():
    obs = observe_bytes("blob.bin", b"\0" + NUL_RECORD + b"f" * 70, PLAN)
    assert (obs.digests, obs.hidden_digest) == ({}, False)


# -- pairs --------------------------------------------------------------------------------------------


def test_a_json_document_pairs_a_kit_path_with_its_digest_at_offset_minus_one():
    data = b'{"files": [{"path": "a/b.txt", "sha256": "%s"}]}\n' % HEX.encode()
    obs = observe_bytes("run/manifest.json", data, PLAN)
    assert obs.pairs == {("files[0].sha256", "a/b.txt", HEX): [1, -1]}
    assert obs.pairs_unread == 0


def test_an_ndjson_file_gives_one_pair_per_record_at_the_record_offset():
    first = b'{"qid": "q1"}\n'
    second = b'{"path": "a/b.txt", "sha256": "%s"}\n' % HEX.encode()
    third = b'{"path": "./c/d.json", "sha256": "sha256:%s"}\n' % OTHER.upper().encode()
    data = first + second + third + second
    obs = observe_bytes("rows.ndjson", data, PLAN)
    assert obs.pairs == {
        ("sha256", "a/b.txt", HEX): [2, len(first)],
        ("sha256", "c/d.json", OTHER): [1, len(first + second)],
    }


def test_a_pair_that_says_a_placeholder_is_left_out():
    # Each record prints a digest (else it is not read at all) beside the placeholder pair.
    data = b'{"path": "a/b.txt", "sha256": "%s", "run": "%s"}\n{"a/b.txt": "%s", "note": "%s"}\n' % (PLACEHOLDER.encode(), HEX.encode(), PLACEHOLDER.encode(), HEX.encode())
    obs = observe_bytes("rows.ndjson", data, PLAN)
    assert (obs.pairs, obs.pairs_unread) == ({}, 0)
    assert obs.placeholders == [2]


def test_a_pair_with_a_path_outside_the_kit_is_left_out():
    obs = observe_bytes("rows.ndjson", b'{"path": "x/y.txt", "sha256": "%s"}\n' % HEX.encode(), PLAN)
    assert (obs.pairs, obs.pairs_unread) == ({}, 0)


def test_a_record_that_prints_a_digest_but_is_not_json_counts_as_unread():
    data = b'{"path": "a/b.txt", "sha256": "%s"}\nsha256 %s a/b.txt\n{"no": "digest"\n' % (HEX.encode(), HEX.encode())
    obs = observe_bytes("rows.ndjson", data, PLAN)
    assert obs.pairs == {("sha256", "a/b.txt", HEX): [1, 0]}
    assert obs.pairs_unread == 1


def test_a_json_document_that_is_not_json_counts_as_one_unread():
    obs = observe_bytes("r.json", b'{"path": "a/b.txt", "sha256": "%s",\n' % HEX.encode(), PLAN)
    assert (obs.pairs, obs.pairs_unread) == ({}, 1)


def test_a_mapping_entry_from_a_kit_path_to_a_digest_is_a_pair():
    obs = observe_bytes("sums.json", b'{"a/b.txt": "sha256:%s"}' % HEX.upper().encode(), PLAN)
    assert obs.pairs == {('["a/b.txt"]', "a/b.txt", HEX): [1, -1]}


def test_a_text_file_states_no_pairs():
    obs = observe_bytes("notes.txt", b'{"path": "a/b.txt", "sha256": "%s"}\n' % HEX.encode(), PLAN)
    assert (obs.pairs, obs.pairs_unread) == ({}, 0)
    assert obs.digests == {HEX: [1, 31]}


@pytest.mark.parametrize("record", [b'{"path": "a/b.txt", "sha256": "%s"}' % HEX.encode(), b"a/b.txt sha256 %s not json" % HEX.encode()])
def test_the_last_ndjson_record_is_read_without_a_final_line_end(record):
    head = b'{"qid": "q1"}\n'
    obs = observe_bytes("rows.ndjson", head + record, PLAN)
    read = observe_bytes("rows.ndjson", head + record + b"\n", PLAN)
    assert read.pairs or read.pairs_unread  # what a final line end gives
    assert (obs.pairs, obs.pairs_unread) == (read.pairs, read.pairs_unread)


def nested(depth: int) -> object:
    value: object = {"path": "a/b.txt", "sha256": HEX}
    for _ in range(depth):
        value = {"a": [value]}
    return value


def test_json_pairs_walks_10000_levels_without_recursion():
    [(key, target, said)] = list(json_pairs(nested(10_000), PLAN.paths, PLAN.placeholders))
    assert key == "a[0]." * 10_000 + "sha256"
    assert (target, said) == ("a/b.txt", HEX)


def test_a_json_file_nested_10000_deep_is_observed_without_recursion_error():
    data = b'{"a": [' * 10_000 + orjson.dumps(nested(0)) + b"]}" * 10_000
    obs = observe_bytes("deep.json", data, PLAN)
    # Either read (the pair) or counted as not read: never lost, never an exception.
    assert len(obs.pairs) + obs.pairs_unread == 1


def test_an_ndjson_record_larger_than_the_pair_limit_is_not_held_in_memory():
    limit = 64 << 10
    data = b'{"sha256": "%s", "x": "' % HEX.encode() + filler(1 << 20) + b'"}\n'
    with small_blocks(), pytest.MonkeyPatch.context() as mp:
        mp.setattr(observe, "PAIR_LIMIT", limit)
        observer = Observer("rows.ndjson", PLAN)
        tracemalloc.start()
        try:
            for at in range(0, len(data), limit):
                observer.feed(data[at : at + limit])
            obs = observer.finish()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert obs.pairs_unread == 1
    assert peak < 16 * limit, f"{peak:,} bytes at the peak for a record of {len(data):,}"


# -- locate -------------------------------------------------------------------------------------------


def test_locate_counts_lines_and_columns_from_one():
    data = b"ab\ncd\n\nef"
    assert locate([data], [0, 1, 2, 3, 6, 7, 8]) == {0: (1, 1), 1: (1, 2), 2: (1, 3), 3: (2, 1), 6: (3, 1), 7: (4, 1), 8: (4, 2)}


def test_locate_places_an_offset_past_the_end_on_the_last_line():
    assert locate([b"ab\n", b"cd"], [5, 9]) == {5: (2, 3), 9: (2, 7)}
    assert locate([], [0, 3]) == {0: (1, 1), 3: (1, 4)}


@PROPERTY
@given(st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"\n")), st.lists(st.integers(0, 210), max_size=12), st.lists(st.integers(0, 200), max_size=8))
def test_locate_agrees_with_counting_in_the_whole_however_the_blocks_fall(data, offsets, cuts):
    got = locate(cut(data, [c % (len(data) + 1) for c in cuts]), offsets)
    want = {o: (data.count(b"\n", 0, o) + 1, o - data.rfind(b"\n", 0, o)) for o in offsets}
    assert got == want


# -- line_chunks --------------------------------------------------------------------------------------


def test_line_chunks_end_at_line_ends_and_read_a_long_line_whole():
    long = b"y" * 50 + b"\n"
    data = b"a\nbb\n" + long + b"c\nd"
    chunks = list(line_chunks(io.BytesIO(data), size=8))
    assert chunks == [b"a\nbb\n", long, b"c\n", b"d"]


def test_line_chunks_start_with_first():
    assert list(line_chunks(io.BytesIO(b"cd\nef"), first=b"ab", size=4)) == [b"abcd\n", b"ef"]
    assert list(line_chunks(io.BytesIO(b""), size=4)) == []


@PROPERTY
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30), st.binary(max_size=20), st.integers(1, 32), st.booleans())
def test_line_chunks_lose_nothing_and_cut_only_at_line_ends(lines, first, size, last_end):
    text = b"\n".join(lines) + (b"\n" if last_end and lines else b"")
    chunks = list(line_chunks(io.BytesIO(text), first=first, size=size))
    assert b"".join(chunks) == first + text
    assert all(chunk for chunk in chunks)
    assert all(chunk.endswith(b"\n") for chunk in chunks[:-1])
    longest = max((len(line) + 1 for line in (first + text).split(b"\n")), default=0)
    # About ``size`` at a time: a chunk holds at most one block past the line it began in.
    assert all(len(chunk) <= len(first) + longest + size for chunk in chunks)


def test_an_observation_sent_from_a_worker_is_the_same_and_shares_its_empty_parts() -> None:
    # Workers send observations back pickled; a quiet one comes back with shared read-only empty
    # lists and dicts (the main process holds one per file of the kit), equal to what was sent.
    import pickle

    plan = Plan(paths=frozenset({"a/b.json"}), placeholders=("withheld",), words=(("kit",),))
    quiet = observe_bytes("a/q.ndjson", b'{"x": 1}\n', plan)
    busy = observe_bytes("a/b.ndjson", b'{"p": "a/b.json", "d": "' + b"ab" * 32 + b'", "w": "withheld kit"}\n', plan)
    for obs in (quiet, busy):
        sent = pickle.loads(pickle.dumps(obs))
        assert sent == obs
    a, b = pickle.loads(pickle.dumps(quiet)), pickle.loads(pickle.dumps(quiet))
    assert a.leaks is b.leaks and a.digests is b.digests and a.placeholders is b.placeholders
    with pytest.raises(TypeError, match="read-only"):
        a.leaks.append(None)
    with pytest.raises(TypeError, match="read-only"):
        a.digests["0" * 64] = [1, 0]
    with pytest.raises(TypeError, match="read-only"):
        a.placeholders[0] += 1
    sent_busy = pickle.loads(pickle.dumps(busy))
    assert sent_busy.digests == {"ab" * 32: [1, busy.digests["ab" * 32][1]]} and sent_busy.placeholders == [1] and sent_busy.words == [1]
