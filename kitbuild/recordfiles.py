"""E-mail addresses in binary files that hold records: a SQLite database, a parquet or Arrow
table, a pickle, a NumPy array, an HDF5 file.

Binary data is not searched for e-mail addresses (kitbuild.shapes): a generic one turns up by
chance in random or compressed bytes, about once in 1.4 GB, and a build must not stop on chance.
But these formats store their text cells as plain UTF-8 between length and type bytes, and an
annotator's or an author's address in a results database is exactly what must not get out. So a
file whose first bytes are one of these formats' (and every layer inside it: a parquet page in
gzip, kitbuild.compressed) is searched for addresses that chance does not make: at least two
characters before the '@', at least three after it before the last dot, and a top-level
domain of the short list below, whatever follows it. In random bytes such a match is expected
about once in 100 GB (the two-letter domains make nearly all of it). Each one found is then scanned as text is
(kitbuild.tarlayout.scan), so the allow list, the finding and its place are the text scan's.
"""

from __future__ import annotations

import re
import zlib

from kitbuild.leaks import Leak
from kitbuild.shapes import EMAIL, EMAIL_AT, LOCAL_CHARS, local_part_start

__all__ = ["ZLIB_ROWS", "RecordsLayout", "cells_abut", "is_records"]

# Files of records that store their rows in zlib streams with no magic of their own: an HDF5
# file's chunks (its deflate filter), a git pack's objects (a commit's author, a file deleted
# long ago). The magic bytes of other files of records: SQLite, parquet, Arrow and Feather v2,
# NumPy, Avro, ORC, a pickle of protocol 2 to 5, an OLE2 compound file (a .xls or .doc), what a
# git object holds decompressed (its type, its size and a NUL, then a commit's author), and a PDF
# and a PNG, whose metadata (a PDF's /Author and XMP, a PNG's tEXt chunks) is plain text too.
ZLIB_ROWS = (b"\x89HDF\r\n\x1a\n", b"PACK\0\0\0\2", b"PACK\0\0\0\3")
_MAGICS = ZLIB_ROWS + (b"SQLite format 3\0", b"PAR1", b"ARROW1", b"\x93NUMPY", b"Obj\x01", b"ORC", b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"commit ", b"tag ", b"tree ", b"blob ", b"%PDF-", b"\x89PNG\r\n\x1a\n")
# Generic top-level domains and the country codes researchers' addresses use most. Every
# two-letter code added makes a chance match a little likelier (see the module's note).
_TLDS = (
    "com org net edu gov mil int info biz app dev io ai eu us uk de fr ch nl be at se dk fi no it es pt pl cz ie ca au nz jp cn kr tw hk sg in il br ru"
).split()
# Found from the '@', which `re` skips to in C: 1 GB/s over random bytes, where a pattern that
# starts with the local part is tried at every byte (90 MB/s). Whatever follows the domain: a
# column's cells lie end to end in Arrow, Feather, ORC and a pandas pickle ('…@uni.deanon'),
# and a pickle of protocol 2 or 3 puts its memo opcode right after a string ('…@uni.deq\x08').
_DOMAIN = re.compile(rb"@[A-Za-z0-9-][A-Za-z0-9.-]{2,250}\.(?:" + "|".join(sorted(_TLDS, key=len, reverse=True)).encode() + rb")")
_MAX_LOCAL = 64  # an address's local part, at most (kitbuild.shapes)
_LOCAL = 2  # characters before the '@', at least
# The headers zlib writes (a 32 KiB window, each level's flag byte): what HDF5 and git write.
_ZLIB = re.compile(rb"\x78[\x01\x5e\x9c\xda]")
_BEFORE, _AFTER = 64, 256  # how far before its '@' an address may start, and after it end


def _opens(window: bytes, at: int) -> bool:
    """Whether the bytes at ``at`` read as the start of a zlib stream: a header by chance is
    corrupt within a few bytes, and so is passed over here in C, before any reader is made."""
    try:
        zlib.decompressobj().decompress(window[at : at + 256])
    except zlib.error:
        return False
    return True


