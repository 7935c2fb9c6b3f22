"""What a compressed file holds, read by the leak scan as the file is read.

A record published as ``runs.jsonl.gz`` (or a BAM file, a ``.tar.xz`` of logs, a ``.zst`` dump,
an ``.xlsx`` table, which is a zip) is text to anyone who opens it with zcat or a spreadsheet,
and its bytes are not: a private path in it is invisible to a scan of those bytes. So the pass
over a file (:mod:`kitbuild.observe`) that starts with the magic bytes of gzip, bzip2, xz,
zstandard or a zip member also runs it through the decompressor and scans what comes out (each
zip member on its own), in the same windows and with the same scanner, in build and verify alike.
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

import base64
import bz2
import lzma
import re
import struct
import zlib
from typing import Any, Callable, Protocol, cast

from kitbuild.leakbase64 import CONTAINERS
from kitbuild.leaks import Leak
from kitbuild.lines import BLOCK_SIZE

__all__ = ["IN_COMPRESSED", "Budget", "Unpacked", "compression_of"]

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
    ("zip", (b"PK\x03\x04",)),
)


# How a finding in what a compressed file holds begins (see _Content's labels; kitbuild.checks
# puts the column first, kitbuild.embedded where its base64 or stream is): the build's advice
# for such a finding says to decompress it (kitbuild.gate).
IN_COMPRESSED = re.compile(r"^(?:column [0-9]+: )?(?:in the (?:base64|compressed data) here, )?in its (?:(?:" + "|".join([name for name, _ in _MAGIC if name != "zip"] + ["zlib"]) + r") content|zip member [0-9]+)")
def compression_of(head: bytes, containers: bool = False) -> str | None:
    """The compression a file's first bytes say it is in, or None; with ``containers``, 'pdf' or
    'png' for those files too (in base64: kitbuild.embedded), whose bytes a layer reads as they are."""
    for name, magics in _MAGIC:
        if head.startswith(magics):
            return name
    if containers and head.startswith(CONTAINERS):
        return "pdf" if head.startswith(CONTAINERS[0]) else "png"
    return None


class Budget:
    """What every layer of one file may still write (see the module's bounds)."""

    def __init__(self) -> None:
        self.fed = 0  # the file's own bytes, read so far
        self.out = 0  # what its layers wrote, together
        self.records = False  # the file holds records: its layers too (kitbuild.recordfiles)
        self.cells = False  # and lays its cells end to end (recordfiles.cells_abut)
        self.reported = False

    @property
    def over(self) -> bool:
        return self.out > FLOOR + RATIO * self.fed


class _Over(Exception):
    """The budget is spent: stop this layer."""


class _TooLarge(Exception):
    """The stream needs more memory to decompress than MEMORY."""


class _Corrupt(Exception):
    """A zstandard stream that cannot be decoded on (its library's own error, not imported
    where no file needs it)."""


class Inner(Protocol):
    """The pass over the decompressed bytes (an Observer that looks for leaks only)."""

    def feed(self, data: bytes) -> None: ...

    def finish(self) -> object: ...

    @property
    def leaks(self) -> list[Leak]: ...


class _Content:
    """One decompressed stream (a gzip file's text, a zip member's), fed to its own inner pass
    in blocks, with what it found placed by line and column; ``label`` says where, in a
    finding ('its gzip content', 'its zip member 3')."""

    def __init__(self, label: str, inner: Inner, budget: Budget) -> None:
        self.label, self.inner, self.budget = label, inner, budget
        self.written = 0  # bytes fed to ``inner``
        self._pending = bytearray()
        # The last two blocks fed, as (offset, lines before it, offset of the last newline
        # before it, bytes): a leak the inner pass reports lies in one of them.
        self._blocks: list[tuple[int, int, int, bytes]] = []
        self._lines, self._last_nl = 0, -1
        self._taken = 0
        self.found: list[Leak] = []

    def write(self, out: bytes) -> None:
        if not out:
            return
        self.budget.out += len(out)
        if self.budget.over:
            raise _Over
        self._pending += out
        while len(self._pending) >= BLOCK_SIZE:
            block = bytes(self._pending[:BLOCK_SIZE])
            del self._pending[:BLOCK_SIZE]
            self._feed(block)
        if self.budget.over:
            raise _Over  # a layer inside this one spent it

    def close(self) -> list[Leak]:
        if self._pending:
            self._feed(bytes(self._pending))
            self._pending = bytearray()
        self.inner.finish()
        self._collect()
        return self.found

    def _feed(self, block: bytes) -> None:
        self._blocks = self._blocks[-1:] + [(self.written, self._lines, self._last_nl, block)]
        self._lines += block.count(b"\n")
        nl = block.rfind(b"\n")
        if nl >= 0:
            self._last_nl = self.written + nl
        self.written += len(block)
        self.inner.feed(block)
        self._collect()

    def _collect(self) -> None:
        """The inner pass's new leaks, placed by line and column in the decompressed text."""
        leaks = self.inner.leaks
        for leak in leaks[self._taken :]:
            if leak.offset < 0:  # from a layer inside this one, placed there already
                self.found.append(Leak(leak.code, -1, f"in {self.label}, {leak.what}"))
                continue
            line, column = self._place(leak.offset)
            self.found.append(Leak(leak.code, -1, f"in {self.label} at line {line}, column {column}: {leak.what}"))
        self._taken = len(leaks)

    def _place(self, offset: int) -> tuple[int, int]:
        for start, lines, last_nl, block in reversed(self._blocks):
            if offset >= start:
                at = offset - start
                nl = block.rfind(b"\n", 0, at)
                return lines + block.count(b"\n", 0, at) + 1, at - nl if nl >= 0 else offset - last_nl
        return 0, 0  # not reached: the inner pass reports within its last two blocks


class Unpacked:
    """One layer: feed it the compressed bytes in order, then :meth:`finish` for the leaks found
    in what they hold, each with where it lies in the decompressed text (its offset is -1: no
    place in the file's own bytes). ``make_inner`` gives a fresh inner pass for each stream."""

    def __init__(self, kind: str, make_inner: Callable[[], Inner], budget: Budget, outermost: bool) -> None:
        self.kind, self.budget, self.outermost = kind, budget, outermost
        self.done = False  # a corrupt stream, or the budget spent
        self.over = False
        self.too_large = False
        self.contents: list[_Content] = []
        self._push: Callable[[bytes], None]
        self._found: list[Leak] = []
        self._read = 0  # bytes fed to the inner passes of contents closed
        # What says the stream ended (a zstandard stream ends only where what follows is corrupt).
        self._reader: _ZipMembers | _Members | _Ascii85 | None = None
        if kind == "zip":
            self._reader = _ZipMembers(lambda n: self._open(f"its zip member {n}", make_inner), self._close)
            self._push = self._reader.push
        else:
            # (PDF's ASCII85 holds a zlib stream: it is the zlib content a reader sees.)
            label = "its PDF file" if kind == "pdf" else "its PNG file" if kind == "png" else f"its {'zlib' if kind == 'ascii85' else kind} content"
            content = self._open(label, make_inner)
            if kind in ("pdf", "png"):
                decode = lambda data, write: write(data)  # noqa: E731 (its streams: its inner pass)
            elif kind == "zstandard":
                decode = _zstandard()
            elif kind == "ascii85":
                self._reader = a85 = _Ascii85()
                decode = a85.push
            else:
                self._reader = members = _Members(kind)
                decode = members.push
            self._push = lambda data: decode(data, content.write)

    def _open(self, label: str, make_inner: Callable[[], Inner]) -> _Content:
        content = _Content(label, make_inner(), self.budget)
        self.contents.append(content)
        return content

    def _close(self, content: _Content) -> None:
        """A zip member read to its end: its findings kept, its pass let go."""
        self._found += content.close()
        self._read += content.written
        self.contents.remove(content)

    def feed(self, data: bytes) -> None:
        if self.outermost:
            self.budget.fed += len(data)
        if self.done or not data:
            return
        try:
            self._push(data)
        except _Over:
            self.over = self.done = True
        except _TooLarge:
            self.too_large = self.done = True
        except (zlib.error, OSError, EOFError, lzma.LZMAError, _Corrupt, ValueError, struct.error):
            self.done = True  # corrupt: what came out before was read

    @property
    def read(self) -> int:
        """Bytes decompressed so far, of contents closed and open."""
        return self._read + sum(content.written for content in self.contents)

    @property
    def ended(self) -> bool:
        """Nothing fed from now on is read: the stream ended (what followed it is no member) or
        is corrupt, or the budget is spent."""
        return self.done or (self._reader is not None and self._reader.ended)

    def finish(self) -> list[Leak]:
        for content in list(self.contents):
            self._close(content)
        found = self._found
        if (self.over or self.too_large) and not self.budget.reported:
            self.budget.reported = True
            why = (
                f"expands past {FLOOR >> 30} GiB and {RATIO} times the file's size"
                if self.over
                else f"needs more than {MEMORY >> 20} MiB of memory to decompress"
            )
            found.append(Leak("KB504", -1, f"its {self.kind} content {why}: the leak scan read only its first {self._read:,} bytes decompressed"))
        return found


class _Members:
    """gzip, bzip2 or xz: one decompressor a member, each read with its output bounded; zlib:
    the one stream a PDF's stream or a PNG chunk holds."""

    _LONGEST_MAGIC = 10

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.d = self._fresh()
        self.held = b""  # the start of what follows a member, too short to tell yet
        self.ended = False  # what followed the last member was no member: zcat ignores it too

    def _fresh(self) -> Any:
        if self.kind in ("gzip", "zlib"):
            return zlib.decompressobj(wbits=31 if self.kind == "gzip" else 15)
        if self.kind == "bzip2":
            return bz2.BZ2Decompressor()
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=MEMORY)

    def push(self, data: bytes, emit: Callable[[bytes], None]) -> None:
        data, self.held = self.held + data, b""
        while data and not self.ended:
            d = self.d
            if d.eof:
                if self.kind == "zlib":
                    self.ended = True  # what follows is the PDF's or the PNG's own again
                    return
                if len(data) < self._LONGEST_MAGIC and compression_of(data) is None:
                    self.held = data  # a member's magic may be cut by the block's end
                    return
                if compression_of(data) != self.kind:
                    self.ended = True
                    return
                d = self.d = self._fresh()
            if self.kind in ("gzip", "zlib"):
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


