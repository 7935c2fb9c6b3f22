"""Which escapes found in binary data need a view of their own (kitbuild.leaks).

Random bytes hold a '%4F', a '\\/' or a '&#5' every few tens of kilobytes. Each was decoded as a
view of 16 KiB and its text near the escape searched: a quarter of a binary scan's time (0.86 ms
a MiB of random bytes with a view each, 0.66 sieved so). A view finds what the raw data does not
only where a pattern of the search (an anchor, a literal, a base64 core) overlaps a character an
escape decodes, or lies in the raw bytes between escapes, where the raw scan has found it
already. So the raw scan's hits near a stretch keep its view, and each escape with no other of
its kind within reach is decoded where it stands, with as many raw bytes either side as the
longest pattern has: that snippet holds every pattern that can overlap the decoded character.
All of a window's snippets are searched in one hyperscan scan, and a stretch none of whose
snippets holds a hit needs no view: its view would find nothing.
"""

from __future__ import annotations

import bisect
from typing import Callable

from kitbuild.leakpass import Pass
from kitbuild.leakviews import ESCAPE_FINDS, ESCAPES, LONGEST_ESCAPE, stretches

__all__ = ["sieve"]

# The most raw bytes one escape of any kind can span: a numeric character reference padded with
# zeros, a named one, a surrogate pair, a character percent-encoded five times.
_WIDEST = max(length for _, length in ESCAPE_FINDS) + LONGEST_ESCAPE
_GAP = b"\n"  # between snippets: a hit across it only keeps both snippets' stretches


def sieve(data: bytes, escapes: list[list[tuple[int, int]]], search: Pass, raw_hits: list[int], quiet: Callable[[int], bool]) -> list[list[tuple[int, int]]]:
    """The spans of ``escapes`` (per kind of ESCAPES, as Pass.find gives them for ``data``)
    whose views can find something: those of each stretch (see leakviews.views) near a start
    of ``raw_hits`` (where the raw scan found a pattern), with an escape too near another to be
    read alone, or with one whose snippet holds a hit of ``search`` (a base64 core ``quiet``
    says makes no finding does not count)."""
    longest = max([*search.lengths, *search.encoded_lengths], default=0)
    reach = longest + _WIDEST
    hits = sorted(raw_hits)
    # Per kind, each stretch's spans and whether its view is needed (None: a snippet decides).
    decided: list[list[tuple[list[tuple[int, int]], bool | None]]] = []
    snippets: list[bytes] = []
    owners: list[tuple[int, int]] = []  # (kind, stretch) of each snippet
    for kind, ((pattern, decode), spans) in enumerate(zip(ESCAPES, escapes)):
        decided.append([])
        for first, last, inside in stretches(data, spans) if spans else ():
            near = bisect.bisect_left(hits, first - longest)
            if near < len(hits) and hits[near] <= last + longest or any(b[0] - a[1] <= reach for a, b in zip(inside, inside[1:])):
                decided[kind].append((inside, True))
                continue
            decided[kind].append((inside, None))
            for start, end in inside:
                # The escape the view decodes at this span (leakviews._at_spans), if any.
                m = pattern.search(data, start, min(len(data), end + LONGEST_ESCAPE))
                if m is not None and m.start() < end:
                    snippets.append(data[max(0, m.start() - longest) : m.start()] + decode(m) + data[m.end() : m.end() + longest])
                    owners.append((kind, len(decided[kind]) - 1))
    if snippets:
        text = _GAP.join(snippets)
        starts = [0]
        for snippet in snippets[:-1]:
            starts.append(starts[-1] + len(snippet) + len(_GAP))
        anchors, literals, _, _, encoded = search.find(text, 0, len(text))
        found = [(s, s + search.lengths[i]) for i, s in anchors] + literals
        found += [(s, s + search.encoded_lengths[i]) for i, s in encoded if not quiet(i)]
        for start, end in found:
            for j in range(max(0, bisect.bisect_right(starts, start) - 1), bisect.bisect_left(starts, end)):
                kind, at = owners[j]
                decided[kind][at] = (decided[kind][at][0], True)
    return [[span for inside, needed in stretches_of_kind if needed for span in inside] for stretches_of_kind in decided]
