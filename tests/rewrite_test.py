"""What each matcher rewrites, and how a replacement is made safe for its file's format (issue 2, points 1, 2, 5)."""

from __future__ import annotations

import functools
import json
import re
import urllib.parse

import pytest
import regex as regexlib
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kitbuild.digests import printed_digests
from kitbuild.errors import UnsafeRewriteError
from kitbuild.fileformat import format_of
from kitbuild.matchers import NAME_BEFORE, NAME_END, PATH_BEFORE, PATH_END, Matcher
from kitbuild.rewrite import Event, Rewriter
from kitbuild.rules import builtin_rule

SOURCE = "/x/ls-2026-11-07"
AS = "learned-sparse-2026-11-07"


def path_matcher(map_=None, sources=None):
    params = {"map": map_} if map_ else {}
    return builtin_rule("record-path-to-kit-path").matcher(params, sources if sources is not None else {SOURCE: AS})


def names_matcher(names, fields=None):
    params = {"names": names, **({"fields": fields} if fields else {})}
    return builtin_rule("box-name-to-role").matcher(params)


def rewrite(kit_path, text, *matchers):
    rewriter = Rewriter(kit_path, list(matchers))
    out = rewriter.feed(text.encode("utf-8")).decode("utf-8")
    return out, rewriter.counts


def rewrite_bytes(data, matcher, kit_path="a.txt"):
    rewriter = Rewriter(kit_path, [matcher])
    return rewriter.feed(data), rewriter.counts[0]


# -- record-path-to-kit-path -------------------------------------------------------------------


@pytest.mark.parametrize(
    "before, after, n",
    [
        ("/x/ls-2026-11-07/a", "learned-sparse-2026-11-07/a", 1),
        ("/x/ls-2026-11-07", "learned-sparse-2026-11-07", 1),  # at the end of the value
        ('{"p": "/x/ls-2026-11-07"}', '{"p": "learned-sparse-2026-11-07"}', 1),  # at the end of a JSON string
        ("/x/ls-2026-11-07/full-s1/run/rows.ndjson", "learned-sparse-2026-11-07/full-s1/run/rows.ndjson", 1),
        ("/x/ls-2026-11-07-smoke/a", "/x/ls-2026-11-07-smoke/a", 0),
        ("/x/ls-2026-11-07.bak/a", "/x/ls-2026-11-07.bak/a", 0),
        ("/x/ls-2026-11-070/a", "/x/ls-2026-11-070/a", 0),
        ("/y/x/ls-2026-11-07/a", "/y/x/ls-2026-11-07/a", 0),  # the tail of a longer path
        ("a /x/ls-2026-11-07/a and /x/ls-2026-11-07/b", "a learned-sparse-2026-11-07/a and learned-sparse-2026-11-07/b", 2),
    ],
)
def test_path_prefix_only_at_a_path_boundary(before, after, n):
    assert rewrite("notes.txt", before, path_matcher()) == (after, [n])


def test_longest_prefix_wins_and_the_rest_of_the_path_is_kept():
    m = path_matcher({"/scratch/u7/runs/lme": "lme", "/scratch/u7/runs/lme/a0": "lme/bm25"})
    text = "/scratch/u7/runs/lme/a0/run/rows.ndjson /scratch/u7/runs/lme/a01/x /scratch/u7/runs/lme/w7/y\n"
    assert rewrite("notes.txt", text, m) == ("lme/bm25/run/rows.ndjson lme/a01/x lme/w7/y\n", [3])


def test_map_and_sources_together_and_a_trailing_slash_in_map_is_ignored():
    m = path_matcher({"/old/place/": "old"})
    assert rewrite("a.txt", "/old/place/f /x/ls-2026-11-07/g", m) == ("old/f learned-sparse-2026-11-07/g", [2])


# -- box-name-to-role --------------------------------------------------------------------------

NAMES = {"gpu-b17.cluster.example.net": "desktop", "gpu-b17": "desktop"}


