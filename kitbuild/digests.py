"""sha256 digests as records print them: 64 hex digits, either case, optionally ``sha256:``.

Finding them is on the hot path of both build (which digests does a record print?) and verify
(does each check against the kit?): runs of hex digits are found by :func:`kitbuild.speedups.hex_runs`,
in C where it was compiled, with ``bytes.translate`` and ``bytes.find`` where not.
"""

from __future__ import annotations

from kitbuild.speedups import DIGEST_LENGTH, PREFIX, hex_runs

__all__ = ["DIGEST_LENGTH", "PREFIX", "hex_runs", "printed_digests"]


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