def is_records(head: bytes) -> bool:
    """Whether a binary file's first bytes say it holds records (see the module's note)."""
    if head.startswith(_MAGICS):
        return True
    # An Arrow IPC stream (what a Hugging Face dataset caches as .arrow) has no magic: it starts
    # with a continuation marker and the length of its schema message, padded to 8 bytes.
    if head.startswith(b"\xff\xff\xff\xff") and len(head) >= 8:
        length = int.from_bytes(head[4:8], "little")
        return 0 < length < 1 << 24 and length % 8 == 0
    # NumPy's savez: a zip whose members are stored, not compressed; their bytes are the file's.
    if head.startswith(b"PK\x03\x04") and head[8:10] == b"\0\0" and len(head) >= 30:
        data = 30 + int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")
        return head.startswith(_MAGICS, data)
    return False


# Files of records whose text cells may lie end to end, with no length or type byte between
# them: a SQLite record's cells, an Arrow, Feather or ORC column, a NumPy array of strings as
# wide as its widest, an HDF5 dataset of fixed-length strings, a parquet page of a dictionary.
# (A pickle, Avro and msgpack write a length before every string: kitbuild.shapes reads it.)
_CELLS_ABUT = (b"SQLite format 3\0", b"PAR1", b"ARROW1", b"\x93NUMPY", b"ORC", b"\x89HDF\r\n\x1a\n")


def cells_abut(head: bytes) -> bool:
    """Whether a file of records (is_records) may lay its text cells end to end."""
    return head.startswith(_CELLS_ABUT) or is_records(head) and not head.startswith(_MAGICS)


class RecordsLayout:
    """Where such a file's addresses are, for kitbuild.tarlayout.scan to scan as text, and those
    the text scan cannot read whole, found here. ``allow``: the allow list's strings."""

    def __init__(self, allow: tuple[str, ...], zlib: bool = False, cells: bool = False) -> None:
        self.allow = tuple((text.encode(), text.encode().index(b"@")) for text in allow if "@" in text)
        self.found: list[Leak] = []  # offsets in the window last given
        self.zlib = zlib
        self.cells = cells  # its cells may lie end to end (cells_abut)

    def streams(self, window: bytes, lo: int, hi: int) -> list[int]:
        """Where in window[lo:hi] a zlib stream may start, in a file of ZLIB_ROWS: every zlib
        header (kitbuild.embedded reads one stream at a time, and passes over a header inside
        the one it reads; one by chance ends a few bytes in)."""
        return [m.start() for m in _ZLIB.finditer(window, lo, hi) if _opens(window, m.start())] if self.zlib else []

    def text_spans(self, window: bytes, base: int, lo: int, hi: int) -> list[tuple[int, int]]:
        """The spans of window[lo:hi] that hold the start of an address, in order (each from
        its first character; the scan reads the context around it)."""
        spans: list[tuple[int, int]] = []
        self.found = []
        for match in _DOMAIN.finditer(window, lo, min(len(window), hi + _BEFORE + _AFTER)):
            at = match.start()
            start = local_part_start(window, at)
            whole = start is not None and EMAIL_AT.match(window, at)  # as the text scan reads it
            if start is None and at >= _MAX_LOCAL and all(c in LOCAL_CHARS for c in window[at - _MAX_LOCAL : at]):
                start = at - _MAX_LOCAL  # cells run into it: its last 64 characters
            if start is None or at - start < _LOCAL or not lo <= start < hi or (spans and start < spans[-1][1]):
                continue
            # A record packs its cells with no byte between them ('q1500' then 'ada@uni.de' in a
            # SQLite row, 'anon' after it in an Arrow column): an allowed address is allowed
            # where cells run into it, if its domain ends where the one found here does.
            if any(start <= at - k and window.startswith(text, at - k) and at - k + len(text) == match.end() for text, k in self.allow):
                continue
            if whole:
                spans.append((start, min(hi, whole.end())))
            else:
                # Cells run into it (past the 64 characters a local part may have, or a digit
                # after its domain): the text scan would not take it for an address.
                self.found.append(Leak(EMAIL.code, start, EMAIL.what))
        return spans
