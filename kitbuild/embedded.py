"""Compressed data inside a file, read by the leak scan as the file is read: in base64 in a text
record, and as it is in a binary file (a tar of .gz files).

A record may hold a file inside it: ``"log": "H4sIAAAA…"`` (gzip, then base64, as a JSON API or a
Helm release stores a blob), a zip or a ``.zst`` dump in a data URI. ``base64 -d | zcat`` shows
the text at once, and neither the raw scan nor the base64 scan (kitbuild.leakbase64, which looks
for what it wants encoded) can see inside. So a run of base64 letters that starts as the
encoding of a compressed format's magic bytes does, or a PDF's or a PNG's (a notebook's figure,
whose zlib streams hold its text: :data:`kitbuild.leakbase64.COMPRESSED_STARTS`, found in the
leak scanner's one pass) is decoded as the file is read, window after window, and what it holds
goes through the same decompression and the same inner pass as a compressed file's
(kitbuild.compressed), with the same bounds.

A finding there is placed at the run's first letter and says where in the decompressed text it
lies: ``in the base64 here, in its gzip content at line 3, column 9: a private path (/home/…)``.
Only text files are read so (a binary file's bytes are no record's base64), and only a run on
one line (its '/' may be written '\\/'): base64 wrapped over lines ends at the first line end.

A binary file that is not compressed itself may hold compressed streams as they are: ``tar cf``
of ``.jsonl.gz`` logs (a tar stores each member's bytes unchanged), a cpio or ar archive, a
parquet page in gzip or zstandard. So where a format's magic bytes lie in binary data
(:data:`kitbuild.leakbase64.MAGICS`, found in the same pass), the bytes from there are read
through that decompressor too, until its stream ends or turns out corrupt (a magic found by
chance in random bytes: a few bytes in, as a rule). One stream is open at a time, and a magic
inside the stream being read (a concatenated gzip's next member, a zip's next local header) is
its own reader's business. A finding is placed at the magic's first byte: ``in the compressed
data here, in its gzip content at line 3, column 9: …``. A text file is not read so: verify
cuts a large one into parts (kitbuild.parts), and a part could then read less than the whole.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Callable

from kitbuild.compressed import Budget, Inner, Unpacked, compression_of
from kitbuild.leakbase64 import STANDARD
from kitbuild.leaks import Leak
from kitbuild.streamstarts import stream_at

__all__ = ["Embedded"]

# Letters, and '/' as a JSON encoder that escapes it writes it (PHP's default, .NET's); a class
# then escaped slashes, not an alternation a letter: 700 against 13 MB/s over a long run.
_LETTERS = re.compile(rb"[A-Za-z0-9+/_-]*(?:\\/[A-Za-z0-9+/_-]*)*")
# Decoded bytes enough to tell a format by its magic (bzip2's is ten bytes long).
_HEAD = 16
# Bytes a stream is read past a magic inside it before deciding whether the magic is its own: a
# member that ends right before another stream has to see that stream's first bytes (a zip's
# next header: 30) to know that it ended.
_AHEAD = 32


class _Run:
    """One run of base64 letters being decoded: where it starts in the file, and its layer once
    its first bytes have said which format it holds."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.letters = b""  # fewer than four, left over from the last piece
        self.head = b""  # decoded bytes until the format is known
        self.layer: Unpacked | None = None
        self.other = False  # no compressed format after all: the rest is passed over


