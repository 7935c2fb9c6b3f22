"""The leak gate (issue 2, point 8): every private string and generic private-path shape, placed by line and column."""

from __future__ import annotations

import re
from unittest.mock import patch

import hypothesis.strategies as st
import pytest
from hypothesis import example, given, settings

from kitbuild.leaks import LeakScanner

DIGEST = "ab" * 32


def findings(data, private=None, digests=None, allow=()):
    scanner = LeakScanner(private or {}, digests or {}, allow)
    return [str(f) for f in scanner.scan("run/x.json", data, 1)]


@pytest.mark.parametrize(
    "data, what",
    [
        (b"/home/ada/runs", "a home folder path (/home/...)"),
        (b'"\\/home\\/ada\\/runs"', "a home folder path (/home/...)"),  # JSON-escaped slashes
        (b"/Users/ada/x", "a home folder path (/Users/...)"),
        (b"/root/.cache/x", "a root home path (/root/...)"),
        (b"/mnt/scratch/x", "a mounted volume path (/mnt/...)"),
        (b"C:\\Users\\ada\\x", "a Windows user folder path (C:\\Users\\...)"),
        (b'"C:\\\\Users\\\\ada"', "a Windows user folder path (C:\\Users\\...)"),  # JSON-escaped backslashes
        (b"file://server/share/x", "a file:// address"),
    ],
)
def test_generic_shapes(data, what):
    col = 4 if data.startswith(b'"') else 3  # a JSON string's opening quote is not part of the path
    assert findings(b"ok\n  " + data + b"\n") == [f"run/x.json:2:{col}: {what}"]


@pytest.mark.parametrize(
    "data",
    [b"/homework/a", b"/usr/lib/python3", b"x/home/ada", b"learned-sparse/home", b"/rooted/a", b"/mntx/a"],
)
def test_not_generic_shapes(data):
    assert findings(data) == []


def test_generic_shape_exact_positions():
    data = b'{"a": 1}\n{"log": "/home/ada/run", "b": "/mnt/d/x"}\n'
    assert findings(data) == [
        "run/x.json:2:10: a home folder path (/home/...)",
        "run/x.json:2:32: a mounted volume path (/mnt/...)",
    ]


def test_private_strings_and_digests_in_either_case():
    private = {"/x/ls-2026-11-07": "the private path of sources[0] (run)", "gpu-b17": "a name that 'desktop' stands for (rules[1])"}
    described = {DIGEST: "the original sha256 of run/a.json, which a rule rewrote"}
    data = b"gpu-b17 /x/ls-2026-11-07\nsha256:" + DIGEST.upper().encode() + b"\n"
    assert findings(data, private, described) == [
        "run/x.json:1:1: a name that 'desktop' stands for (rules[1])",
        "run/x.json:1:9: the private path of sources[0] (run)",
        "run/x.json:2:8: the original sha256 of run/a.json, which a rule rewrote",
    ]


def test_a_withheld_digest_is_found_alone_and_inside_a_longer_run_of_hex_digits():
    other = "0" * 64
    described = {DIGEST: "the original sha256 of run/a.json, which a rule rewrote", other: "the original sha256 of run/b.json"}
    data = b"a " + DIGEST.encode() + b"\nb f" + other.encode() + b"f\nc " + b"1" * 64 + b"\n"
    assert findings(data, {}, described) == [
        "run/x.json:1:3: the original sha256 of run/a.json, which a rule rewrote",
        "run/x.json:2:4: the original sha256 of run/b.json",
    ]


def test_allow_passes_a_generic_shape_inside_the_allowed_text_only():
    allow = ["/home/shared/datasets"]
    assert findings(b"/home/shared/datasets/a.json\n", allow=allow) == []
    assert findings(b"/home/shared/other\n", allow=allow) == ["run/x.json:1:1: a home folder path (/home/...)"]


def test_allow_never_passes_a_string_the_config_names_private():
    private = {"/home/ada/bench": "the private path of sources[0] (run)"}
    assert findings(b"/home/ada/bench/a\n", private, allow=["/home/ada/bench"]) == [
        "run/x.json:1:1: the private path of sources[0] (run)"
    ]


def test_a_finding_never_prints_the_private_text():
    private = {"/x/secret-place": "the private path of sources[0] (run)"}
    for line in findings(b"/x/secret-place /home/ada\n", private):
        assert "secret-place" not in line and "ada" not in line


# -- the gate in a build -----------------------------------------------------------------------


def test_leak_gate_stops_the_build_listing_every_finding(bench, make_files, write_kit, cli):
    make_files(bench, {"src": {
        "run.json": '{"smoke": "%s/src-smoke/a",\n "home": "/home/ada/x", "ok": "/usr/lib/python3"}\n' % bench,
        "note.txt": "made on gpu-b17\n",
    }})
    write_kit(bench, sources=[{"path": "src", "as": "run"}],
              rules=[{"use": "record-path-to-kit-path"}, {"use": "box-name-to-role", "with": {"names": {"gpu-b170": "x"}}}])
    result = cli("build")
    assert result.exit_code == 1
    assert result.stderr == (
        "kitbuild: the leak gate stopped the build: 2 findings of private text that no rule rewrote and no allow entry "
        "covers; nothing was written.\n"
        "run/run.json:1:12: the private path of sources[0] (run)\n"
        "run/run.json:2:11: a home folder path (/home/...)\n"
        "Add a rule (or a map entry) that rewrites it, exclude the file, or, for a path that names no person or machine, "
        "add an 'allow' entry with its reason.\n"
    )
    assert not (bench / "kit").exists()