@pytest.mark.parametrize(
    "before, after, n",
    [
        ("gpu-b17", "desktop", 1),
        ("ran on gpu-b17.", "ran on desktop.", 1),  # a full stop that ends a sentence is not a label
        ("gpu-b17.cluster.example.net", "desktop", 1),  # the full name fires once
        ("gpu-b17:8080 user@gpu-b17", "desktop:8080 user@desktop", 2),
        ("gpu-b170", "gpu-b170", 0),
        ("xgpu-b17", "xgpu-b17", 0),
        ("gpu-b17-old", "gpu-b17-old", 0),
        ("gpu-b17.other.net", "gpu-b17.other.net", 0),
        ("gpu-b17.cluster.example.network", "gpu-b17.cluster.example.network", 0),
    ],
)
def test_box_names_whole_names_only_leftmost_longest(before, after, n):
    assert rewrite("notes.txt", before, names_matcher(NAMES)) == (after, [n])


def test_fields_json():
    text = '{"route": "gpu-b17", "card": "gpu-b17", "routes": ["x", "gpu-b17"]}\n'
    out, counts = rewrite("lock.json", text, names_matcher(NAMES, ["route", "routes"]))
    assert out == '{"route": "desktop", "card": "gpu-b17", "routes": ["x", "desktop"]}\n'
    assert counts == [2]


def test_fields_ndjson_every_line():
    text = '{"route": "gpu-b17", "note": "gpu-b17"}\n{"note": "gpu-b17", "route": "a gpu-b17 b"}\n'
    out, counts = rewrite("rows.ndjson", text, names_matcher(NAMES, ["route"]))
    assert out == '{"route": "desktop", "note": "gpu-b17"}\n{"note": "gpu-b17", "route": "a desktop b"}\n'
    assert counts == [2]


def test_fields_yaml():
    text = "route: gpu-b17\ncard: gpu-b17\nlegs:\n  - route: gpu-b17.cluster.example.net\n"
    out, counts = rewrite("lock.yaml", text, names_matcher(NAMES, ["route"]))
    assert out == "route: desktop\ncard: gpu-b17\nlegs:\n  - route: desktop\n"
    assert counts == [1 + 1]


def test_fields_tsv_columns_header_in_an_earlier_chunk():
    rewriter = Rewriter("hosts.tsv", [names_matcher(NAMES, ["route"])])
    first = rewriter.feed(b"qid\troute\tnote\r\n")
    second = rewriter.feed(b"q1\tgpu-b17\tgpu-b17\r\nq2\tgpu-b170\tx\r\n")
    assert first + second == b"qid\troute\tnote\r\nq1\tdesktop\tgpu-b17\r\nq2\tgpu-b170\tx\r\n"
    assert rewriter.counts == [1]


def test_fields_never_fire_in_a_text_file():
    assert rewrite("notes.txt", "route: gpu-b17\n", names_matcher(NAMES, ["route"])) == ("route: gpu-b17\n", [0])
    assert rewrite("notes.txt", '{"route": "gpu-b17"}', names_matcher(NAMES, ["route"])) == ('{"route": "gpu-b17"}', [0])


@pytest.mark.parametrize(
    "path, fmt",
    [("a.json", "json"), ("a.ndjson", "ndjson"), ("a.jsonl", "ndjson"), ("a.YAML", "yaml"), ("a.yml", "yaml"),
     ("a.tsv", "tsv"), ("a.txt", "text"), ("d.json/readme", "text"), ("noext", "text")],
)
def test_format_of(path, fmt):
    assert format_of(path) == fmt


# -- escaping and unsafe replacements ----------------------------------------------------------


def regex(pattern, replace):
    return Matcher("regex", pattern=pattern, replace=replace)


def test_json_replacement_with_a_quote_and_backslash_is_escaped():
    # The regex template '\\\\' expands to one backslash.
    m = regex(r"SECRET", 'say "hi" \\\\ now')
    for path in ("a.json", "a.ndjson"):
        out, counts = rewrite(path, '{"k": "x SECRET y"}\n', m)
        assert out == '{"k": "x say \\"hi\\" \\\\ now y"}\n'
        assert json.loads(out) == {"k": 'x say "hi" \\ now y'}
        assert counts == [1]


def test_json_replacement_with_a_line_break_is_escaped():
    out, _ = rewrite("a.json", '["SECRET"]', regex("SECRET", "two\nlines"))
    assert json.loads(out) == ["two\nlines"]