class Embedded:
    """The compressed data of one file, fed the file's windows in order (see kitbuild.observe):
    base64 runs in text, streams as they are in ``binary`` data. ``make_inner`` gives a fresh
    inner pass (one looking for leaks only); ``budget``: what every layer of the file may write,
    shared with the layers around this one if it is not ``outermost`` (in the file itself, what
    the runs decode to is what the file holds, for the bound)."""

    def __init__(self, make_inner: Callable[[], Inner], budget: Budget, outermost: bool, binary: bool = False) -> None:
        self.make_inner, self.budget, self.outermost, self.binary = make_inner, budget, outermost, binary
        self.run: _Run | None = None
        self.stream: Unpacked | None = None
        self.stream_start = 0  # the file offset where the open stream starts,
        self.stream_fed = 0  # and up to which it has been fed
        self.found: list[Leak] = []

    def settle(self, window: bytes, base: int, lo: int, hi: int, starts: list[int]) -> None:
        """The data of window[lo:hi] (``base``: the file offset of window[0]) that continues an
        open run or stream, or starts one at ``starts`` (offsets in ``window``, in order)."""
        if self.binary:
            self._streams(window, base, hi, starts)
            return
        at = lo
        if self.run is not None:
            at = self._read(window, lo, hi)
        for start in starts:
            if start >= at:
                self.run = _Run(base + start)
                at = self._read(window, start, hi)

    def finish(self) -> list[Leak]:
        if self.run is not None:
            self._close()
        if self.stream is not None:
            self._end_stream()
        return self.found

    def _streams(self, window: bytes, base: int, hi: int, starts: list[int]) -> None:
        for start in starts:
            if self.stream is not None:
                self._feed_stream(window, base, start + _AHEAD)
                if not self.stream.ended:
                    continue  # a magic inside the stream being read
                self._end_stream()
            found = stream_at(window, start)
            if found is not None:
                self.stream = Unpacked(found[0], self.make_inner, self.budget, outermost=self.outermost)
                self.stream_start, self.stream_fed = base + start, base + found[1]
        if self.stream is not None:
            self._feed_stream(window, base, hi)
            if self.stream.ended:
                self._end_stream()

    def _feed_stream(self, window: bytes, base: int, until: int) -> None:
        """Feed the open stream the window's bytes up to ``until`` (an offset in ``window``)."""
        end = base + min(until, len(window))
        if end > self.stream_fed:
            self.stream.feed(window[self.stream_fed - base : end - base])  # type: ignore[union-attr]
            self.stream_fed = end

    def _end_stream(self) -> None:
        stream, self.stream = self.stream, None
        assert stream is not None
        leaks = stream.finish()
        if stream.too_large and not stream.read:
            # A zstandard magic found by chance (once in 4 GiB of a JPEG's or a video's bytes)
            # reads as a frame that asks for a huge window as often as not: nothing to report.
            leaks = [leak for leak in leaks if leak.code != "KB504"]
        self.found += [Leak(leak.code, self.stream_start, f"in the compressed data here, {leak.what}") for leak in leaks]

    def _read(self, window: bytes, at: int, hi: int) -> int:
        """Decode the run's letters from ``at``; close it where they end before ``hi`` (not at a
        backslash just before it, which may start a '\\/' the next window ends)."""
        run = self.run
        assert run is not None
        end = _LETTERS.match(window, at, hi).end()  # type: ignore[union-attr]
        letters = run.letters + window[at:end].replace(b"\\/", b"/")
        whole = len(letters) // 4 * 4
        run.letters = letters[whole:]
        self._feed(run, letters[:whole])
        if end < hi and not (end == hi - 1 and window[end] == 0x5C):
            self._close()
        return end

    def _feed(self, run: _Run, letters: bytes) -> None:
        if run.other or not letters:
            return
        try:
            data = base64.b64decode(letters.translate(STANDARD), validate=True)
        except binascii.Error:  # a last group base64 cannot decode: nothing more to read
            run.other = True
            return
        if run.layer is None:
            run.head += data
            if len(run.head) < _HEAD:
                return
            data, run.head = run.head, b""
            kind = compression_of(data, containers=True)
            if kind is None:
                run.other = True
                return
            run.layer = Unpacked(kind, self.make_inner, self.budget, outermost=self.outermost)
        run.layer.feed(data)

    def _close(self) -> None:
        run, self.run = self.run, None
        assert run is not None
        tail = run.letters
        if len(tail) >= 2:
            self._feed(run, tail + b"=" * (4 - len(tail)))
        if run.layer is None and run.head and not run.other:
            kind = compression_of(run.head, containers=True)  # a run shorter than the head
            if kind is not None:
                run.layer = Unpacked(kind, self.make_inner, self.budget, outermost=self.outermost)
                run.layer.feed(run.head)
        if run.layer is not None:
            self.found += [Leak(leak.code, run.start, f"in the base64 here, {leak.what}") for leak in run.layer.finish()]
