"""Where digests and the marks beside them are found in data (kitbuild.digests)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kitbuild.digests import DIGEST_LENGTH, MARKS, digest_starts, find_from

HEX = "0123456789abcdef" * 4
PIECES = [HEX, HEX.upper(), "f" * 70, "sha256-", "sha256=", "sha256:", "sha256", "\\", "\\\\", "x", " ", "\n", "ab"]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=40), start=st.integers(0, 400), length=st.integers(0, 400))
def test_one_scan_finds_the_digests_and_the_first_of_each_mark(pieces, start, length):
    data = "".join(pieces).encode()
    exact, longer, firsts = digest_starts(data)
    runs = [(m.start(), m.end() - m.start()) for m in re.finditer(rb"[0-9A-Fa-f]{64,}", data)]
    assert exact == [a for a, n in runs if n == DIGEST_LENGTH]
    assert longer == [a for a, n in runs if n != DIGEST_LENGTH]
    assert firsts == [data.find(m) for m in MARKS]
    # Given the first of a mark, or not, the search from anywhere finds what bytes.find does.
    end = start + length
    for mark, first in zip(MARKS, firsts):
        assert find_from(data, mark, first, start, end) == data.find(mark, start, end)
        assert find_from(data, mark, None, start, end) == data.find(mark, start, end)