@pytest.mark.parametrize(
    "path, text, replace, where",
    [
        ("cfg/lock.yaml", "a: 1\nb: x SECRET\n", "k: v", "cfg/lock.yaml:2:6"),
        ("cfg/lock.yaml", "a: 1\nb: SECRET\n", "# note", "cfg/lock.yaml:2:4"),
        ("rows.tsv", "q\tr\nq1\tSECRET\n", "a\tb", "rows.tsv:2:4"),
        ("rows.tsv", "q\tr\r\nq1\tSECRET\r\n", "a\r\nb", "rows.tsv:2:4"),
    ],
)
def test_unsafe_replacement_stops_with_kit_path_line_col(path, text, replace, where):
    with pytest.raises(UnsafeRewriteError) as err:
        rewrite(path, text, regex("SECRET", replace))
    assert str(err.value).startswith(f"{where}: a rule's replacement cannot be written safely here: ")
    assert err.value.exit_code == 1
    assert "SECRET" not in str(err.value)


def test_safe_yaml_and_tsv_replacements_pass():
    assert rewrite("a.yaml", "b: SECRET\n", regex("SECRET", "plain-word"))[0] == "b: plain-word\n"
    assert rewrite("a.tsv", "q\tr\nq1\tSECRET\n", regex("SECRET", "a b"))[0] == "q\tr\nq1\ta b\n"


def test_rules_run_in_config_order_on_one_chunk():
    # The first rule's output is the second's input.
    first, second = regex("A", "B"), regex("B", "C")
    assert rewrite("a.txt", "A B", first, second) == ("C C", [1, 2])
    assert rewrite("a.txt", "A B", second, first) == ("B C", [1, 1])


def test_a_rule_that_is_off_for_this_run_is_skipped():
    assert rewrite("a.txt", "A", None, regex("A", "B")) == ("B", [0, 1])


# -- property: JSON and NDJSON keep their structure --------------------------------------------

PRIVATE_FORMS = {
    "/x/ls-2026-11-07": "learned-sparse-2026-11-07",
    "/x/ls-2026-11-07/a/b.json": "learned-sparse-2026-11-07/a/b.json",
    "/x/ls-2026-11-07/q\"uo\\te": "learned-sparse-2026-11-07/q\"uo\\te",
    "/x/ls-2026-11-07-smoke/a": "/x/ls-2026-11-07-smoke/a",  # not at a boundary: stays
}
# Plain text that cannot itself spell the private prefix.
plain = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).filter(lambda s: "/x" not in s and "ls-2026" not in s)
token = st.sampled_from(sorted(PRIVATE_FORMS))


@st.composite
def strings_with_paths(draw):
    # Pieces joined by spaces, so a path always starts and ends at a boundary of its own.
    pieces = draw(st.lists(st.one_of(plain, token), max_size=5))
    return " ".join(pieces)


def expected(value):
    if isinstance(value, str):
        return " ".join(PRIVATE_FORMS.get(p, p) for p in value.split(" "))
    if isinstance(value, list):
        return [expected(v) for v in value]
    if isinstance(value, dict):
        return {k: expected(v) for k, v in value.items()}
    return value


json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | strings_with_paths(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(plain, children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=json_docs, indent=st.sampled_from([None, 2]), ascii_only=st.booleans())
def test_json_parses_to_the_same_structure_apart_from_rewritten_strings(doc, indent, ascii_only):
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    out, _ = rewrite("doc.json", text, path_matcher())
    assert json.loads(out) == expected(doc)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.dictionaries(plain, strings_with_paths(), max_size=3), min_size=1, max_size=4))
def test_ndjson_rows_parse_to_the_same_structure(rows):
    text = "".join(json.dumps(r) + "\n" for r in rows)
    out, _ = rewrite("rows.ndjson", text, path_matcher())
    assert [json.loads(line) for line in out.splitlines()] == expected(rows)


def test_yaml_parses_to_the_same_structure():
    doc = {"run": {"out": "/x/ls-2026-11-07/run", "inputs": ["/x/ls-2026-11-07/a.json", "/x/ls-2026-11-07-smoke/b"]},
           "root": "/x/ls-2026-11-07", "n": 3}
    text = yaml.safe_dump(doc, sort_keys=False)
    out, counts = rewrite("run.yaml", text, path_matcher())
    assert yaml.safe_load(out) == {
        "run": {"out": "learned-sparse-2026-11-07/run", "inputs": ["learned-sparse-2026-11-07/a.json", "/x/ls-2026-11-07-smoke/b"]},
        "root": "learned-sparse-2026-11-07", "n": 3}
    assert counts == [3]




