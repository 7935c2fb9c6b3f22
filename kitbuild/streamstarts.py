"""Where a compressed stream starts in a file that is not compressed itself, and whether a file
is one: the magic bytes of a format (kitbuild.compressed), or a zlib stream, which has none.

zlib's two header bytes turn up by chance every 16 KiB of random data, so a zlib stream is read
only where something else says one starts: a file's first byte (a git object, a ``.zz`` file),
a PDF stream's data, a PNG's compressed text chunk, an object of a git pack (kitbuild.tarlayout
finds those).
"""

from __future__ import annotations

import base64

from kitbuild.compressed import compression_of

__all__ = ["file_compression", "is_zlib", "stream_at"]

# A PNG text chunk's language tag and translated keyword, each read this far for its NUL.
_PNG_FIELD = 256


def is_zlib(header: bytes) -> bool:
    """Whether two bytes are a zlib header (RFC 1950) a reader can open: deflate, a window of at
    most 32 KiB, no preset dictionary, and the two bytes a multiple of 31."""
    return len(header) >= 2 and header[0] & 0x0F == 8 and header[0] >> 4 <= 7 and not header[1] & 0x20 and (header[0] << 8 | header[1]) % 31 == 0


def file_compression(head: bytes) -> str | None:
    """The compression a file's first bytes say the whole file is in, or None."""
    return compression_of(head) or ("zlib" if is_zlib(head[:2]) else None)


def stream_at(data: bytes, start: int) -> tuple[str, int] | None:
    """The compression of a stream found at ``start`` (kitbuild.embedded), and where its
    compressed bytes begin; None if there is none after all.

    At a format's magic bytes, or a zlib header where a git pack's object starts, the stream
    starts there. At the start of a PDF stream's data (the keyword ``stream`` and its line end)
    or of a PNG text chunk (``zTXt``, ``iTXt``), the file's own structure says where a zlib
    stream begins: a figure's title, its labels or its metadata can hold a path there."""
    kind = compression_of(data[start : start + 16])
    if kind is not None:
        return kind, start
    if data.startswith(b"stream", start):
        at = start + (8 if data.startswith(b"\r\n", start + 6) else 7)
    elif data.startswith((b"zTXt", b"iTXt"), start):
        # keyword NUL, then zTXt: method 0; iTXt: compressed 1, method 0, language tag NUL,
        # translated keyword NUL.
        keyword = data.find(b"\0", start + 5, start + 84)
        if keyword < 0:
            return None
        if data[start] == ord("z"):
            at = keyword + 2 if data[keyword + 1 : keyword + 2] == b"\0" else -1
        elif data[keyword + 1 : keyword + 3] == b"\1\0":
            tag = data.find(b"\0", keyword + 3, keyword + 3 + _PNG_FIELD)
            translated = data.find(b"\0", tag + 1, tag + 1 + _PNG_FIELD) if tag >= 0 else -1
            at = translated + 1 if translated >= 0 else -1
        else:
            return None
        if at < 0:
            return None
    else:
        at = start
    if is_zlib(data[at : at + 2]):
        return "zlib", at
    if data.startswith(b"stream", start) and _ascii85_zlib(data[at : at + 64]):
        return "ascii85", at
    return None


def _ascii85_zlib(text: bytes) -> bool:
    """Whether a PDF stream's data is ASCII85 of a zlib stream (/ASCII85Decode /FlateDecode)."""
    letters = text.translate(None, b" \t\r\n\f").replace(b"z", b"!!!!!")
    try:
        return is_zlib(base64.a85decode(letters[:10]))
    except ValueError:
        return False
