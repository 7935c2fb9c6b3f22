"""The byte scans on the hot path, compiled where a C compiler was at hand when kitbuild was installed.

Each function has a pure-Python twin here that gives the same answer, and tests hold the two to
it (``tests/speedups_test.py``); the compiled module (``kitbuild/_speedups.c``) only makes the
answer cheaper. An install without a C compiler runs the twins: slower, never different.

``KITBUILD_PURE_PYTHON=1`` in the environment makes kitbuild use the twins even where the
compiled module exists (to compare the two, or to rule the C code out of a problem).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Callable

# Bytes a scan searches: a file's block, or the window a streaming scan keeps in a bytearray.
Data = bytes | bytearray
DIGEST_LENGTH = 64
PREFIX = b"sha256:"  # what a record may print before a digest
MAX_NEEDLES = 16
_HEX = frozenset(b"0123456789abcdefABCDEF")
_TABLE = bytes(0x78 if i in _HEX else 0x20 for i in range(256))
_RUN = b"x" * DIGEST_LENGTH
# What follows the '@' of every e-mail address a leak shape matches (see kitbuild.leaks).
EMAIL_DOMAIN = re.compile(rb"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")

# The boundaries a literal rule's match must stand at (see kitbuild.matchers), as regex pieces:
# the byte before a match must not be in the BEFORE class (nothing before it is fine), and the
# END lookahead must hold after it. _speedups.c tests the same classes byte by byte.
BOUNDARY_NONE, BOUNDARY_PATH, BOUNDARY_NAME = 0, 1, 2
# Before a path: anything that would make the match the tail of a longer path.
PATH_BEFORE = rb"[A-Za-z0-9_.~/-]"
# After a path prefix: a '/', the end, or a character that cannot continue a file name in a
# record (white space, quotes, separators).
PATH_END = rb"(?=[/\s\"'`,;:()\[\]{}<>|\\]|\Z)"
NAME_BEFORE = rb"[A-Za-z0-9_.-]"
# A host name ends where no further label follows: 'gpu-b17' must not fire inside 'gpu-b170',
# nor in 'gpu-b17.other.net', but does fire before a full stop that ends a sentence.
NAME_END = rb"(?![A-Za-z0-9_-]|\.[A-Za-z0-9])"
_BOUNDARIES = {BOUNDARY_PATH: (PATH_BEFORE, PATH_END), BOUNDARY_NAME: (NAME_BEFORE, NAME_END)}


def py_hex_runs(data: Data) -> list[tuple[int, int]]:
    """(start, end) of every run of at least 64 hex digits, in order.

    One ``bytes.translate`` maps every hex digit to ``x`` and everything else to a space, and
    ``bytes.find`` jumps from one run of 64 ``x`` to the next.
    """
    mask = data.translate(_TABLE)
    runs: list[tuple[int, int]] = []
    pos = 0
    while True:
        start = mask.find(_RUN, pos)
        if start < 0:
            return runs
        end = mask.find(b" ", start + DIGEST_LENGTH)
        if end < 0:
            end = len(mask)
        runs.append((start, end))
        pos = end


def py_count_starts(data: Data, needles: tuple[bytes, ...], start: int, stop: int) -> list[int]:
    """For each needle apart, its non-overlapping occurrences (found from the left) that start in ``data[start:stop]``."""
    if len(needles) > MAX_NEEDLES:
        raise ValueError(f"at most {MAX_NEEDLES} needles")
    lo, hi, _ = slice(start, stop).indices(len(data))
    if hi <= lo:
        return [0] * len(needles)
    return [data.count(n, lo, hi + len(n) - 1) for n in needles]


def py_find_starts(data: Data, needles: tuple[bytes, ...], start: int, stop: int) -> list[tuple[int, int]]:
    """(offset, needle index) of every occurrence of every needle, overlapping ones too, that lies
    wholly in ``data[start:stop]``; sorted by offset, then by index."""
    if len(needles) > MAX_NEEDLES:
        raise ValueError(f"at most {MAX_NEEDLES} needles")
    if not all(needles):
        raise ValueError("each needle must be non-empty bytes")
    lo, hi, _ = slice(start, stop).indices(len(data))
    found = []
    for k, n in enumerate(needles):
        at = data.find(n, lo, hi)
        while at >= 0:
            found.append((at, k))
            at = data.find(n, at + 1, hi)
    found.sort()
    return found


def py_leftmost_starts(data: Data, needles: tuple[bytes, ...], guards: tuple[tuple[bytes, bytes] | None, ...]) -> list[tuple[int, int]]:
    """(offset, needle index) of the occurrences a leftmost-first search gives over all of
    ``data`` (none overlapping one taken before it; at one offset, the needle listed first), less
    those their needle's guard refuses: a guard (before, after) keeps an occurrence only where no
    byte of ``before`` precedes it and a byte of ``after`` follows it."""
    if len(guards) != len(needles):
        raise ValueError("one guard (or None) for each needle")
    n = len(data)
    out = []
    taken_to = -1
    for at, k in py_find_starts(data, needles, 0, n):
        if at < taken_to:
            continue
        end = taken_to = at + len(needles[k])
        guard = guards[k]
        if guard is not None and ((at > 0 and data[at - 1] in guard[0]) or end >= n or data[end] not in guard[1]):
            continue
        out.append((at, k))
    return out


def py_email_ats(data: Data, start: int, end: int) -> list[int]:
    """Offsets of each '@' in ``data[start:end]`` that :data:`EMAIL_DOMAIN` matches at (it may run past ``end``)."""
    lo, hi, _ = slice(start, end).indices(len(data))
    out = []
    for m in EMAIL_DOMAIN.finditer(data, lo):
        if m.start() >= hi:
            break
        out.append(m.start())
    return out


def py_record_walk(
    data: Data, counted: tuple[bytes, ...], anchors: tuple[bytes, ...], guards: tuple[tuple[bytes, bytes] | None, ...], counts: dict[bytes, list[int]]
) -> tuple[list[int], list[int], list[tuple[int, int]], list[int]]:
    """What ``census(data, 0, len(data), 0, counts)``, ``count_starts(data, counted, 0,
    len(data))``, ``leftmost_starts(data, anchors, guards)`` and ``email_ats(data, 0, len(data))``
    give, together: everything verify searches a record read whole for, which the compiled module
    finds in one walk over the data."""
    n = len(data)
    # The census last: a refusal (of the needles or the guards) leaves the counts as they were.
    counted_found = py_count_starts(data, counted, 0, n)
    leftmost = py_leftmost_starts(data, anchors, guards)
    return py_census(data, 0, n, 0, counts), counted_found, leftmost, py_email_ats(data, 0, n)


def py_census(data: Data, start: int, stop: int, base: int, counts: dict[bytes, list[int]]) -> list[int]:
    """Offsets of the printed digests (runs of exactly 64 hex digits) that start in
    ``data[start:stop]``; each is counted in ``counts`` under its bytes as printed, as
    ``[count, base + offset of the first]``."""
    lo, hi, _ = slice(start, stop).indices(len(data))
    starts = []
    for s, e in py_hex_runs(data):
        if e - s != DIGEST_LENGTH or s < lo:
            continue
        if s >= hi:
            break
        starts.append(s)
        key = bytes(data[s:e])
        seen = counts.get(key)
        if seen is None:
            counts[key] = [1, base + s]
        else:
            seen[0] += 1
    return starts


@functools.lru_cache(maxsize=256)
def bounded_pattern(literal: bytes, boundary: int) -> re.Pattern[bytes]:
    """The regex that matches ``literal`` where it stands at ``boundary`` (PATH or NAME).

    The left boundary is a lookbehind placed after the literal, so that the pattern starts with
    the literal and ``re`` can search for it directly. DOTALL: a line end before a match is a
    byte like any other, and ``\\Z`` is the end of the data.
    """
    if boundary not in _BOUNDARIES:
        raise ValueError(f"unknown boundary {boundary!r}")
    before, after = _BOUNDARIES[boundary]
    guard = b"(?<!" + before + b"." * len(literal) + b")"
    return re.compile(re.escape(literal) + guard + after, re.DOTALL)


def py_replace_bounded(data: Data, literal: bytes, replacement: bytes, boundary: int) -> tuple[bytes, int]:
    """``data`` with every non-overlapping occurrence of ``literal`` (found from the left) that
    stands at ``boundary`` replaced by ``replacement``, taken literally; and how many were.
    BOUNDARY_NONE is ``bytes.replace``. When none was, ``data`` itself (if it is bytes)."""
    if not literal:
        raise ValueError("the literal must be non-empty bytes")
    if not isinstance(data, bytes):
        data = bytes(data)
    if boundary == BOUNDARY_NONE:
        fired = data.count(literal)
        out = data.replace(literal, replacement) if fired else data
    else:
        # A template reads backslashes as escapes; doubled, each stands for itself.
        out, fired = bounded_pattern(literal, boundary).subn(replacement.replace(b"\\", b"\\\\"), data)
    return (out, fired) if fired else (data, 0)


def py_replace_values(data: Data, marker: bytes, safes: dict[bytes, bytes]) -> tuple[bytes, int, int, bool, set[bytes]]:
    """JSON values written right after ``marker`` (``"field":"``, which starts with a quote),
    each up to the next quote, replaced by ``safes[value]`` where ``safes`` has it. Also how many
    markers there were, how many values were replaced, whether a value could not be read whole
    (an escaped quote in it, or no quote after it) and the values ``safes`` lacks."""
    if not marker.startswith(b'"'):
        raise ValueError("the marker must start with a quote")
    if not isinstance(data, bytes):
        data = bytes(data)
    parts = data.split(marker)
    fired = 0
    unread = False
    unmatched: set[bytes] = set()
    for k in range(1, len(parts)):
        part = parts[k]
        end = part.find(b'"')
        if end < 0 or part[end - 1 : end] == b"\\":
            unread = True
            continue
        value = part[:end]
        safe = safes.get(value)
        if safe is None:
            unmatched.add(value)
        else:
            parts[k] = safe + part[end:]
            fired += 1
    return (marker.join(parts) if fired else data), len(parts) - 1, fired, unread, unmatched


def py_contains(data: Data, needle: bytes) -> bool:
    """Whether ``needle`` occurs in ``data``."""
    return needle in data


def py_quiet(data: Data, groups: tuple[tuple[bytes, ...], ...]) -> bool:
    """Whether ``data`` holds no run of 64 or more hex digits, no '@' that a domain follows and
    none of the needles (``groups``: tuples of at most 16 non-empty bytes each): nothing a file's
    scan reports on."""
    for group in groups:
        if len(group) > MAX_NEEDLES:
            raise ValueError(f"at most {MAX_NEEDLES} needles in a group")
        if not all(group):
            raise ValueError("each needle must be non-empty bytes")
    return not py_hex_runs(data) and not py_email_ats(data, 0, len(data)) and not any(needle in data for group in groups for needle in group)


def py_refill(fd: int, buf: bytearray, keep: int, size: int) -> int:
    """Move ``buf[keep:]`` to the front of ``buf`` and read up to ``size`` bytes from ``fd``
    after it; how many were read (0 at the end)."""
    if not 0 <= keep <= len(buf) or size < 0:
        raise ValueError("refill: fd, keep or size out of range")
    # A bytearray with a view on it cannot change size: find out (BufferError) before reading.
    buf.append(0)
    del buf[-1]
    data = os.read(fd, size)
    del buf[:keep]
    buf += data
    return len(data)


def py_withheld_spans(data: Data, withheld: frozenset[bytes]) -> list[tuple[int, int]]:
    """(start, end) of each printed digest whose lower-case bytes are in ``withheld``; ``start``
    is before a ``sha256:`` prefix where one stands."""
    out = []
    for start, end in py_hex_runs(data):
        if end - start == DIGEST_LENGTH and bytes(data[start:end]).lower() in withheld:
            head = start - len(PREFIX) if start >= len(PREFIX) and data[start - len(PREFIX) : start] == PREFIX else start
            out.append((head, end))
    return out


hex_runs: Callable[[Data], list[tuple[int, int]]] = py_hex_runs
count_starts: Callable[[Data, tuple[bytes, ...], int, int], list[int]] = py_count_starts
find_starts: Callable[[Data, tuple[bytes, ...], int, int], list[tuple[int, int]]] = py_find_starts
leftmost_starts: Callable[[Data, tuple[bytes, ...], tuple[tuple[bytes, bytes] | None, ...]], list[tuple[int, int]]] = py_leftmost_starts
email_ats: Callable[[Data, int, int], list[int]] = py_email_ats
record_walk: Callable[
    [Data, tuple[bytes, ...], tuple[bytes, ...], tuple[tuple[bytes, bytes] | None, ...], dict[bytes, list[int]]],
    tuple[list[int], list[int], list[tuple[int, int]], list[int]],
] = py_record_walk
census: Callable[[Data, int, int, int, dict[bytes, list[int]]], list[int]] = py_census
withheld_spans: Callable[[Data, frozenset[bytes]], list[tuple[int, int]]] = py_withheld_spans
replace_bounded: Callable[[Data, bytes, bytes, int], tuple[bytes, int]] = py_replace_bounded
replace_values: Callable[[Data, bytes, dict[bytes, bytes]], tuple[bytes, int, int, bool, set[bytes]]] = py_replace_values
contains: Callable[[Data, bytes], bool] = py_contains
quiet: Callable[[Data, tuple[tuple[bytes, ...], ...]], bool] = py_quiet
refill: Callable[[int, bytearray, int, int], int] = py_refill
COMPILED = False

if not os.environ.get("KITBUILD_PURE_PYTHON"):
    try:
        import kitbuild._speedups as _speedups
    except ImportError:  # installed without a C compiler: the twins serve
        pass
    else:
        hex_runs = _speedups.hex_runs
        count_starts = _speedups.count_starts
        find_starts = _speedups.find_starts
        leftmost_starts = _speedups.leftmost_starts
        email_ats = _speedups.email_ats
        record_walk = _speedups.record_walk
        census = _speedups.census
        withheld_spans = _speedups.withheld_spans
        replace_bounded = _speedups.replace_bounded
        replace_values = _speedups.replace_values
        contains = _speedups.contains
        quiet = _speedups.quiet
        refill = _speedups.refill
        COMPILED = True