# -- boundaries, at their edges ------------------------------------------------------------------

# Each literal alone, replaced by R: the start and end of the data, each side's byte classes
# (white space such as \v, separators, a byte past 0x7f) and a candidate that fails its boundary
# while a later one that overlaps it holds.
@pytest.mark.parametrize(
    ("primitive", "literal", "data", "out", "n"),
    [
        ("path_prefix", b"/x/ls", b"/x/ls", b"R", 1),
        ("path_prefix", b"/x/ls", b'/x/ls/a /x/ls\t/x/ls"', b'R/a R\tR"', 3),
        ("path_prefix", b"/x/ls", b"/y/x/ls a/x/ls ~/x/ls _/x/ls", b"/y/x/ls a/x/ls ~/x/ls _/x/ls", 0),
        ("path_prefix", b"/x/ls", b"/x/ls-smoke /x/ls.bak /x/ls0 /x/ls\xff /x/ls@", b"/x/ls-smoke /x/ls.bak /x/ls0 /x/ls\xff /x/ls@", 0),
        ("path_prefix", b"/x/ls", b"\n/x/ls\x0b(/x/ls) '/x/ls' [/x/ls]", b"\nR\x0b(R) 'R' [R]", 4),
        ("path_prefix", b"aa", b"/aa aaa", b"/aa aaa", 0),
        ("path_prefix", b"aa", b"aa/aa", b"R/aa", 1),
        ("path_prefix", b"a a", b".a a a/", b".a R/", 1),
        ("literal_names", b"gpu-b17", b"on gpu-b17. @gpu-b17:80 /gpu-b17/", b"on R. @R:80 /R/", 3),
        ("literal_names", b"gpu-b17", b"gpu-b170 xgpu-b17 .gpu-b17 gpu-b17.net gpu-b17-x", b"gpu-b170 xgpu-b17 .gpu-b17 gpu-b17.net gpu-b17-x", 0),
        # What the leak gate reads as the name too: '_' is no part of a host name, an escape's
        # letter no part of the name after it, and a full name may follow a '.' (its domain's host).
        ("literal_names", b"gpu-b17", b"host_gpu-b17_0 \\ngpu-b17 \x1b[1mgpu-b17 \\u001b[0;32mgpu-b17", b"host_R_0 \\nR \x1b[1mR \\u001b[0;32mR", 4),
        ("literal_names", b"b.example.net", b"a.b.example.net ab.example.net", b"a.R ab.example.net", 1),
        ("path_prefix", b"/x/ls", b"\\n/x/ls/a \x1b[2K/x/ls n/x/ls", b"\\nR/a \x1b[2KR n/x/ls", 2),
        ("path_prefix", b"/x/ls", b"?p=/x/ls&n=1 /x/ls#top /x/ls?v /x/ls+old", b"?p=R&n=1 R#top R?v /x/ls+old", 3),
        ("path_prefix", b"/x/ls", b"file:///x/ls/a FILE:///x/ls x/file:///x/ls file://h/x/ls", b"R/a R x/R file://h/x/ls", 3),
        # Its other spellings: JSON's escaped '/', and percent-encoded (in a URL's query).
        ("path_prefix", b"/x/ls", b'"\\/x\\/ls\\/a" ?p=%2Fx%2Fls%2Fa&q=%2fx%2fls %2Fx%2Fls0', b'"R\\/a" ?p=R%2Fa&q=R %2Fx%2Fls0', 3),
        # A space, punctuation or a symbol past ASCII ends it; a letter does not.
        ("path_prefix", b"/x/ls", "“/x/ls” /x/ls\u00a0x /x/ls→ /x/lsé".encode(), "“R” R\u00a0x R→ /x/lsé".encode(), 3),
        # After a JSON '\\u' escape of a character it may follow (as Python's json writes '“'), not of a letter.
        ("path_prefix", b"/x/ls", b"\\u201c/x/ls \\u0022/x/ls \\u0041/x/ls", b"\\u201cR \\u0022R \\u0041/x/ls", 2),
        ("literal_names", b"gpu-b17", b"\\u201cgpu-b17 \\u00e9gpu-b17 \\u0041gpu-b17", b"\\u201cR \\u00e9R \\u0041gpu-b17", 2),
        ("literal_names", b"gpu-b17", b"ran%20on%20gpu-b17 %2Fgpu-b17 %41gpu-b17 %E2%80%9Cgpu-b17", b"ran%20on%20R %2FR %41gpu-b17 %E2%80%9CR", 3),
        ("literal_names", b"gpu-b17", b"gpu-b17._ gpu-b17.", b"R._ R.", 2),
        ("literal_names", b"aa", b"aaa", b"aaa", 0),
        ("literal_names", b"a", b"-aa a", b"-aa R", 1),
        ("literal_names", b"a a", b"xa a a", b"xa R", 1),  # the 'a a' at 3 overlaps the failed one at 1
    ],
)
def test_a_literal_fires_only_at_its_boundary(primitive, literal, data, out, n):
    assert rewrite_bytes(data, Matcher(primitive, pairs={literal.decode(): "R"})) == (out, n)


