"""The three ways a literal rule can run must agree, for every input.

``Matcher.compiled()`` is the reference: one regular expression, boundaries as lookarounds. The
Aho–Corasick finder (``Matcher.find``) and the per-literal substitutions
(``Matcher.substitutions``) are the fast paths; hypothesis writes texts out of the literals'
own pieces and the characters their boundaries care about.
"""

from __future__ import annotations

import os
from unittest.mock import patch

import hypothesis.strategies as st
import pytest
from hypothesis import example, given, settings

import kitbuild.literals as literals_module
from kitbuild.literals import BINARY, TEXT, LiteralFinder, _samples, find_together, kind_of
from kitbuild.matchers import Matcher, name_boundary
from kitbuild.rewrite import Rewriter
from kitbuild.speedups import MAX_NEEDLES

PATHS = {"/x/ls": "L", "/x/ls/a": "LA", "/scratch/u7": "old"}
NAMES = {"gpu-b17": "desktop", "gpu-b17.cluster.example.net": "desktop", "box": "laptop"}
PIECES = ["/x/ls", "/a", "/x/ls/a", "-smoke", "/scratch/u7", "gpu-b17", ".cluster.example.net", "box",
          "0", ".", "-", "/", " ", '"', "\n", "x", ".x", "_", "~", "a"]

texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join).map(str.encode)


def reference(matcher: Matcher, data: bytes) -> tuple[bytes, int]:
    out, n = matcher.compiled().subn(lambda m: matcher.replacement(m) or m.group(0), data)
    return out, n


def through_finder(matcher: Matcher, data: bytes) -> tuple[bytes, int]:
    hits = matcher.find(data)
    out, last = [], 0
    for start, end, rep in hits:
        out += [data[last:start], rep]
        last = end
    out.append(data[last:])
    return b"".join(out), len(hits)


def through_substitutions(matcher: Matcher, data: bytes) -> tuple[bytes, int]:
    total = 0
    for pattern, rep in matcher.substitutions():
        data, n = pattern.subn(rep, data)
        total += n
    return data, total


@pytest.mark.parametrize(("primitive", "pairs"), [("path_prefix", PATHS), ("literal_names", NAMES)])
@settings(max_examples=400, deadline=None)
@given(data=texts)
def test_the_finder_and_the_substitutions_give_the_reference(primitive: str, pairs: dict[str, str], data: bytes) -> None:
    m = Matcher(primitive, pairs=pairs)
    want = reference(m, data)
    assert through_finder(m, data) == want
    assert through_substitutions(m, data) == want


@settings(max_examples=200, deadline=None)
@given(texts)
def test_rewriter_fast_and_event_paths_agree(data: bytes) -> None:
    # Collecting events (a dry run) takes the finder path; a build takes the substitutions.
    matchers = [Matcher("path_prefix", pairs=PATHS), Matcher("literal_names", pairs=NAMES)]
    fast, slow = Rewriter("a.txt", matchers), Rewriter("a.txt", matchers, collect=True)
    assert fast.feed(data) == slow.feed(data)
    assert fast.counts == slow.counts


def test_a_failed_boundary_falls_back_to_every_candidate() -> None:
    # 'gpu-b17' inside 'gpu-b170' fails its boundary; the later, valid one must still be found.
    finder = LiteralFinder([b"gpu-b17.cluster", b"gpu-b17"], name_boundary)
    assert finder.find(b"gpu-b170 gpu-b17.clusterx gpu-b17") == [(26, 33, 1)]


def test_many_names_take_the_automaton() -> None:
    many = {f"node-{i:04d}": "n" for i in range(40)}
    assert Matcher("literal_names", pairs=many).substitutions() == []
    assert Matcher("literal_names", pairs={"a": "b"}, fields=["route"]).substitutions() == []
    # A replacement that holds another literal would be matched again: no per-literal path.
    assert Matcher("literal_names", pairs={"box": "big box", "big": "x"}).substitutions() == []


values = st.lists(st.sampled_from(["gpu-b17", "gpu-b17.cluster.example.net", "box", " ", "x", "gpu-b170", ".", "-", "\\\""]),
                  max_size=6).map("".join)
