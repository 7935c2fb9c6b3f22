"""What of a binary file the leak scan reads as text: a tar's text members, found as the tar is
read, and the e-mail addresses of a file of records (kitbuild.recordfiles); and where, in a file
of records that stores them so (a git pack, an HDF5 file), zlib streams may start.

A tar (``tar cf logs.tar *.log``, or what a ``.tar.gz`` holds) is binary by its headers' NUL
bytes, and binary data is not searched for e-mail and IPv4 addresses, which turn up by chance
in random bytes (kitbuild.shapes). But ``tar -x`` writes each member as the file it was: a log
in it is text to every reader. So the pass (kitbuild.observe) reads the tar's headers as its
windows go by, and the data of each member whose first 4 KiB hold no NUL byte is scanned as a
text file is, e-mail and IPv4 shapes and text escapes included; headers and other members are
scanned as binary data, as before. A finding's place is still the tar's own line and column.

Only what a ustar, GNU or pax header says plainly is followed: a header whose checksum does not
hold, or two zero blocks (the end), stop the reading, and the rest is binary data.
"""

from __future__ import annotations

from typing import Protocol

from kitbuild.compressed import Budget
from kitbuild.leaks import Leak, LeakScanner
from kitbuild.recordfiles import ZLIB_ROWS, RecordsLayout, cells_abut, is_records

__all__ = ["Layout", "TarLayout", "is_tar", "layout_of", "scan"]

_BLOCK = 512
_SNIFF = 4096  # within the context a window keeps past what it settles (kitbuild.observe)
_DATA_TYPES = (b"0", b"\0", b"7")  # regular files: what tar -x writes as a file


def is_tar(head: bytes) -> bool:
    """Whether a file's first bytes are a tar's first header (ustar, GNU or pax)."""
    return head[257:262] == b"ustar" and _size(head[:_BLOCK]) is not None


def _size(header: bytes) -> int | None:
    """The member size a header states, or None when it is no header (its checksum fails)."""
    if len(header) < _BLOCK:
        return None
    stored = header[148:156].replace(b"\0", b" ").strip()
    if not stored or not stored.isdigit() or int(stored, 8) != sum(header[:148]) + 256 + sum(header[156:]):
        return None
    field = header[124:136]
    if field[0] & 0x80:  # base-256, for a member of 8 GiB or more
        return int.from_bytes(field[1:], "big")
    digits = field.replace(b"\0", b" ").strip()
    return int(digits, 8) if digits and all(48 <= c <= 55 for c in digits) else None


class Layout(Protocol):
    # What text_spans found itself in the window it was last given (offsets in it).
    found: list[Leak]
    cells: bool  # a file of records whose cells may lie end to end (recordfiles.cells_abut)

    def text_spans(self, window: bytes, base: int, lo: int, hi: int) -> list[tuple[int, int]]: ...

    def streams(self, window: bytes, lo: int, hi: int) -> list[int]: ...


def layout_of(head: bytes, budget: Budget, allow: tuple[str, ...]) -> Layout | None:
    """What of a binary file (or layer, ``budget`` shared with the rest of its file) is scanned
    as text: a tar's text members, or the e-mail addresses of a file of records (and of every
    layer inside one: kitbuild.recordfiles; ``allow``: the allow list's strings); and where the
    zlib streams of a git pack's objects or an HDF5 file's chunks may start."""
    if is_tar(head):
        return TarLayout()
    if budget.records or is_records(head):
        if not budget.records:
            budget.records, budget.cells = True, cells_abut(head)
        return RecordsLayout(allow, zlib=head.startswith(ZLIB_ROWS), cells=budget.cells)
    return None


class TarLayout:
    """The text members' data of one tar, found window after window (offsets in the file)."""

    def __init__(self) -> None:
        self.next = 0  # where the next header starts
        self.ended = False
        self.text: list[tuple[int, int]] = []  # text member data not yet wholly settled
        self.found: list[Leak] = []  # a tar's own bytes hold no finding of their own
        self.cells = False

    def text_spans(self, window: bytes, base: int, lo: int, hi: int) -> list[tuple[int, int]]:
        """The parts of window[lo:hi] (``base``: the file offset of window[0]) that are text
        members' data, in order. A header is read once it starts before ``hi``: the window holds
        at least 8 KiB past ``hi`` (or the file's end), which covers it and its member's sniff."""
        while not self.ended and self.next < base + hi:
            at = self.next - base
            header = window[at : at + _BLOCK]
            size = _size(header)
            if size is None:
                self.ended = True  # the end's zero blocks, or bytes that are no header
                break
            data = self.next + _BLOCK
            if header[156:157] in _DATA_TYPES and size and b"\0" not in window[data - base : data - base + min(size, _SNIFF)]:
                self.text.append((data, data + size))
            self.next = data + -(-size // _BLOCK) * _BLOCK
        first, last = base + lo, base + hi
        self.text = [(a, b) for a, b in self.text if b > first]
        return [(max(a, first) - base, min(b, last) - base) for a, b in self.text if a < last]

    def streams(self, window: bytes, lo: int, hi: int) -> list[int]:
        return []  # (a member's own magic is found in the scan)


def scan(scanner: LeakScanner, window: bytes, base: int, lo: int, hi: int, binary: bool, compressed: list[int] | None, layout: Layout | None) -> list[Leak]:
    """``scanner.scan`` of window[lo:hi], the layout's text spans in it scanned as text (each
    piece with the context a finding depends on, so a tar of many small files costs no more
    than twice its bytes in context). ``compressed`` gets the starts the binary pieces hold."""
    if layout is None:
        return scanner.scan(window, binary=binary, lo=lo, hi=hi, compressed=compressed)
    spans = layout.text_spans(window, base, lo, hi)
    found: list[Leak] = list(layout.found)
    at = lo
    for a, b, text in [*((span[0], span[1], True) for span in spans), (hi, hi, False)]:
        for first, last, as_text in ((at, a, False), (a, b, text)):
            if first >= last:
                continue
            start = max(0, first - LeakScanner.MAX_MATCH)
            starts: list[int] | None = None if as_text or compressed is None else []
            piece = window[start : min(len(window), last + LeakScanner.MAX_MATCH)]
            records = not as_text and layout.cells
            found += [Leak(leak.code, start + leak.offset, leak.what) for leak in scanner.scan(piece, binary=not as_text, lo=first - start, hi=last - start, compressed=starts, records=records)]
            if starts and compressed is not None:
                compressed += [start + s for s in starts]
        at = b
    streams = layout.streams(window, lo, hi) if compressed is not None else []
    if streams and compressed is not None:
        compressed[:] = sorted({*compressed, *streams})
    return found
