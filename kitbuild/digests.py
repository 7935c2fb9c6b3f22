"""sha256 digests as records print them: 64 hex digits, either case, optionally ``sha256:``.

Finding them is on the hot path of both build (which digests does a record print?) and verify
(does each check against the kit?).
"""

from __future__ import annotations

import hyperscan

DIGEST_LENGTH = 64
PREFIX = b"sha256:"  # what a record may print before a digest

__all__ = ["DIGEST_LENGTH", "PREFIX", "digest_starts", "hex_runs", "printed_digests"]

# Every hex digit becomes 'x' and every other byte a space, so that a run of 64 digits is a run of
# 64 'x' that bytes.find jumps to. Two passes in C: five times as fast as re's
# ``[0-9A-Fa-f]{64,}`` on records that print a digest on every line (docs/performance.md), which
# starts a match at every hex digit, and records are full of short runs of them: ids, numbers.
_HEX_TO_X = bytes(0x78 if chr(i) in "0123456789abcdefABCDEF" else 0x20 for i in range(256))
_RUN = b"x" * DIGEST_LENGTH


def hex_runs(data: bytes | bytearray) -> list[tuple[int, int]]:
    """(start, end) of every run of at least 64 hex digits, in order."""
    mask = data.translate(_HEX_TO_X)
    runs: list[tuple[int, int]] = []
    pos = 0
    while (start := mask.find(_RUN, pos)) >= 0:
        end = mask.find(b" ", start + DIGEST_LENGTH)
        pos = len(mask) if end < 0 else end
        runs.append((start, pos))
    return runs


# Every 64 hex digits in a row, found by hyperscan (where the match ends): in records that print a
# digest on every line, twice the speed of the translate-and-find search above with the work per
# digest counted (docs/performance.md). A run longer than 64 digits ends a match at each of its
# digits; the first two ends in a row stop the scan, and that data is searched the way above,
# whose cost does not grow with a run's length.
_database: hyperscan.Database | None = None


def digest_starts(data: bytes) -> tuple[list[int], list[int]]:
    """The starts of every run of exactly 64 hex digits in ``data``, and of every longer run."""
    global _database
    if _database is None:
        _database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        _database.compile(expressions=[rb"[0-9a-fA-F]{64}"], ids=[0], elements=1, flags=[0])
    ends: list[int] = []

    def hit(_id: int, _from: int, to: int, _flags: int, _context: object) -> bool:
        if ends and ends[-1] == to - 1:
            return True  # a longer run: stop
        ends.append(to)
        return False

    try:
        _database.scan(data, match_event_handler=hit)
    except hyperscan.ScanTerminated:
        runs = hex_runs(data)
        return [a for a, b in runs if b - a == DIGEST_LENGTH], [a for a, b in runs if b - a != DIGEST_LENGTH]
    # No two ends in a row: each match is a whole run of 64, hex digits neither before nor after.
    return [end - DIGEST_LENGTH for end in ends], []


def printed_digests(data: bytes) -> list[tuple[int, int, str]]:
    """Each digest printed in ``data``: (start, end, lower-case hex); ``start`` includes a ``sha256:`` prefix.

    A run longer than 64 digits is not a digest (it may hold one; see :func:`hex_runs`).
    """
    out = []
    for start, end in hex_runs(data):
        if end - start != DIGEST_LENGTH:
            continue
        head = start - len(PREFIX) if data[max(0, start - len(PREFIX)) : start] == PREFIX else start
        out.append((head, end, data[start:end].decode("ascii").lower()))
    return out