class _Ascii85:
    """A PDF stream written /ASCII85Decode /FlateDecode (reportlab's): its text decoded as it
    comes, 'z' for four zero bytes, up to its end mark '~>', and read on as zlib."""

    def __init__(self) -> None:
        self.zlib = _Members("zlib")
        self.held = b""  # letters of a group the last piece cut
        self.closed = False  # past '~>'

    @property
    def ended(self) -> bool:
        return self.closed or self.zlib.ended

    def push(self, data: bytes, emit: Callable[[bytes], None]) -> None:
        if self.closed:
            return
        text = (self.held + data).translate(None, b" \t\r\n\f\0").replace(b"z", b"!!!!!")
        end = text.find(b"~>")
        if end >= 0:
            text, self.closed = text[:end], True
        whole = len(text) if self.closed else len(text) // 5 * 5
        self.held = text[whole:]
        if whole:
            self.zlib.push(base64.a85decode(text[:whole]), emit)  # (a letter past 'u': ValueError, corrupt)


def _zstandard() -> Callable[[bytes, Callable[[bytes], None]], None]:
    # Imported here, when a file needs it: importing it costs every command 16 ms of start-up.
    import zstandard

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
            raise _Corrupt from error

    return push


class _Sink:
    emit: Callable[[bytes], None]

    def write(self, data: bytes) -> int:
        self.emit(bytes(data))
        return len(data)


