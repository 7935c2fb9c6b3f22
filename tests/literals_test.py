"""The three ways a literal rule can run must agree, for every input.

``Matcher.compiled()`` is the reference: one regular expression, boundaries as lookarounds. The
Aho–Corasick finder (``Matcher.find``) and the per-literal substitutions
(``Matcher.substitutions``) are the fast paths; hypothesis writes texts out of the literals'
own pieces and the characters their boundaries care about.
"""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from kitbuild.literals import LiteralFinder
from kitbuild.matchers import Matcher, name_boundary
from kitbuild.rewrite import Rewriter

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


@settings(max_examples=300, deadline=None)
@given(st.lists(records, max_size=5).map(b"".join))
def test_field_scoped_names_fast_and_event_paths_agree(data: bytes) -> None:
    # A build rewrites JSON field values through one substitution; a dry run through the finder.
    matchers = [Matcher("literal_names", pairs=NAMES, fields=["route", "host"])]
    fast, slow = Rewriter("a.ndjson", matchers), Rewriter("a.ndjson", matchers, collect=True)
    assert fast.feed(data) == slow.feed(data)
    assert fast.counts == slow.counts


@settings(max_examples=300, deadline=None)
@given(texts)
def test_separate_and_joint_searches_agree(data: bytes) -> None:
    # A few literals without boundaries (the leak gate) are searched one by one; the merged
    # hits must be the joint automaton's leftmost-longest ones.
    literals = [b"/x/ls", b"/x/ls/a", b"gpu-b17", b"gpu-b17.cluster.example.net", b"ls/a/x"]
    separate = LiteralFinder(literals)
    assert separate._singles is not None
    joint = LiteralFinder(literals)
    joint._singles = None
    assert separate.find(data) == joint.find(data)