def test_a_longer_name_that_fails_its_boundary_leaves_the_next_one_to_fire():
    m = Matcher("literal_names", pairs={"gpu-b17.cluster": "long", "gpu-b17": "short"})
    assert rewrite_bytes(b"gpu-b170 gpu-b17.clusterx gpu-b17", m) == (b"gpu-b170 gpu-b17.clusterx short", 1)
    assert rewrite_bytes(b"gpu-b17.cluster gpu-b17.cluster.x", m) == (b"long gpu-b17.cluster.x", 1)


def test_the_leftmost_name_wins_over_a_longer_one_that_starts_inside_it():
    m = Matcher("literal_names", pairs={"a b": "A", "b cc": "B"})
    assert rewrite_bytes(b"a b cc", m) == (b"A cc", 1)
    assert rewrite_bytes(b"x b cc", m) == (b"x B", 1)


def test_a_replacement_that_holds_a_name_is_not_replaced_again():
    m = Matcher("literal_names", pairs={"alias": "node-01 spare", "node-01": "n1"})
    assert rewrite_bytes(b"alias node-01", m) == (b"node-01 spare n1", 2)


def test_a_replacement_equal_to_its_text_is_no_firing():
    m = Matcher("literal_names", pairs={"desktop": "desktop", "gpu-b17": "desktop"})
    assert rewrite_bytes(b"desktop gpu-b17", m) == (b"desktop desktop", 1)


# Where a letter before a match ends an escape (shapes.escaped_before): a JSON escape's, or a
# terminal code's in any of the spellings a record gives it.
ESCAPED = rb"(?<=\\[nrtbf])|(?<=(?:\x1b|\\033|\\e|\\x1[bB]|\\u001[bB])\[[0-9;?]{0,22}[\x40-\x7e])"


# The rule as one regular expression, as its docs state it: the reference the matcher must give.
def regex_reference(primitive, pairs, data):
    pattern, spelt = _reference_pattern(primitive, tuple(sorted(pairs.items())))

    def written(match):
        text = match.group(0)
        return spelt[(text[7:] if text[:7].lower() == b"file://" else text).decode()].encode()

    return pattern.subn(written, data)


@functools.lru_cache(maxsize=None)
def _reference_pattern(primitive, items):
    """The reference's one regex, and each spelling's word: compiled once for each rule."""
    pairs = dict(items)
    before, end = (PATH_BEFORE, PATH_END) if primitive == "path_prefix" else (NAME_BEFORE, NAME_END)
    if primitive == "path_prefix":  # a path's other spellings: '/' JSON-escaped, and percent-encoded
        spelt = {}
        for key, word in pairs.items():
            encoded = urllib.parse.quote(key, safe="")
            for form in (key, key.replace("/", "\\/"), encoded, re.sub("%..", lambda m: m.group(0).lower(), encoded)):
                spelt[form] = word
        pairs = spelt

    def alternation(keys):
        return b"(?:" + b"|".join(regexlib.escape(k.encode()) for k in sorted(keys, key=lambda k: (-len(k), k))) + b")"

    # Where a match may start: no BEFORE byte, or after an escape: a letter's (ESCAPED), or a JSON
    # '\\uXXXX' or a URL's '%XX' of a character past ASCII or not in BEFORE.
    free = [b"%04x" % c for c in range(128) if not re.match(before, bytes([c]))]
    start = b"(?:(?<!" + before + b")|" + ESCAPED + b"|(?<=\\\\u(?i:00[89a-f][0-9a-f]|0[1-9a-f][0-9a-f]{2}|[1-9a-f][0-9a-f]{3}|" + b"|".join(free) + b"))"
    start += b"|(?<=%(?i:[89a-f][0-9a-f]|" + b"|".join(f[2:] for f in free) + b")))"
    if primitive == "path_prefix":  # and a path in a file URL, the URL's scheme and all
        body = b"(?:(?i:file://)|" + start + b")" + alternation(pairs)
    else:  # and a full host name after a '.' (a host in its domain), where no other may start
        body = b"(?:" + start + alternation(pairs) + b"|(?<=\\.)" + alternation([k for k in pairs if "." in k]) + b")"
    return regexlib.compile(body + end), pairs


