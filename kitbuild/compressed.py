"""What a compressed file holds, read by the leak scan as the file is read.

A record published as ``runs.jsonl.gz`` (or a BAM file, a ``.tar.xz`` of logs, a ``.zst`` dump)
is text to anyone who opens it with zcat, and its bytes are not: a private path in it is
invisible to a scan of those bytes. So the pass over a file (:mod:`kitbuild.observe`) that starts
with the magic bytes of gzip, bzip2, xz or zstandard also runs it through the decompressor and
scans what comes out, in the same windows and with the same scanner, in build and verify alike.
A stream that starts with another such stream (a ``.tar.gz`` compressed again) is opened too, up
to ``DEPTH`` layers. Concatenated members (``cat a.gz b.gz``, bgzip) are read as zcat reads them:
one after the other.

A rule never rewrites inside a compressed file (build copies it as it is), so anything private in
one stops the build: the researcher decompresses it in the bench, where the rules reach it.

Bounds, so that no file makes the pass hang or grow (a gzip bomb expands a thousandfold, bzip2's
far more): all layers together write at most ``FLOOR`` bytes and ``RATIO`` times the file's size,
and xz and zstandard streams that need more than ``MEMORY`` to decompress are not opened. A file
that passes a bound is reported (KB504: not read whole), never passed as clean. A stream that is
corrupt ends the reading quietly: what came out before was read, as zcat would print it, and a
file of other bytes that starts with the same magic by chance gives nothing at all.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Any, Callable, Protocol, cast

import zstandard

from kitbuild.leaks import Leak
from kitbuild.lines import BLOCK_SIZE

__all__ = ["Budget", "Unpacked", "compression_of"]

DEPTH = 3
FLOOR = 1 << 30
RATIO = 64
MEMORY = 128 << 20

# (name, magic bytes): bzip2's header is followed by a block's or the end's own magic.
_MAGIC = (
    ("gzip", (b"\x1f\x8b\x08",)),
    ("bzip2", tuple(b"BZh" + bytes([d]) + m for d in b"123456789" for m in (b"1AY&SY", b"\x17rE8P\x90"))),
    ("xz", (b"\xfd7zXZ\x00",)),
    ("zstandard", (b"\x28\xb5\x2f\xfd",)),
)


def compression_of(head: bytes) -> str | None:
    """The compression a file's first bytes say it is in, or None."""
    for name, magics in _MAGIC:
        if head.startswith(magics):
            return name
    return None


class Budget:
    """What every layer of one file may still write (see the module's bounds)."""

    def __init__(self) -> None:
        self.fed = 0  # the file's own bytes, read so far
        self.out = 0  # what its layers wrote, together
        self.reported = False

    @property
    def over(self) -> bool:
        return self.out > FLOOR + RATIO * self.fed


class _Over(Exception):
    """The budget is spent: stop this layer."""


class _TooLarge(Exception):
    """The stream needs more memory to decompress than MEMORY."""


class Inner(Protocol):
    """The pass over the decompressed bytes (an Observer that looks for leaks only)."""

    def feed(self, data: bytes) -> None: ...

    def finish(self) -> object: ...

    @property
    def leaks(self) -> list[Leak]: ...


