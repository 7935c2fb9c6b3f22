"""Private text inside base64 and hex digits, as the leak scan finds it.

Base64 is how text travels inside other text: a data URI, a JWT's claims, a config embedded in a
JSON record, a Kubernetes secret, a ``sha256-…`` integrity digest. ``base64 -d`` reads it back
at once, so the gate must too. Decoding every run of base64 letters is out of the question
(every word and every hex digest is one), so the scan looks for what it wants to find, encoded:
each anchor of a private-path shape and each private string, as base64 at each of the three
places it can start within a 3-byte group (:func:`cores`), in the one hyperscan pass with the
rest (kitbuild.leaks). Where one occurs, the run of base64 around it is decoded, aligned on it,
and the decoded text is searched like any other view: the shapes, the private strings with their
boundaries, the allow list. A withheld digest is also looked for as base64 of its 32 bytes (how
Subresource Integrity and npm print a digest), which needs no decoding: 30 bytes of a sha256 do
not turn up by chance.

A JSON document in base64 (a JWT's claims, a config in a Kubernetes secret) is also decoded
where a run of letters starts as one does (:data:`DOCUMENT_STARTS`), so what no anchor gives
away there, an e-mail address above all, is found too.

Hex digits (``bytes.hex()``, ``xxd -p``, either case) are read the same way: each anchor and
private string is looked for as hex (:func:`hex_forms`), and the run of digits around decoded.

Both alphabets are read (``+/`` and the URL-safe ``-_``). Base64 wrapped over lines (MIME, PEM)
is read across its line ends in text: a view leaves them out (kitbuild.leakviews), and its base64
is searched as any view's is.
"""

from __future__ import annotations

import base64
import re
from typing import Iterable
from urllib.parse import quote

__all__ = ["COMPRESSED_STARTS", "CONTAINED", "CONTAINERS", "MAGICS", "DOCUMENT_STARTS", "STANDARD", "cores", "decoded_hex_run", "decoded_run", "hex_forms", "percent_forms", "starts_run", "wide_cores"]