PATHS = {"/x/ls": "L", "/x/ls/a": "LA", "/scratch/u7": "old"}
BOXES = {"gpu-b17": "desktop", "gpu-b17.cluster.example.net": "desktop", "box": "laptop", "a b": "A", "b box": "B"}
# A thousand names that never occur, so that a rule with many names is checked too.
UNUSED = {f"node-{i:04d}.cluster.example.net": f"n{i % 7}" for i in range(1000)}
PIECES = ["/x/ls", "/a", "/x/ls/a", "-smoke", "/scratch/u7", "gpu-b17", ".cluster.example.net", "box", "a b", "b box",
          "0", ".", "-", "/", " ", '"', "\n", "x", ".x", "_", "~", "a", "\\n", "\\", "\x1b[1m", "\\033[0;", "m", "?", "&", "file://", "%2F", "%2fx%2fls", "\\/x\\/ls", "\\u201c", "\\u0041", "\\u0022", "\\u00E9", "%20", "%41", "%e2%80%9c"]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join).map(str.encode)


@pytest.mark.parametrize(("primitive", "pairs"), [
    ("path_prefix", PATHS), ("literal_names", BOXES), ("path_prefix", {**PATHS, **{"/" + k: v for k, v in UNUSED.items()}}),
    ("literal_names", {**BOXES, **UNUSED}),
])
@settings(max_examples=300, deadline=None)
@given(data=texts)
@example(data=b"a b box")
def test_literals_fire_leftmost_then_longest_at_their_boundaries(primitive, pairs, data):
    got = rewrite_bytes(data, Matcher(primitive, pairs=pairs))
    assert got == regex_reference(primitive, pairs, data)


# -- literal rules in formats that escape or refuse ----------------------------------------------


def test_a_names_role_is_written_json_escaped():
    m = names_matcher({"gpu-b17": 'desk "top" \\ x'})
    out, counts = rewrite("lock.json", '{"route": "gpu-b17", "note": "on gpu-b17"}', m)
    assert json.loads(out) == {"route": 'desk "top" \\ x', "note": 'on desk "top" \\ x'}
    assert counts == [2]
    m = names_matcher({"gpu-b17": 'desk "top"'}, ["route"])
    out, counts = rewrite("rows.ndjson", '{"route":"gpu-b17","note":"gpu-b17"}\n', m)
    assert out == '{"route":"desk \\"top\\"","note":"gpu-b17"}\n' and counts == [1]


@pytest.mark.parametrize(("path", "text", "role", "where"), [
    ("cfg/lock.yaml", "a: 1\nhost: gpu-b17\n", "k: v", "cfg/lock.yaml:2:7"),
    ("rows.tsv", "q\troute\nq1\tgpu-b17\n", "a\tb", "rows.tsv:2:4"),
])
def test_an_unsafe_role_stops_with_kit_path_line_col(path, text, role, where):
    with pytest.raises(UnsafeRewriteError) as err:
        rewrite(path, text, names_matcher({"gpu-b17": role}))
    assert str(err.value).startswith(f"{where}: a rule's replacement cannot be written safely here: ")
    assert "gpu-b17" not in str(err.value)


MANY = {**NAMES, **{f"node-{i:02d}": f"n{i % 3}" for i in range(20)}, "node-07.x": "seven"}