class Unpacked:
    """One layer: feed it the compressed bytes in order, then :meth:`finish` for the leaks found
    in what they hold, each with where it lies in the decompressed text (its offset is -1: no
    place in the file's own bytes)."""

    def __init__(self, kind: str, inner: Inner, budget: Budget, outermost: bool) -> None:
        self.kind, self.inner, self.budget, self.outermost = kind, inner, budget, outermost
        self.done = False  # a corrupt stream, or the budget spent
        self.over = False
        self.too_large = False
        self._push = _decoder(kind)
        self._pending = bytearray()
        self._written = 0  # bytes fed to ``inner``
        # The last two blocks fed, as (offset, lines before it, offset of the last newline
        # before it, bytes): a leak the inner pass reports lies in one of them.
        self._blocks: list[tuple[int, int, int, bytes]] = []
        self._lines, self._last_nl = 0, -1
        self._taken = 0
        self._found: list[Leak] = []

    def feed(self, data: bytes) -> None:
        if self.outermost:
            self.budget.fed += len(data)
        if self.done or not data:
            return
        try:
            self._push(data, self._emit)
        except _Over:
            self.over = self.done = True
        except _TooLarge:
            self.too_large = self.done = True
        except (zlib.error, OSError, EOFError, lzma.LZMAError, zstandard.ZstdError, ValueError):
            self.done = True  # corrupt: what came out before was read

    def finish(self) -> list[Leak]:
        if self._pending:
            self._feed_inner(bytes(self._pending))
        self.inner.finish()
        self._collect()
        if (self.over or self.too_large) and not self.budget.reported:
            self.budget.reported = True
            why = (
                f"expands past {FLOOR >> 30} GiB and {RATIO} times the file's size"
                if self.over
                else f"needs more than {MEMORY >> 20} MiB of memory to decompress"
            )
            self._found.append(Leak("KB504", -1, f"its {self.kind} content {why}: the leak scan read only its first {self._written:,} bytes decompressed"))
        return self._found

    def _emit(self, out: bytes) -> None:
        if not out:
            return
        self.budget.out += len(out)
        if self.budget.over:
            raise _Over
        self._pending += out
        while len(self._pending) >= BLOCK_SIZE:
            block = bytes(self._pending[:BLOCK_SIZE])
            del self._pending[:BLOCK_SIZE]
            self._feed_inner(block)
        if self.budget.over:
            raise _Over  # a layer inside this one spent it

    def _feed_inner(self, block: bytes) -> None:
        self._blocks = self._blocks[-1:] + [(self._written, self._lines, self._last_nl, block)]
        self._lines += block.count(b"\n")
        nl = block.rfind(b"\n")
        if nl >= 0:
            self._last_nl = self._written + nl
        self._written += len(block)
        self.inner.feed(block)
        self._collect()

    def _collect(self) -> None:
        """The inner pass's new leaks, placed by line and column in the decompressed text."""
        leaks = self.inner.leaks
        for leak in leaks[self._taken :]:
            if leak.offset < 0:  # from a layer inside this one, placed there already
                self._found.append(Leak(leak.code, -1, f"in its {self.kind} content, {leak.what}"))
                continue
            line, column = self._place(leak.offset)
            self._found.append(Leak(leak.code, -1, f"in its {self.kind} content at line {line}, column {column}: {leak.what}"))
        self._taken = len(leaks)

    def _place(self, offset: int) -> tuple[int, int]:
        for start, lines, last_nl, block in reversed(self._blocks):
            if offset >= start:
                at = offset - start
                nl = block.rfind(b"\n", 0, at)
                return lines + block.count(b"\n", 0, at) + 1, at - nl if nl >= 0 else offset - last_nl
        return 0, 0  # not reached: the inner pass reports within its last two blocks


def _decoder(kind: str) -> Callable[[bytes, Callable[[bytes], None]], None]:
    """push(data, emit): decompresses ``data``, handing what comes out to ``emit`` a block at
    most at a time; members or frames that follow one another are read on."""
    return _zstandard() if kind == "zstandard" else _Members(kind).push


class _Members:
    """gzip, bzip2 or xz: one decompressor a member, each read with its output bounded."""

    _LONGEST_MAGIC = 10

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.d = self._fresh()
        self.held = b""  # the start of what follows a member, too short to tell yet
        self.ended = False  # what followed the last member was no member: zcat ignores it too

    def _fresh(self) -> Any:
        if self.kind == "gzip":
            return zlib.decompressobj(wbits=31)
        if self.kind == "bzip2":
            return bz2.BZ2Decompressor()
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=MEMORY)

    def push(self, data: bytes, emit: Callable[[bytes], None]) -> None:
        data, self.held = self.held + data, b""
        while data and not self.ended:
            d = self.d
            if d.eof:
                if len(data) < self._LONGEST_MAGIC and compression_of(data) is None:
                    self.held = data  # a member's magic may be cut by the block's end
                    return
                if compression_of(data) != self.kind:
                    self.ended = True
                    return
                d = self.d = self._fresh()
            if self.kind == "gzip":
                emit(d.decompress(data, BLOCK_SIZE))
                data = d.unconsumed_tail
                while not data and not d.eof and (more := d.decompress(b"", BLOCK_SIZE)):
                    emit(more)  # output the decompressor still held when its input ran out
            else:
                try:
                    emit(d.decompress(data, BLOCK_SIZE))
                    while not d.eof and not d.needs_input:
                        emit(d.decompress(b"", BLOCK_SIZE))
                except lzma.LZMAError as error:
                    if "memory" in str(error).lower():
                        raise _TooLarge from error
                    raise
                data = b""
            if d.eof:
                data = d.unused_data + data


def _zstandard() -> Callable[[bytes, Callable[[bytes], None]], None]:
    sink = _Sink()
    # The writer calls only the sink's write(), for each block that comes out.
    writer = zstandard.ZstdDecompressor(max_window_size=MEMORY).stream_writer(cast(Any, sink), write_size=BLOCK_SIZE)

    def push(data: bytes, emit: Callable[[bytes], None]) -> None:
        sink.emit = emit
        try:
            writer.write(data)
        except zstandard.ZstdError as error:
            if "memory" in str(error).lower() or "window" in str(error).lower():
                raise _TooLarge from error
            raise

    return push


class _Sink:
    emit: Callable[[bytes], None]

    def write(self, data: bytes) -> int:
        self.emit(bytes(data))
        return len(data)