# The first letters of base64 of '{"x', '{"1', '{ "', '{\n' and '[{': a JSON document's start;
# then the letters of those letters in base64 (a JWT in a Kubernetes secret: a document base64'd
# twice, which kitbuild.leaks decodes a layer at a time).
_ONCE = (b"eyJ", b"eyI", b"eyAi", b"ewo", b"W3s")
DOCUMENT_STARTS = _ONCE + tuple(base64.b64encode(start)[: len(start) * 8 // 6] for start in _ONCE)

# The magic bytes of gzip, bzip2, xz, zstandard and a zip member (kitbuild.compressed tells them
# apart), where a compressed stream inside a binary file may start (a tar of .gz files); and the
# first letters of their base64, in either alphabet, where a run in text starts that is read
# through its decompressor (both: kitbuild.embedded).
MAGICS = (b"\x1f\x8b\x08", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"PK\x03\x04")
# Where a PDF's stream data (zlib, as a rule) and a PNG's compressed text chunks start: they have
# no magic of their own (kitbuild.streamstarts.stream_at finds the zlib stream from here). Both
# are binary files (kitbuild.fileformat.is_binary), and these are looked for in binary data only.
CONTAINED = (b"stream\r\n", b"stream\n", b"zTXt", b"iTXt")
# The first bytes of a PDF and of a PNG: files whose own structure says where their zlib streams
# are (kitbuild.streamstarts), found in base64 too (a notebook's output, an attachment in a
# record) and read through kitbuild.embedded as a compressed run is.
CONTAINERS = (b"%PDF-", b"\x89PNG\r\n\x1a\n")
COMPRESSED_STARTS = tuple(dict.fromkeys(encode(m)[: len(m) * 8 // 6] for m in MAGICS + CONTAINERS for encode in (base64.b64encode, base64.urlsafe_b64encode)))

_URL_SAFE = bytes.maketrans(b"+/", b"-_")
# The URL-safe alphabet read as the standard one (kitbuild.embedded decodes with it too).
STANDARD = bytes.maketrans(b"-_", b"+/")
_LETTERS = re.compile(rb"[A-Za-z0-9+/_-]*")
_HEX_DIGITS = re.compile(rb"[0-9A-Fa-f]*")


def cores(needle: bytes) -> Iterable[bytes]:
    """What ``needle`` looks like in any base64 that holds it: for each of the three places it
    can start in a 3-byte group, the encoding of its whole groups (the letters that depend on
    nothing else), in each alphabet. A needle too short to fill a group at some start has no
    core there."""
    found: list[bytes] = []
    for skip in (0, 1, 2):
        body = needle[skip:]
        whole = len(body) // 3 * 3
        if whole:
            core = base64.b64encode(body[:whole])
            found += [core, core.translate(_URL_SAFE)]
    return dict.fromkeys(found)


def wide_cores(needle: bytes) -> Iterable[bytes]:
    """The cores of ``needle`` (UTF-8) and of its UTF-16 in either byte order: PowerShell's
    -EncodedCommand is base64 of UTF-16LE, and Java writes UTF-16 big-endian. (Not of UTF-32,
    which no tool writes base64 of: its long cores doubled the memory of a scanner's tables.)"""
    text = needle.decode("utf-8")
    forms = (needle, text.encode("utf-16-le"), text.encode("utf-16-be"))
    return dict.fromkeys(core for form in forms for core in cores(form))


def starts_run(data: bytes, start: int) -> bool:
    """Whether data[start] is the first letter of a run of base64 letters."""
    return start == 0 or _LETTERS.fullmatch(data, start - 1, start) is None


def _around(data: bytes, start: int, reach: int, letters: re.Pattern[bytes], group: int) -> tuple[int, bytes]:
    """The run of ``letters`` around ``start``, up to ``reach`` of them either way, starting a
    whole number of ``group``s before it: (its first offset, the run)."""
    before = data[max(0, start - reach) : start][::-1]
    back = len(letters.match(before).group()) // group * group  # type: ignore[union-attr]
    ahead = len(letters.match(data, start, min(len(data), start + reach)).group())  # type: ignore[union-attr]
    return start - back, data[start - back : start + ahead]


def decoded_run(data: bytes, start: int, reach: int) -> tuple[int, bytes]:
    """The base64 run around a core found at ``start`` (a group's first letter), decoded up to
    ``reach`` letters either way: (the raw offset of its first letter, the decoded bytes). Decoded
    byte ``i`` came from the letters at ``first + i // 3 * 4``."""
    first, letters = _around(data, start, reach, _LETTERS, 4)
    whole = len(letters) // 4 * 4
    tail = letters[whole:]
    text = letters[:whole] + (tail + b"=" * (4 - len(tail)) if len(tail) >= 2 else b"")
    try:
        return first, base64.b64decode(text.translate(STANDARD), validate=True)
    except ValueError:  # binascii.Error: a last group that is no group (a stray letter)
        return first, base64.b64decode(letters[:whole].translate(STANDARD), validate=True)


def hex_forms(needle: bytes) -> tuple[bytes, ...]:
    """``needle`` in hex digits, as ``bytes.hex()`` and ``xxd -p`` print it and in capitals
    (as most other tools do): a byte is two digits wherever it starts, so no alignment to try."""
    return (needle.hex().encode(), needle.hex().upper().encode())


def percent_forms(text: str) -> tuple[bytes, ...]:
    """``text`` percent-encoded as a URL's path (its '/' kept) and as one of its parts (each '/'
    as '%2F'), as written and lower-cased, and each of those encoded once more (a URL in another's
    query string: '%252F'): those that differ from it."""
    once = [quote(spelling, safe=safe) for spelling in (text, text.lower()) for safe in ("/", "")]
    forms = dict.fromkeys(form.encode() for form in (*once, *(quote(form, safe="") for form in once)))
    return tuple(form for form in forms if b"%" in form)


def decoded_hex_run(data: bytes, start: int, reach: int) -> tuple[int, bytes]:
    """The run of hex digits around a form found at ``start``, decoded up to ``reach`` digits
    either way, in pairs aligned on it: (the raw offset of its first digit, the bytes). Decoded
    byte ``i`` came from the digits at ``first + 2 * i``."""
    first, digits = _around(data, start, reach, _HEX_DIGITS, 2)
    return first, bytes.fromhex(digits[: len(digits) // 2 * 2].decode("ascii"))
