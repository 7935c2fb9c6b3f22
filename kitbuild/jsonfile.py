"""How kitbuild writes JSON: one fixed layout, so the same data always gives the same bytes."""

from __future__ import annotations

from typing import Any

import orjson


def dump_json(data: Any) -> bytes:
    """Two-space indent, keys in the order built, a final newline."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