records = st.lists(
    st.tuples(st.sampled_from(["route", "host", "note"]), values), max_size=6
).map(lambda kv: ("{" + ", ".join(f'"{k}": "{v}"' for k, v in kv) + "}\n").encode())


# More names than per-name steps take (matchers.FEW_LITERALS): values are looked up whole, after
# a split at each compact '"field":"'; written compact or spaced, exact or not, escaped or not.
MANY_NAMES = {**NAMES, **{f"node-{i:02d}": f"n{i % 3}" for i in range(20)}, "node-07.x": "seven"}
many_values = st.lists(st.sampled_from(["node-01", "node-07", "node-07.x", "gpu-b17", "box", "node-011", " ", "\\\"", "\\\\", "x"]),
                       max_size=4).map("".join)
compact_records = st.lists(
    st.tuples(st.sampled_from(["route", "host", "note"]), st.sampled_from(['":"', '": "', '" :"']), many_values), max_size=6
).map(lambda kv: ("{" + ",".join(f'"{k}{sep}{v}"' for k, sep, v in kv) + "}\n").encode())


@settings(max_examples=400, deadline=None)
@given(st.lists(compact_records, max_size=5).map(b"".join))
@example(b'{"route":"node-07","host":"node-07.x","note":"node-07"}\n{"route":"x\\"node-01"}\n')
def test_many_field_scoped_names_fast_and_event_paths_agree(data: bytes) -> None:
    matchers = [Matcher("literal_names", pairs=MANY_NAMES, fields=["route", "host"])]
    fast, slow = Rewriter("a.ndjson", matchers), Rewriter("a.ndjson", matchers, collect=True)
    assert fast.feed(data) == slow.feed(data)
    assert fast.counts == slow.counts


def test_compact_values_are_looked_up_whole_and_the_rest_left_for_the_field_pattern() -> None:
    matcher = Matcher("literal_names", pairs=MANY_NAMES, fields=["route"])
    rewriter = Rewriter("a.ndjson", [matcher])
    safes = rewriter._compact_safes(matcher, b"")
    assert safes is not None and safes[b"node-07.x"] == b"seven"
    data = b'{"route":"node-07.x","route": "node-01","route":"node-01 b","note":"node-02"}\n'
    out, settled = rewriter._compact_values(0, matcher, safes, data)
    assert out == b'{"route":"seven","route": "node-01","route":"node-01 b","note":"node-02"}\n'
    assert rewriter.counts == [1] and not settled  # a spaced key, and a name inside a value, are left
    out, settled = rewriter._compact_values(0, matcher, safes, b'{"route":"node-01","route":"x b","note":"node-02"}\n')
    assert out == b'{"route":"n1","route":"x b","note":"node-02"}\n' and settled
    for unsettled in (b'{"route":"node-01 b"}\n', b'{"route": "x"}\n', b'{"route":"x\\"y"}\n', b'{"route":["node-01"]}\n'):
        assert not rewriter._compact_values(0, matcher, safes, unsettled)[1]


def test_a_replacement_that_holds_a_name_is_not_replaced_again() -> None:
    # 'alias' becomes 'node-01 spare', which holds the name node-01: replaced once, as a dry run does.
    matchers = [Matcher("literal_names", pairs={**MANY_NAMES, "alias": "node-01 spare"}, fields=["route"])]
    data = b'{"route":"alias"}\n{"route":"node-01"}\n'
    fast, slow = Rewriter("a.ndjson", matchers), Rewriter("a.ndjson", matchers, collect=True)
    assert fast.feed(data) == slow.feed(data) == b'{"route":"node-01 spare"}\n{"route":"n1"}\n'
    assert fast.counts == slow.counts == [2]


@settings(max_examples=300, deadline=None)
@given(st.lists(records, max_size=5).map(b"".join))
def test_field_scoped_names_fast_and_event_paths_agree(data: bytes) -> None:
    # A build rewrites JSON field values through one substitution; a dry run through the finder.
    matchers = [Matcher("literal_names", pairs=NAMES, fields=["route", "host"])]
    fast, slow = Rewriter("a.ndjson", matchers), Rewriter("a.ndjson", matchers, collect=True)
    assert fast.feed(data) == slow.feed(data)
    assert fast.counts == slow.counts


