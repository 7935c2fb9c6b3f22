"""Byte offsets as lines and columns, and a stream read a block or a line at a time: what the
pass (kitbuild.observe), the rewrite (kitbuild.commands.build) and the reports share about lines."""

from __future__ import annotations

from typing import BinaryIO, Iterable, Iterator

BLOCK_SIZE = 1 << 20  # what a file is read in, here and in kitbuild.observe


def locate(blocks: Iterable[bytes], offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """The (line, column) of each byte offset, both counted from 1, in one pass over ``blocks``.
    A negative offset (a leak inside a compressed file's content) has no place here."""
    want = sorted(o for o in set(offsets) if o >= 0)
    out: dict[int, tuple[int, int]] = {}
    line, last_nl, pos, i = 1, -1, 0, 0
    for block in blocks:
        if i == len(want):
            break
        counted = 0
        while i < len(want) and want[i] < pos + len(block):
            at = want[i] - pos
            line += block.count(b"\n", counted, at)
            nl = block.rfind(b"\n", counted, at)
            if nl >= 0:
                last_nl = pos + nl
            counted = at
            out[want[i]] = (line, want[i] - last_nl)
            i += 1
        line += block.count(b"\n", counted)
        nl = block.rfind(b"\n", counted)
        if nl >= 0:
            last_nl = pos + nl
        pos += len(block)
    for o in want[i:]:  # past the end: the file changed since it was observed
        out[o] = (line, o - last_nl)
    return out


def blocks_of(stream: BinaryIO) -> Iterator[bytes]:
    while block := stream.read(BLOCK_SIZE):
        yield block


def line_chunks(stream: BinaryIO, first: bytes = b"", size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """``first``, then the rest of ``stream``, in chunks of about ``size`` bytes that end at a
    line end (the last may not): what a rewrite takes, one whole line at least at a time."""
    parts: list[bytes] = [first] if first else []
    while True:
        block = stream.read(size)
        if not block:
            if parts:
                yield b"".join(parts)
            return
        cut = block.rfind(b"\n")
        if cut < 0:
            # No line end yet: keep the pieces and join once, so a long line costs O(n).
            parts.append(block)
            continue
        parts.append(block[: cut + 1])
        yield b"".join(parts)
        parts = [block[cut + 1 :]] if cut + 1 < len(block) else []
