"""What each matcher rewrites, and how a replacement is made safe for its file's format (issue 2, points 1, 2, 5)."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kitbuild.digests import printed_digests
from kitbuild.errors import UnsafeRewriteError
from kitbuild.matchers import Matcher
from kitbuild.fileformat import format_of
from kitbuild.rewrite import Rewriter
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