class _ZipMembers:
    """The members of a zip file (an xlsx's sheets, a docx's text, a .npz's arrays), read from
    their local headers in order as the file arrives, with no seeking: each deflated or bzip2
    member is decompressed into a content of its own. A stored member's bytes are the file's
    own, which the raw scan reads already, as binary data: it gets a content if it is compressed
    itself (a .gz stored in a zip), a PDF or PNG, whose zlib streams its pass reads, or text (no
    NUL in its first 4 KiB), read as a text file is, e-mail addresses and escapes included
    (Python's zipfile stores by default). An encrypted member, or one of another method, is passed over (where
    its header gives its size; else the reading ends there)."""

    def __init__(self, open_member: Callable[[int], _Content], close_member: Callable[[_Content], None]) -> None:
        self.open_member, self.close_member = open_member, close_member
        self.buffer = bytearray()
        self.state = self._header
        self.count = 0
        self.left: int | None = 0  # compressed bytes of this member still to come, if known
        self.decoder: Any = None
        self.content: _Content | None = None
        self.descriptor = 0  # the data descriptor's length after the data, without its signature
        self.stored = False  # a stored member not yet looked at
        self.ended = False

    def push(self, data: bytes) -> None:
        self.buffer += data
        while not self.ended and self.state():
            pass

    def _header(self) -> bool:
        buffer = self.buffer
        if len(buffer) < 30:
            return False
        if buffer[:4] != b"PK\x03\x04":
            self.ended = True  # the central directory, or bytes no reader takes for a member
            return False
        flags, method, csize, usize, name_length, extra_length = struct.unpack_from("<2xHH8xIIHH", buffer, 4)
        need = 30 + name_length + extra_length
        if len(buffer) < need:
            return False
        zip64 = False
        extra, at = bytes(buffer[30 + name_length : need]), 0
        while at + 4 <= len(extra):
            tag, size = struct.unpack_from("<HH", extra, at)
            if tag == 1:  # ZIP64: the sizes the header gives as 0xFFFFFFFF, in this order
                zip64, field = True, at + 4
                if usize == 0xFFFFFFFF and field + 8 <= at + 4 + size:
                    field += 8
                if csize == 0xFFFFFFFF and field + 8 <= at + 4 + size:
                    csize = struct.unpack_from("<Q", extra, field)[0]
            at += 4 + size
        del buffer[:need]
        self.count += 1
        streamed = bool(flags & 8)  # sizes in a descriptor after the data
        self.left = None if streamed else csize
        self.descriptor = (20 if zip64 else 12) if streamed else 0
        self.decoder = None
        self.stored = not flags & 1 and method == 0 and not streamed
        if not flags & 1 and method == 8:
            self.decoder = zlib.decompressobj(-15)
        elif not flags & 1 and method == 12:
            self.decoder = bz2.BZ2Decompressor()
        elif streamed:
            self.ended = True  # nothing says where it ends
            return False
        self.content = self.open_member(self.count) if self.decoder is not None else None
        self.state = self._data
        return True

    def _data(self) -> bool:
        buffer = self.buffer
        if self.left is not None:
            if self.stored:  # its first bytes say whether it is compressed itself, or text
                if len(buffer) < min(self.left, 4096):
                    return False
                self.stored = False
                head = bytes(buffer[: min(self.left, 4096)])
                if compression_of(head[:10], containers=True) is not None or b"\0" not in head:
                    self.content = self.open_member(self.count)
            take = min(self.left, len(buffer))
            chunk = bytes(buffer[:take])
            del buffer[:take]
            self.left -= take
            if self.decoder is not None and not self.decoder.eof:
                self._decode(chunk)
            elif self.decoder is None and self.content is not None:
                self.content.write(chunk)
            if self.left:
                return False
        else:
            chunk = bytes(buffer)
            buffer.clear()
            if not self._decode(chunk):
                return False
            buffer[:0] = self.decoder.unused_data
        if self.content is not None:
            self.close_member(self.content)
            self.content = None
        self.state = self._descriptor if self.descriptor else self._header
        return True

    def _decode(self, chunk: bytes) -> bool:
        """Decompress ``chunk`` into the member's content; whether the member's stream ended."""
        d, write = self.decoder, self.content.write  # type: ignore[union-attr]
        while chunk and not d.eof:
            if isinstance(d, bz2.BZ2Decompressor):
                write(d.decompress(chunk, BLOCK_SIZE))
                while not d.eof and not d.needs_input:
                    write(d.decompress(b"", BLOCK_SIZE))
                chunk = b""
            else:
                write(d.decompress(chunk, BLOCK_SIZE))
                chunk = d.unconsumed_tail
                while not chunk and not d.eof and (more := d.decompress(b"", BLOCK_SIZE)):
                    write(more)
        return bool(d.eof)

    def _descriptor(self) -> bool:
        buffer = self.buffer
        if len(buffer) < 4:
            return False
        need = self.descriptor + (4 if buffer[:4] == b"PK\x07\x08" else 0)
        if len(buffer) < need:
            return False
        del buffer[:need]
        self.state = self._header
        return True

