"""What Python does in C for a template, in one step the sandbox's clock cannot stop, measured
before the step is taken (:mod:`kitbuild.pages.sandbox` holds the other limits).

A comparison, a sort or a dict lookup walks its values to the bottom: a list that holds one list
twice, forty times over (``{% set ns.a = [ns.a, ns.a] %}`` in a loop), is a few hundred bytes
that ``ns.a == ns.b`` walks 2**40 times. And ``wordwrap`` cuts a long word by copying what is left
of it at each cut, so a word of a million letters cut at width 1 takes ten minutes.
"""

from __future__ import annotations

import math
import re
from typing import Any

import jinja2

_CONTAINERS = (list, tuple, dict, set, frozenset)
# Items one comparison, sort or lookup may walk, a list held twice counted twice: a kit of
# 100,000 files is 700,000 of them (each entry, its keys and values), walked in a fifth of a
# second; past this many, about a second and a half.
MAX_WALK = 4 << 20
# What the wrapping of one text may cost: the sum, over the runs of letters (or of spaces) longer
# than a line, of the run's length squared over the line's width; about a fifth of a second.
MAX_WRAP = 1 << 30
# Runs up to this long cost wordwrap little whatever the width (64 * 64 at most each).
_SHORT_RUN = 64


class _Refused(jinja2.TemplateError):
    """A template went past a limit; the message says which, and what to do. (A jinja2 error, so
    that whoever renders a text with :func:`bounded_environment` reports it as jinja2's own.)"""


def walked(value: Any, limit: int = MAX_WALK) -> int:
    """How many items a comparison of ``value`` may walk, counted only until past ``limit``."""
    if not isinstance(value, _CONTAINERS):
        return 1
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        total += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, _CONTAINERS):
            stack.extend(item)
    return total


def check_walk(value: Any, what: str) -> Any:
    """``value``, once it is known that ``what`` (a comparison, a sort, a lookup) walks few enough items."""
    if isinstance(value, _CONTAINERS) and walked(value) > MAX_WALK:
        raise _Refused(
            f"{what} would walk more than {MAX_WALK:,} items of a list or dict (each time a list holds another, "
            "its items again), the limit for one step; compare or look up smaller values"
        )
    return value


def check_wrap(text: str, width: Any, break_long_words: Any = True) -> None:
    """Refuses a ``wordwrap`` whose cutting of long words (or runs of spaces) would cost more than MAX_WRAP."""
    if not break_long_words or not isinstance(width, int) or width < 1:
        return  # (a word longer than a line then stays whole; a bad width is textwrap's own error)
    shortest = max(width, _SHORT_RUN) + 1
    if len(text) < shortest:
        return
    # (A run is matched from its start only, so the search is one pass over the text.)
    runs = re.compile(r"(?<!\S)\S{%d,}|(?<!\s)\s{%d,}" % (shortest, shortest))
    cost = 0
    for run in runs.finditer(text):
        cost += (run.end() - run.start()) ** 2 // width
        if cost > MAX_WRAP:
            longest = math.isqrt(MAX_WRAP * width)
            raise _Refused(
                f"the filter 'wordwrap' would cut too many long words (or runs of spaces) into lines of {width}: the time it takes "
                f"grows as the square of a word's length, and one word of {longest:,} characters is the most it may cut at this width; "
                "wrap text with shorter words, or wider lines"
            )