def test_a_path_the_rules_do_not_cover_is_a_finding_not_rewritten(bench, make_files, write_kit, cli):
    # The smoke run's folder shares the source's prefix; without a rule of its own it must stop the
    # build. A private path inside a file:// address is reported as itself, never passed as a shape.
    line = '{"smoke": "%s/src-smoke/a", "file": "file://%s/src/a"}' % (bench, bench)
    make_files(bench, {"src": {"run.json": line + "\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "record-path-to-kit-path"}],
              allow=[{"text": f"file://{bench}/src/a", "why": "tries to pass the private path"}])
    result = cli("build")
    assert result.exit_code == 1
    url = line.index("file://")
    findings = result.stderr.splitlines()[1:-1]
    assert [f for f in findings if f.startswith("run/")] == [
        "run/run.json:1:12: the private path of sources[0] (run)",
        f"run/run.json:1:{url + 8}: the private path of sources[0] (run)",
    ]
    # The allow list is published in provenance.json, so that entry is itself a leak.
    assert [f.split(": ", 1)[1] for f in findings if not f.startswith("run/")] == ["the private path of sources[0] (run)"]
    assert str(bench) not in result.stderr


def test_allow_list_passes_a_generic_home_path(bench, make_files, write_kit, cli):
    make_files(bench, {"src": {"env.json": '{"python": "/home/shared/py311/bin/python"}\n'}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], allow=[{"text": "/home/shared/py311", "why": "a shared interpreter"}])
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert (bench / "kit/run/env.json").read_bytes() == (bench / "src/env.json").read_bytes()


def test_a_private_path_with_json_escaped_slashes_is_found():
    private = {"/x/ls-2026-11-07": "the private path of sources[0] (run)"}
    assert findings(b'{"p": "\\/x\\/ls-2026-11-07\\/a"}\n', private) == ["run/x.json:1:8: the private path of sources[0] (run)"]


_IP_PIECES = [b"10.", b"172.", b"192.168.", b"0", b"1", b"16", b"255", b"256", b".", b"a", b"-", b"\n", b" ", b"rows-0"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_IP_PIECES), max_size=30).map(b"".join))
@example(b"10.0.0.1")
@example(b"rows-010.ndjson 0.9210. 10.1.2.3\n172.16.0.1")
def test_the_anchor_guards_rule_out_only_what_the_shape_refuses(data: bytes) -> None:
    # The guards skip the shape's pattern where its lookbehind or first step would fail: the
    # matches are those of the pattern tried at every anchor.
    from kitbuild import leaks
    from kitbuild.filescan import LEAK_SHAPES

    shapes = [(what, shape) for _, what, shape in LEAK_SHAPES if "IPv4" in what]
    guarded = leaks.ShapeFinder(shapes)
    with patch.object(leaks, "SHAPE_GUARDS", {}):
        everywhere = leaks.ShapeFinder(shapes)
    assert guarded.find(data) == everywhere.find(data) == [(m.start(), m.end(), 0) for m in re.finditer(shapes[0][1], data)]


_MIXED_PIECES = [*_IP_PIECES, b"\0", b"/home/", b"\\/home\\/", b"/root/", b"/mnt/", b"/ro", b"ws-", b"C:\\Users\\", b"file://", b"x", b"/", b"bob", b"\\"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_MIXED_PIECES), max_size=40).map(b"".join))
@example(b"/home/root/10.1.2.3/mnt/x")
@example(b"10.0.0.1 /root/10.2.3.4")
def test_anchors_found_and_guarded_in_one_compiled_call_give_the_automatons_matches(data: bytes) -> None:
    # With the compiled scans the anchors are found, chosen and guarded by leftmost_starts;
    # without, by the automaton and the guards here: every shape's matches are the same.
    from kitbuild import leaks
    from kitbuild.filescan import LEAK_SHAPES

    shapes = [(what, shape) for _, what, shape in LEAK_SHAPES if "e-mail" not in what]
    compiled = leaks.ShapeFinder(shapes)
    with patch.object(leaks, "COMPILED", False):
        automaton = leaks.ShapeFinder(shapes)
    assert automaton._compiled is None
    assert (compiled._compiled is not None) == leaks.COMPILED
    assert compiled.find(data) == automaton.find(data)
    assert compiled.find(bytearray(data)) == automaton.find(data)


def test_a_window_of_binary_bytes_leaves_its_anchors_to_the_automaton(monkeypatch: pytest.MonkeyPatch) -> None:
    from kitbuild import leaks
    from kitbuild.filescan import LEAK_SHAPES

    shapes = [(what, shape) for _, what, shape in LEAK_SHAPES if "e-mail" not in what]
    finder = leaks.ShapeFinder(shapes)
    if finder._compiled is None:
        pytest.skip("the compiled scans do not run here")
    calls: list[int] = []
    leftmost = leaks.leftmost_starts
    monkeypatch.setattr(leaks, "leftmost_starts", lambda data, *rest: calls.append(len(data)) or leftmost(data, *rest))
    text, binary = b"read /home/bob/x at 10.1.2.3\n", b"\0\1read /home/bob/x at 10.1.2.3\n"
    assert [what for _, _, what in finder.find(text)] == [0, len(shapes) - 1]
    assert [what for _, _, what in finder.find(binary)] == [0, len(shapes) - 1]
    assert calls == [len(text)]
