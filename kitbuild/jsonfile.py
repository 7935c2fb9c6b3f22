"""How kitbuild writes JSON: one fixed layout, so the same data always gives the same bytes."""

from __future__ import annotations

import itertools
import re
from typing import Any, Callable, Iterable, Iterator, Mapping

import orjson


def dump_json(data: Any) -> bytes:
    """Two-space indent, keys in the order built, a final newline."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"


# index.json and croissant.json of a kit of 100,000 files are 16 and 33 MB, nearly all of it one
# list. They are written, hashed, compared and parsed a block of that list at a time, never
# dumped whole beside their bytes, and never parsed whole (orjson's parse of 16 MB takes 26 MB
# more while it runs). The functions below keep the bytes exactly dump_json's.
_BATCH = 4096  # items dumped at once
_CUT = 1 << 20  # bytes of items parsed at once, about
# Where the long list goes while the rest is dumped. The split is on the key and this value as
# the layout writes them together: no text value can hold that (its quotes would be escaped).
_MARKER = "\u0000 the long list \u0000"
# A batch is dumped as the list it is, under one key of a mapping: at the same depth and with the
# same indent as in the whole (orjson limits the depth it dumps), between these two.
_OPEN, _CLOSE = len(b'{\n  "": ['), len(b"\n  ]\n}")


def _label(key: str) -> bytes:
    return b"\n  " + orjson.dumps(key) + b": "


def dump_json_pieces(data: Mapping[str, Any], key: str) -> Iterator[bytes]:
    """:func:`dump_json` of ``data``, a mapping whose ``data[key]`` is a list (or any iterable),
    in pieces of at most a few thousand of that list's items."""
    items = iter(data[key])
    head, tail = dump_json({**data, key: _MARKER}).split(_label(key) + orjson.dumps(_MARKER), 1)
    yield head + _label(key)
    first = True
    while batch := list(itertools.islice(items, _BATCH)):
        yield (b"[" if first else b",") + orjson.dumps({"": batch}, option=orjson.OPT_INDENT_2)[_OPEN:-_CLOSE]
        first = False
    yield b"[]" if first else b"\n  ]"
    yield tail


# Between two items of the long list: a comma, a line end and the items' indent (a deeper line
# has more; a text value holds no raw line end).
_ITEM_BREAK = re.compile(rb",\n {4}(?! )")


def load_json_pieces(data: bytes, key: str, each: Callable[[list[Any]], None] | None = None) -> tuple[Any, bool]:
    """``orjson.loads(data)``, and whether ``data`` is exactly what :func:`dump_json` writes for
    it (False: not known). Parsed a block of ``data[key]`` at a time when it is, ``each`` called
    on each block's items as they are parsed; otherwise whole (raising orjson.JSONDecodeError as
    that does)."""
    try:
        document = _load_in_pieces(data, key, each)
        # A split in the wrong place cannot give back these bytes: what does is what data holds.
        if document is not None and same_bytes(data, dump_json_pieces(document, key)):
            return document, True
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        pass
    return orjson.loads(data), False


def _load_in_pieces(data: bytes, key: str, each: Callable[[list[Any]], None] | None) -> Any:
    label = _label(key)
    start = data.find(label)
    if start < 0:
        return None
    start += len(label)
    items: list[Any] = []
    if data.startswith(b"[]", start):
        end = start + 2
    else:
        close = data.find(b"\n  ]", start)
        if not data.startswith(b"[\n    ", start) or close < 0:
            return None
        pos = start + 1
        while pos < close:
            cut = _ITEM_BREAK.search(data, pos + _CUT, close) if close - pos > _CUT else None
            stop = cut.start() if cut else close
            block = orjson.loads(b"[" + data[pos:stop] + b"]")
            if each is not None:
                each(block)
            items += block
            pos = stop + 1
        end = close + len(b"\n  ]")
    document = orjson.loads(data[:start] + b"null" + data[end:])
    if type(document) is not dict or key not in document or document[key] is not None:
        return None
    document[key] = items
    return document


def same_bytes(data: bytes, pieces: Iterable[bytes]) -> bool:
    """Whether ``pieces`` joined are exactly ``data`` (without joining them)."""
    view, at = memoryview(data), 0
    for piece in pieces:
        if view[at : at + len(piece)] != piece:
            return False
        at += len(piece)
    return at == len(data)
