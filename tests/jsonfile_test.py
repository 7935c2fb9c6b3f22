"""index.json and croissant.json are written, compared and parsed a block of their long list at a
time (kitbuild/jsonfile.py): the bytes must be exactly one dump of the whole document, and a parse
in pieces must give exactly what a parse of the whole gives, whatever the bytes hold."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import hypothesis.strategies as st
import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from kitbuild import jsonfile
from kitbuild.jsonfile import dump_json, dump_json_pieces, load_json_pieces, same_bytes

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Text that looks like the layout: line ends, indents, commas, quotes, the marker's NULs, brackets.
TEXT = st.lists(st.sampled_from(list('ab\n ,"\\[]{}:\u0000é\u2028') + ["    ", ",\n    "]), max_size=8).map("".join)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    """A mapping holding the long list under "files", among other keys, before and after it."""
    before = draw(st.dictionaries(TEXT.filter(lambda k: k != "files"), VALUES, max_size=3))
    after = draw(st.dictionaries(TEXT.filter(lambda k: k != "files" and k not in before), VALUES, max_size=3))
    return {**before, "files": draw(st.lists(VALUES, max_size=9)), **after}


@contextlib.contextmanager
def small_blocks() -> Iterator[None]:
    """Batches of 2 items and parse cuts of 8 bytes: every example crosses many of them."""
    saved = jsonfile._BATCH, jsonfile._CUT
    jsonfile._BATCH, jsonfile._CUT = 2, 8
    try:
        yield
    finally:
        jsonfile._BATCH, jsonfile._CUT = saved


@PROPERTY
@given(documents())
def test_the_pieces_are_one_dump_of_the_whole_and_parse_back_to_it(doc):
    with small_blocks():
        whole = dump_json(doc)
        assert b"".join(dump_json_pieces(doc, "files")) == whole
        assert same_bytes(whole, dump_json_pieces(doc, "files"))
        assert load_json_pieces(whole, "files") == (orjson.loads(whole), True)


RESPELLINGS = {
    "compact": lambda doc, data: orjson.dumps(doc) + b"\n",
    "keys sorted": lambda doc, data: orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n",
    "indent 4": lambda doc, data: data.replace(b"\n  ", b"\n    "),
    "one line joined": lambda doc, data: data.replace(b",\n    ", b", ", 1),
    "no final newline": lambda doc, data: data[:-1],
}


@PROPERTY
@given(documents(), st.sampled_from(sorted(RESPELLINGS)), st.data())
def test_any_other_bytes_parse_as_a_whole_parse_does_and_are_not_called_laid_out(doc, how, data):
    whole = dump_json(doc)
    respelled = RESPELLINGS[how](doc, whole)
    # ...and bytes cut, doubled or changed anywhere (a hostile index.json is not valid JSON, or is
    # another document, or the same one laid out otherwise).
    at = data.draw(st.integers(0, len(respelled)))
    respelled = data.draw(st.sampled_from([respelled, respelled[:at] + respelled[at + 1 :], respelled[:at] + respelled[at:][:1] * 2 + respelled[at + 1 :], respelled[:at] + b"]" + respelled[at:]]))
    with small_blocks():
        try:
            want: Any = orjson.loads(respelled)
        except orjson.JSONDecodeError:
            with pytest.raises(orjson.JSONDecodeError):
                load_json_pieces(respelled, "files")
            return
        document, laid_out = load_json_pieces(respelled, "files")
    assert document == want
    # True only for the bytes dump_json writes; False means "not known", and is known wherever
    # there is a long list to parse in pieces (kitbuild.kitdocs compares the rest whole).
    if laid_out or (type(want) is dict and type(want.get("files")) is list):
        assert laid_out == (respelled == _dump_or_none(want))


def _dump_or_none(doc: Any) -> bytes | None:
    try:
        return dump_json(doc)
    except orjson.JSONEncodeError:
        return None


def test_a_list_of_many_thousands_crosses_the_real_batch_and_cut():
    doc = {"kit": "k", "files": [{"path": f"r/{i:06}.json", "size": i, "sha256": f"{i:064x}"} for i in range(25_000)], "provenance": {"size": 1}}
    whole = dump_json(doc)
    assert len(whole) > 3 * jsonfile._CUT and len(doc["files"]) > 3 * jsonfile._BATCH
    pieces = list(dump_json_pieces(doc, "files"))
    assert b"".join(pieces) == whole and max(map(len, pieces)) < len(whole) // 3
    assert load_json_pieces(whole, "files") == (doc, True)


def test_an_item_nested_past_orjsons_depth_is_not_laid_out_as_kitbuild_writes_it():
    # orjson dumps at most 254 levels: nested in the whole document, an item that dumps alone is
    # too deep, and the pieces must say so as the whole does, not call the bytes laid out.
    deep: Any = 0
    for _ in range(253):
        deep = [deep]
    data = b'{\n  "files": [\n    ' + orjson.dumps(deep) + b"\n  ]\n}\n"
    assert load_json_pieces(data, "files") == (orjson.loads(data), False)