def automaton(finder: LiteralFinder, data: bytes | bytearray, lo: int, hi: int) -> list[tuple[int, int, int]]:
    """The one leftmost-longest automaton's matches in ``data[lo:hi]``: the reference."""
    return [(lo + s, lo + e, i) for i, s, e in finder._longest.find_matches_as_indexes(memoryview(data)[lo:hi])]


# Literals out of few bytes, so that they overlap each other and themselves, are prefixes and
# suffixes of each other, and repeat; up to one more than a compiled search takes.
few = st.lists(st.sampled_from(b"xa/\x00\xff"), min_size=1, max_size=5).map(bytes)
literal_sets = st.lists(st.one_of(few, st.sampled_from([b"xa", b"aa", b"a", b"/home/", b"\\/home\\/"])),
                        min_size=1, max_size=MAX_NEEDLES + 1)


@st.composite
def gate_cases(draw):
    """Literals and data made of them and their pieces, with a region lo..hi of it."""
    literals = draw(literal_sets)
    pieces = [*literals, *(lit[1:] for lit in literals), *(bytes([c]) for c in b"xa/\x00\xff")]
    data = draw(st.lists(st.sampled_from(pieces), max_size=60).map(b"".join))
    lo = draw(st.integers(0, len(data)))
    hi = draw(st.one_of(st.integers(lo, len(data)), st.just(len(data) + 3)))
    return literals, data, lo, hi


@settings(max_examples=500, deadline=None)
@given(gate_cases(), st.booleans())
@example(([b"xa", b"aa"], b"xaaa", 0, 4), False)  # the 'aa' at 1 passed over, the one at 2 taken
@example(([b"a", b"aa", b"aa"], b"aaaaa", 1, 5), True)  # equal literals: the first one's index
def test_boundary_free_finders_give_the_automatons_matches(case: tuple[list[bytes], bytes, int, int], window: bool) -> None:
    # The leak gate's finders pick their matches from every occurrence (compiled, or one
    # automaton per literal without the compiled module); either way the matches must be those
    # of the one leftmost-longest automaton, also in a streaming scan's bytearray window.
    literals, data, lo, hi = case
    buf = bytearray(data) if window else data
    want = automaton(LiteralFinder(literals), data, lo, hi)
    assert LiteralFinder(literals).find(buf, lo, hi) == want  # whichever search the timing picks
    assert by_occurrences(LiteralFinder(literals)).find(buf, lo, hi) == want
    with patch.object(literals_module, "COMPILED", False):
        assert by_occurrences(LiteralFinder(literals)).find(buf, lo, hi) == want
    if lo == 0 and hi >= len(data):
        assert by_occurrences(LiteralFinder(literals)).find(buf) == want


def by_occurrences(finder: LiteralFinder) -> LiteralFinder:
    """``finder``, made to pick from every occurrence whatever its timing would choose."""
    if finder._needles is not None:
        finder._by_occurrences = [True, True]
    return finder


def test_a_finder_times_its_two_searches_once_per_kind_of_data_and_keeps_one() -> None:
    finder = LiteralFinder([b"/home/", b"/Users/", b"file://"])
    assert finder._by_occurrences == [None, None]
    assert finder.find(b"see /home/ada") == [(4, 10, 0)]
    text = finder._by_occurrences[TEXT]
    assert isinstance(text, bool) and finder._by_occurrences[BINARY] is None  # text: its own timing
    finder.find(b"and /Users/ada")
    assert finder._by_occurrences == [None, text]
    assert finder.find(b"\0\x01/home/") == [(2, 8, 0)]
    binary = finder._by_occurrences[BINARY]
    assert isinstance(binary, bool) and finder._by_occurrences[TEXT] is text


