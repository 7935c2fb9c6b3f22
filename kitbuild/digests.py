"""sha256 digests as records print them: 64 hex digits, either case, optionally ``sha256:``.

Finding them is on the hot path of both build (which digests does a record print?) and verify
(does each check against the kit?).
"""

from __future__ import annotations

import hyperscan

DIGEST_LENGTH = 64
PREFIX = b"sha256:"  # what a record may print before a digest

__all__ = ["DIGEST_LENGTH", "MARKS", "PREFIX", "digest_starts", "find_from", "hex_runs", "may_spell_digest", "printed_digests"]

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
# whose cost does not grow with a run's length. The same scan finds the first of each of MARKS,
# which a reader of the data would otherwise look for with a search of its own each (three
# searches over every text window: a sixth of a verify of records that print a digest a line).
MARKS = (b"sha256-", b"sha256=", b"\\")
_database: hyperscan.Database | None = None


def digest_starts(data: bytes) -> tuple[list[int], list[int], list[int | None]]:
    """The starts of every run of exactly 64 hex digits in ``data``, of every longer run, and
    the start of the first of each of MARKS (-1 where there is none)."""
    global _database
    if _database is None:
        _database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        marks = [b"".join(b"\\x%02x" % c for c in m) for m in MARKS]
        _database.compile(
            expressions=[rb"[0-9a-fA-F]{64}", *marks], ids=list(range(1 + len(MARKS))), elements=1 + len(MARKS), flags=[0] + [hyperscan.HS_FLAG_SINGLEMATCH] * len(MARKS)
        )
    ends: list[int] = []
    firsts: list[int | None] = [-1] * len(MARKS)

    def hit(index: int, _from: int, to: int, _flags: int, _context: object) -> bool:
        if index:
            firsts[index - 1] = to - len(MARKS[index - 1])  # the first: a literal's matches end in order
            return False
        if ends and ends[-1] == to - 1:
            return True  # a longer run: stop
        ends.append(to)
        return False

    try:
        _database.scan(data, match_event_handler=hit)
    except hyperscan.ScanTerminated:
        runs = hex_runs(data)
        firsts[:] = [data.find(m) for m in MARKS]  # (the scan stopped before it saw them all)
        return [a for a, b in runs if b - a == DIGEST_LENGTH], [a for a, b in runs if b - a != DIGEST_LENGTH], firsts
    # No two ends in a row: each match is a whole run of 64, hex digits neither before nor after.
    return [end - DIGEST_LENGTH for end in ends], [], firsts


def find_from(data: bytes, mark: bytes, first: int | None, start: int, end: int) -> int:
    """``data.find(mark, start, end)``, given ``first``, where the first ``mark`` in ``data``
    starts (-1: nowhere; None: not known): no search where that says enough."""
    if first is None or 0 <= first < start:
        return data.find(mark, start, end)
    return first if 0 <= first and first + len(mark) <= end else -1


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


# Where a record may spell a digest that no run of 64 hex digits shows, though the leak scanner
# reads it there (kitbuild.leaks): a hex digit written as an escape (JSON, \x, \u{..}, octal,
# percent-encoding, an HTML reference), or a run of 40 base64 letters or more (a digest's 32
# bytes, its hex, a JSON document or a gzip stream holding it, wrapped over lines or not) with a
# letter no hex digit is: a git commit's 40 hex digits is no such run. A '\\' or '%' continues a
# run, as '\\/' and '%2F' spell a '/' of it. A build reads a file that has either again once it
# knows which digests it withholds.
_HEX_CODE = rb"(?:3[0-9]|[46][1-6])"
_ESCAPED_HEX = [
    rb"\\(?:u00|U000000|x|u\{0*)" + _HEX_CODE + rb"|\\(?:06[0-7]|07[01]|10[1-6]|14[1-6])|%(?:25){0,4}" + _HEX_CODE,
    rb"&#(?:0*(?:4[89]|5[0-7]|6[5-9]|70|9[7-9]|10[0-2])|[xX]0*" + _HEX_CODE + rb")",
]
_escaped: hyperscan.Database | None = None
# Each byte of base64 (of either alphabet, one translation for both) as 'n' (a letter no hex
# digit is) or 'h' (a hex digit), any other as a space; the digests found already are blanked
# before runs are looked at, so a record of a digest a line costs no search a line.
_B64_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/\\%_-"
_LETTERS = bytes(0x6E if chr(i) in _B64_LETTERS and chr(i) not in "0123456789abcdefABCDEF" else 0x68 if chr(i) in _B64_LETTERS else 0x20 for i in range(256))
_RUNS = bytes(0x62 if i in b"nh" else 0x20 for i in range(256))
_RUN_40 = b"b" * 40
_BLANK = b" " * DIGEST_LENGTH


def may_spell_digest(data: bytes, digests: list[int] = []) -> bool:
    """Whether ``data`` holds an escaped hex digit or such a run of base64 (see above);
    ``digests``: where runs of exactly 64 hex digits start in it (see :func:`digest_starts`)."""
    global _escaped
    if _escaped is None:
        _escaped = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        _escaped.compile(expressions=_ESCAPED_HEX, ids=[0, 1], elements=2, flags=[hyperscan.HS_FLAG_SINGLEMATCH] * 2)
    try:
        _escaped.scan(data, match_event_handler=lambda *_: True)  # the first match stops the scan
    except hyperscan.ScanTerminated:
        return True
    letters = bytearray(data.translate(_LETTERS))
    for start in digests:
        letters[start : start + DIGEST_LENGTH] = _BLANK
    runs, pos = letters.translate(_RUNS), 0
    while (start := runs.find(_RUN_40, pos)) >= 0:
        end = runs.find(b" ", start + 40)
        pos = len(runs) if end < 0 else end
        if letters.find(b"n", start, pos) >= 0:
            return True
    return False
