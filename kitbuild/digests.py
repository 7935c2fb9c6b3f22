"""sha256 digests as records print them: 64 hex digits, either case, optionally ``sha256:``.

Finding them is on the hot path of both build (which digests does a record print?) and verify
(does each check against the kit?).
"""

from __future__ import annotations

DIGEST_LENGTH = 64
PREFIX = b"sha256:"  # what a record may print before a digest

__all__ = ["DIGEST_LENGTH", "PREFIX", "hex_runs", "printed_digests"]

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
