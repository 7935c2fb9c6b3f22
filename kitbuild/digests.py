"""sha256 digests as records print them: 64 hex digits, either case, optionally ``sha256:``.

Finding them is on the hot path of both build (which digests does a record print?) and verify
(does each check against the kit?), so runs of hex digits are found without a regular
expression: one ``bytes.translate`` maps every hex digit to ``x`` and everything else to a space,
and ``bytes.find`` jumps from one run of 64 ``x`` to the next, both at C speed.
"""

from __future__ import annotations

import string

DIGEST_LENGTH = 64
_HEX = frozenset(string.hexdigits.encode())
_TABLE = bytes(0x78 if i in _HEX else 0x20 for i in range(256))
_RUN = b"x" * DIGEST_LENGTH
PREFIX = b"sha256:"


def hex_runs(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every run of at least 64 hex digits, in order."""
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