def test_binary_data_and_text_are_each_searched_the_way_their_own_sample_timed_fastest() -> None:
    # Each kind goes to the search its choice names, whatever the other kind chose: a finder that
    # times the automaton faster on binary data and find_starts faster on text must use each.
    finder = LiteralFinder([b"/home/", b"/Users/", b"file://"])
    finder._by_occurrences = [False, True]  # [BINARY, TEXT]
    calls: list[str] = []
    real = finder._occurrences
    finder._occurrences = lambda *a: calls.append("occurrences") or real(*a)  # type: ignore[method-assign]
    assert finder.find(b"\0 /home/a") == [(2, 8, 0)]
    assert calls == []  # binary: the automaton
    assert finder.find(b"x /home/a") == [(2, 8, 0)]
    assert calls == ["occurrences"]  # text: every occurrence
    # Where in the data it looks: at the region searched, not at the start of the buffer.
    assert kind_of(b"\0" + b"a" * 10, 1) == TEXT and kind_of(b"a\0b", 0) == BINARY
    assert kind_of(b"a" * 5000 + b"\0") == TEXT  # only the first bytes are looked at
    assert kind_of(b"ab\0", 0, 2) == TEXT  # nor past the region's end


def test_a_few_literals_without_boundaries_take_the_search_of_every_occurrence() -> None:
    # Else the test above would compare the automaton with itself.
    assert LiteralFinder([b"a", b"b"])._needles is not None
    assert LiteralFinder([b"n%d" % i for i in range(MAX_NEEDLES)])._needles is not None
    assert LiteralFinder([b"a"])._needles is None  # one literal: the automaton's memmem is faster
    assert LiteralFinder([b"n%d" % i for i in range(MAX_NEEDLES + 1)])._needles is None
    assert LiteralFinder([b"a", b"b"], name_boundary)._needles is None


@settings(max_examples=400, deadline=None)
@given(gate_cases(), literal_sets, st.booleans())
@example(([b"xa", b"aa"], b"xaaa/home/", 0, 10), [b"/home/", b"aa"], False)
def test_finders_searching_together_find_what_each_finds_alone(case: tuple[list[bytes], bytes, int, int], others: list[bytes], window: bool) -> None:
    # The leak gate's private strings and shape anchors, one pass for both where it can be:
    # each finder's matches are still its own leftmost-longest ones, never another's.
    literals, data, _, _ = case
    data += b"".join(others)
    buf = bytearray(data) if window else data
    first, second = by_occurrences(LiteralFinder(literals)), by_occurrences(LiteralFinder(others))
    assert find_together([first, second], buf) == [automaton(first, data, 0, len(data)), automaton(second, data, 0, len(data))]


def test_finders_that_fit_one_pass_share_it() -> None:
    first, second = by_occurrences(LiteralFinder([b"/x/ls", b"\\/x\\/ls"])), by_occurrences(LiteralFinder([b"/home/", b"file://"]))
    calls = []
    real = literals_module.find_starts

    def counted(*args: object) -> object:
        calls.append(args[1])
        return real(*args)  # type: ignore[arg-type]

    with patch.object(literals_module, "find_starts", counted):
        found = find_together([first, second], b"at /x/ls and file:///home/a")
    assert found == [[(3, 8, 0)], [(13, 20, 1), (20, 26, 0)]]
    if literals_module.COMPILED:
        assert calls == [(b"\\/x\\/ls", b"/x/ls", b"file://", b"/home/")]


# More literals than one compiled search takes: found through their groups' common prefixes.
# Prefixes that share first bytes and overlap one another ('e-0' inside 'node-0').
prefixed = st.tuples(st.sampled_from([b"node-0", b"node-", b"e-0", b"0", b"n", b"-"]), st.lists(st.sampled_from(b"0n-.x"), max_size=4).map(bytes)).map(b"".join)
many_literals = st.lists(prefixed, min_size=MAX_NEEDLES + 1, max_size=60)


@st.composite
def many_cases(draw):
    literals = draw(many_literals)
    pieces = [*literals, *(lit[:-1] for lit in literals), *(lit[1:] for lit in literals), b"node", b"-", b"0", b".", b"x", b" "]
    data = draw(st.lists(st.sampled_from(pieces), max_size=60).map(b"".join))
    lo = draw(st.integers(0, len(data)))
    return literals, data, lo, draw(st.integers(lo, len(data)))