def test_field_scoped_names_in_compact_json_with_escapes_and_spaces():
    text = (
        '{"route":"node-07","host":"node-07.x","note":"node-07"}\n'
        '{"route":"x\\"node-01","host" : "node-011 node-02"}\n'
        '{"route":["node-03","gpu-b17.cluster.example.net"],"note":{"route":"node-04"}}\n'
    )
    out, counts = rewrite("rows.ndjson", text, names_matcher(MANY, ["route", "host"]))
    assert out == (
        '{"route":"n1","host":"seven","note":"node-07"}\n'
        '{"route":"x\\"n1","host" : "node-011 n2"}\n'
        '{"route":["n0","desktop"],"note":{"route":"n1"}}\n'
    )
    assert counts == [7]


# -- digests -----------------------------------------------------------------------------------

DIGEST = "0123456789abcdef" * 4


@pytest.mark.parametrize(("data", "found"), [
    (DIGEST, [(0, 64)]),
    (DIGEST[:63], []),  # one short
    ("g" + DIGEST + "A", []),  # 65 digits: no digest
    (" " + DIGEST.upper() + "\n", [(1, 65)]),
    ("sha256:" + DIGEST, [(0, 71)]),  # the prefix goes with it
    ("ha256:" + DIGEST, [(6, 70)]),
    (DIGEST + "g" + DIGEST[:-1] + " " + DIGEST, [(0, 64), (129, 193)]),
])
def test_printed_digests(data, found):
    assert printed_digests(data.encode()) == [(s, e, data[s:e].removeprefix("sha256:").lower()) for s, e in found]


def test_withheld_digests_either_case_with_their_prefix():
    m = Matcher("digest", placeholder="withheld", withheld=frozenset({DIGEST, "f" * 64, "a" * 64}))
    data = b"x sha256:" + DIGEST.upper().encode() + b" " + b"f" * 65 + b" " + b"A" * 32 + b"a" * 32
    assert m.digest_spans(data) == [(2, 73), (140, 204)]
    assert rewrite_bytes(data, m, "a.ndjson") == (b"x withheld " + b"f" * 65 + b" withheld", 2)


HEX = "0123456789abcdefABCDEF"
DIGESTS = ["a" * 64, "0123456789abcdef" * 4, "F" * 64]


@st.composite
def digest_texts(draw):
    pieces = [*DIGESTS, *(d.upper() for d in DIGESTS), "sha256:", "sha256", ":", " ", "\n", '"', "x", "0", "aB"]
    return "".join(draw(st.lists(st.sampled_from(pieces), max_size=20))).encode()


@settings(max_examples=400, deadline=None)
@given(digest_texts(), st.sets(st.sampled_from([d.lower() for d in DIGESTS])), st.sampled_from(["withheld", "a" * 64, "x" * 71]))
def test_withheld_digests_are_the_printed_digests_withheld(data, withheld, placeholder):
    m = Matcher("digest", placeholder=placeholder, withheld=frozenset(withheld))
    spans = [(s, e) for s, e, d in printed_digests(data) if d in withheld]
    assert m.digest_spans(data) == spans
    # Each is replaced by the placeholder, and counted unless it already read as the placeholder.
    out, last, fired = [], 0, 0
    for s, e in spans:
        out += [data[last:s], placeholder.encode()]
        last = e
        fired += data[s:e] != placeholder.encode()
    assert rewrite_bytes(data, m, "a.ndjson") == (b"".join(out) + data[last:], fired)


# -- a dry run ---------------------------------------------------------------------------------


def test_a_dry_run_keeps_each_firing_with_its_line_and_column_across_chunks():
    rewriter = Rewriter("rows.ndjson", [path_matcher(), names_matcher(NAMES, ["route"])], collect=True)
    first = rewriter.feed(b'{"route": "gpu-b17"}\n')
    second = rewriter.feed(b'{"p": "/x/ls-2026-11-07/a", "route": "x gpu-b17.cluster.example.net"}\n')
    assert first + second == b'{"route": "desktop"}\n{"p": "learned-sparse-2026-11-07/a", "route": "x desktop"}\n'
    assert rewriter.counts == [1, 2]
    assert rewriter.line == 3
    # A column is where the rule found the text: after the rules before it rewrote the line.
    assert rewriter.events == [
        Event(1, 1, 12, "gpu-b17", "desktop"),
        Event(0, 2, 8, "/x/ls-2026-11-07", "learned-sparse-2026-11-07"),
        Event(1, 2, 50, "gpu-b17.cluster.example.net", "desktop"),
    ]