@settings(max_examples=500, deadline=None)
@given(many_cases(), st.booleans())
@example(([b"node-0%d" % i for i in range(20)] + [b"node-0"], b"node-01 node-0 node-019", 0, 23), False)
def test_many_literals_found_through_their_groups_give_the_automatons_matches(case, window) -> None:
    literals, data, lo, hi = case
    finder = LiteralFinder(literals)
    assert (finder._groups is not None) == literals_module.COMPILED
    buf = bytearray(data) if window else data
    assert finder.find(buf, lo, hi) == automaton(finder, data, lo, hi)


def test_a_thousand_names_make_a_few_groups_by_their_common_prefixes() -> None:
    names = [b"node-%04d.cluster.example.net" % i for i in range(1000)] + [b"gpu-b17", b"/scratch/u7/runs"]
    groups = literals_module._Groups.of(names)
    assert groups is not None and len(groups.needles) <= MAX_NEEDLES
    assert b"gpu-b17" in groups.needles and b"/scratch/u7/runs" in groups.needles
    assert all(n.startswith(b"node-0") for n in groups.needles if n.startswith(b"node"))
    # No group when the literals' very first bytes already make too many.
    assert literals_module._Groups.of([bytes([65 + i]) * 3 for i in range(MAX_NEEDLES + 1)]) is None


@pytest.mark.skipif(not literals_module.COMPILED, reason="groups need the compiled search")
def test_a_common_prefix_hands_the_search_back_to_the_automaton() -> None:
    names = [b"node-%04d" % i for i in range(40)]
    finder = LiteralFinder(names)
    assert finder.find(b"x node-0007 y") == [(2, 11, 7)]
    assert finder._groups is not None and finder._groups.needles == (b"node-000", b"node-001", b"node-002", b"node-003")
    common = b'{"route":"node-001x"}\n' * 8000  # a group's prefix every 22 bytes, over 64 KiB, and no name
    assert finder.find(common + b"node-0001") == [(len(common), len(common) + 9, 1)]
    assert finder._groups is None


def groups_by_first_bytes(literals: list[bytes]) -> list[list[int]] | None:
    """The reference grouping: by lit[:k] for the largest k that makes at most MAX_NEEDLES groups."""
    best = None
    for k in range(1, max(map(len, literals)) + 1):
        groups: dict[bytes, list[int]] = {}
        for i, lit in enumerate(literals):
            groups.setdefault(lit[:k], []).append(i)
        if len(groups) > MAX_NEEDLES:
            break
        best = groups
    return None if best is None else [best[key] for key in sorted(best)]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(b"ab/"), min_size=1, max_size=6).map(bytes), min_size=MAX_NEEDLES + 1, max_size=50))
def test_groups_are_those_of_the_longest_first_bytes_that_make_few_enough(literals: list[bytes]) -> None:
    want = groups_by_first_bytes(literals)
    got = literals_module._Groups.of(literals)
    if want is None:
        assert got is None
        return
    assert got is not None and len(got.needles) == len(want)
    for needle, members, group in zip(got.needles, got.members, want):
        # Each needle is its group's common prefix; each literal kept once, by its first index.
        assert needle == os.path.commonprefix([literals[i] for i in group])
        assert {lit: i for length, by in members for lit, i in by.items()} == {literals[i]: i for i in reversed(group)}


def test_binary_data_is_timed_on_the_binary_sample_and_text_on_both() -> None:
    # The record sample alone holds none of a kit's private strings and would time the
    # automaton's prefilter at its best (see kitbuild.literals): text needs the dense case too.
    finder = LiteralFinder([b"/home/", b"/Users/", b"file://"])
    timed: list[int] = []
    real = finder._occurrences
    finder._occurrences = lambda data, lo, hi: timed.append(_samples().index(data)) or real(data, lo, hi)  # type: ignore[method-assign]
    finder._calibrate(BINARY)
    assert set(timed) == {BINARY}
    timed.clear()
    finder._calibrate(TEXT)
    assert set(timed) == {BINARY, TEXT}
