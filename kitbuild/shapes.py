"""The generic shapes of private text the leak gate looks for (KB501-KB503), and the anchors they are found by.

A path under a home or cluster mount, a Windows user folder or a ``file://`` URL (KB501), an
e-mail address (KB502), a private IPv4 address (KB503). Each is a regex over UTF-8 bytes,
tried by :class:`kitbuild.leaks.LeakScanner` where one of its anchors is; text in UTF-16 or
UTF-32 is folded to one byte a character first, so the same regexes serve there.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from kitbuild.leakviews import Encoding, char

__all__ = ["ANCHORS", "EMAIL", "EMAIL_AT", "ENCODED_ANCHORS", "ESCAPE_LETTERS", "FOLD_AFTER", "FOLD_BEFORE", "LOCAL_CHARS", "Shape", "absolute_through_dots", "after_length_byte", "after_terminal_code", "escaped_before", "length_before", "letter_before", "local_part_start", "match_start", "name_bounded"]

# Every shape regex is tried only where one of its anchors (a literal every match contains) was
# found: on clean records the anchors' search runs at gigabytes a second, a regex tried at every
# byte at tens of megabytes. Each regex matches the shape plus the first name after its mount,
# so an allow entry can pass one folder and no more.

# A path shape starts where a path starts: not inside a word, a relative path ('a/data/x',
# './data/x'), a URL's path ('s3://bucket/data/x') or a non-ASCII name (see letter_before:
# after a typographic quote, a no-break space or a full-width colon it starts). A colon does not stop
# it, except a drive letter's ('C:/data', '10C:/data': a letter no letter comes before; a
# Windows path starts there, see _WINDOWS): 'gpu07:/scratch/u7' (scp, rsync, NFS) and
# 'PATH=/usr/bin:/home/ada/bin' are exactly the leaks this gate is for. A JSON escape before it
# ('\n/home/ada' in a log line) starts it too: the escape's letter is not part of the path; so
# does a byte-order mark (a file Notepad saved, whose first line is a path: its UTF-16 and
# UTF-32 forms fold to a space, see leakviews.Encoding.fold), and one more '/' before it
# ('//home/ada', as a join of '/' and '/home/ada' prints it), not after a URL's scheme.
_AFTER_ESCAPE = rb"(?<=\\[nrtbf])"
ESCAPE_LETTERS = frozenset(b"nrtbf")
_PATH_CHAR = rb"A-Za-z0-9_.~/-"
_PATH_START = (
    rb"(?:" + _AFTER_ESCAPE + rb"|(?<=\xef\xbb\xbf)|(?<=(?<![" + _PATH_CHAR + rb":])/)"
    rb"|(?<![" + _PATH_CHAR + rb"])(?<!(?<![A-Za-z])[A-Za-z]:))"
)
# One name after the mount: the characters file names use in practice (any non-ASCII byte
# included, so '/home/josé' is found whole), at most 255 bytes (the longest name most file
# systems allow; a longer run still fires on its first 255), never ending in '.', which closes
# a sentence far more often than it ends a folder's name ('see /data/runs.').
_NAME = rb"[A-Za-z0-9_.~+@%!$\x80-\xff-]{0,254}[A-Za-z0-9_~+@%!$\x80-\xff-]"
_MOUNTS = ("home", "Users", "root", "mnt", "scratch", "data", "srv", "work", "nfs", "gpfs", "lustre", "net", "usr/home")
# '/tmp' is left out on purpose: it names no person or machine, and records print it often.

_EMAIL_LOCAL = rb"A-Za-z0-9._%+-"
_EMAIL_DOMAIN = rb"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,63}(?![A-Za-z0-9-])"
# Without leading zeros: '10.05.30.123' is a time of day in a log, 'BIOS 10.00.00.01' a version.
_OCTET = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"


@dataclass(frozen=True, slots=True)
class Shape:
    code: str
    what: str
    pattern: re.Pattern[bytes]
    # Not looked for in binary data, but in its UTF-16 and UTF-32 text (a file of it has NULs):
    # an e-mail shape turns up by chance in compressed or random bytes (2 in 30 MB of random
    # bytes, measured), and a build must not fail on chance with only an allow entry for a way
    # out; a shape with a NUL between its characters does not.
    # Private strings, withheld digests and paths under a private mount are specific enough
    # that a match in binary data is no accident, and a binary file (a SQLite index, a pickle)
    # carries them as readable bytes: those are looked for everywhere.
    text_only: bool = False
    # A path, which starts where no letter does (see letter_before and after_terminal_code).
    path: bool = False
    # A home folder, which counts after '..' too in an absolute path (see absolute_through_dots).
    home: bool = False


def _mount(mount: str) -> Shape:
    # '/home//ada' and '/home/./ada' are /home/ada.
    pattern = _PATH_START + b"/" + mount.encode() + rb"/(?:/|\./)*" + _NAME
    return Shape("KB501", f"a private path (/{mount}/…)", re.compile(pattern), path=True, home=mount in ("home", "Users", "usr/home"))


_SHAPES_BY_MOUNT = {mount: _mount(mount) for mount in _MOUNTS}
_WINDOWS = Shape(
    "KB501",
    "a private path (C:\\Users\\…)",
    # A JSON encoder doubles each backslash; forward slashes are a Windows path too. A drive letter
    # starts a path after anything: no word or POSIX path runs on into 'C:\\Users\\', so
    # 'run10C:\\Users\\ada', 'éC:\\Users\\ada' and 'earlierC:\\Users\\ada' (a rewritten path glued
    # to it) name ada's. So it is no 'path' shape, which a letter before it would stop.
    re.compile(rb"[A-Za-z]:(?:\\\\|\\|/)(?:Users|users|USERS)(?:\\\\|\\|/)" + _NAME),
)
_FILE_URL = Shape("KB501", "a file:// URL", re.compile(rb"(?<![A-Za-z0-9_.~+-])(?:file|FILE)://" + rb"/?" + _NAME))
EMAIL = Shape(
    "KB502",
    "an e-mail address",
    re.compile(rb"(?:" + _AFTER_ESCAPE + rb"|(?<![" + _EMAIL_LOCAL + rb"]))[" + _EMAIL_LOCAL + rb"]{1,64}" + _EMAIL_DOMAIN),
    text_only=True,
)
_IPV4 = Shape(
    "KB503",
    "a private IPv4 address",
    # Not part of a longer dotted number: '1.10.0.0.5' is a version, not an address. Nor a
    # range's own first address ('10.0.0.0/8' in a config, a .NET assembly's version 10.0.0.0):
    # it names no machine.
    re.compile(
        rb"(?<![0-9.])(?!(?:10\.0\.0\.0|172\.16\.0\.0|192\.168\.0\.0)(?![0-9]|\.[0-9]))(?:10(?:\." + _OCTET + rb"){3}|172\.(?:1[6-9]|2[0-9]|3[01])(?:\." + _OCTET + rb"){2}"
        rb"|192\.168(?:\." + _OCTET + rb"){2})(?![0-9]|\.[0-9])"
    ),
    text_only=True,
)
# An e-mail address is found from its domain ('@' and a dotted name ending in letters), one `re`
# pass in C: records print '@' in every line ('recall@10'), and an anchor for each would cost a
# Python call per line. Its local part is then read back from the '@'.
EMAIL_AT = re.compile(_EMAIL_DOMAIN)
_MAX_LOCAL = 64

# Anchor -> (shape, how many characters before the anchor the shape's match starts); None: an
# e-mail's local part, read back from the '@'. No two anchors overlap where both could fire (a
# mount's anchor after another's, as in '/data/home/', is preceded by a letter, which the shape
# refuses), so the automaton's non-overlapping matches miss no shape.
_Anchors = dict[bytes, tuple[tuple[Shape, int | None], ...]]
ANCHORS: _Anchors = {
    **{f"/{mount}/".encode(): ((shape, 0),) for mount, shape in _SHAPES_BY_MOUNT.items() if mount != "Users"},
    b"/Users/": ((_SHAPES_BY_MOUNT["Users"], 0), (_WINDOWS, 2)),
    b"/users/": ((_WINDOWS, 2),),
    b"/USERS/": ((_WINDOWS, 2),),
    **{b":" + sep + users + sep: ((_WINDOWS, 1),) for sep in (b"\\", b"\\\\") for users in (b"Users", b"users", b"USERS")},
    b"file://": ((_FILE_URL, 0),),
    b"FILE://": ((_FILE_URL, 0),),
    b"10.": ((_IPV4, 0),),
    b"172.": ((_IPV4, 0),),
    b"192.168.": ((_IPV4, 0),),
}
# In UTF-16 and UTF-32 an e-mail has no domain regex to find it by: its '@' is an anchor there.
ENCODED_ANCHORS: _Anchors = {**ANCHORS, b"@": ((EMAIL, None),)}

# How much text around a UTF-16/32 anchor is read to try its shapes: an e-mail's local part
# before, its domain after (the longest match any shape allows, plus a character each side).
FOLD_BEFORE = _MAX_LOCAL + 8
FOLD_AFTER = 700


def local_part_start(text: bytes, at: int) -> int | None:
    """Where the local part before the '@' at ``at`` starts, or None when it is empty or longer than an e-mail's."""
    start = at
    while start > 0 and at - start <= _MAX_LOCAL and text[start - 1] in LOCAL_CHARS:
        start -= 1
    if start < at - _MAX_LOCAL or start == at:
        return None
    # '\tada@...' in JSON is a tab and 'ada@...'.
    if start > 0 and text[start - 1] == 0x5C and text[start] in ESCAPE_LETTERS and start + 1 < at:
        start += 1
    return start


LOCAL_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")


def match_start(text: bytes, anchor: int, back: int | None) -> int | None:
    """Where a shape's match starts for its anchor: ``back`` characters before it, or (None)
    where the local part before an e-mail address's '@' starts; None where there is none."""
    if back is None:
        return local_part_start(text, anchor)
    return anchor - back if anchor >= back else None


def letter_before(text: bytes, start: int, binary: bool = False) -> bool:
    """Whether a non-ASCII letter ends right before ``start`` (past the one extra '/' a path may
    start with): 'données/home/x' is a relative path. In text, a letter, digit or mark in UTF-8,
    or a byte that is no UTF-8 (a letter of Latin-1 or GBK text, as a legacy Windows log writes
    'généré/data/x'); any other character lets a path start: a typographic quote, a no-break
    space, a full-width colon, an arrow. In binary data no byte above ASCII is a letter: it is a
    length or type byte (msgpack's 0xd9 and length read as an Arabic letter in UTF-8)."""
    if start > 0 and text[start - 1] == 0x2F:
        start -= 1
    if start == 0 or text[start - 1] < 0x80 or binary:
        return False
    category = unicodedata.category(text[max(0, start - 4) : start].decode("utf-8", "surrogateescape")[-1])
    return category[0] in "LNM" or category == "Cs"  # (a byte that is no UTF-8 decodes to a lone surrogate)


_PATH_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~/-")


def absolute_through_dots(text: bytes, start: int) -> bool:
    """Whether text[:start] ends with '..' in an absolute path ('/opt/app/../../home/ada' is
    /home/ada); a relative one ('../home/x', an app's '../home/home.component'), a URL's path
    and 'loading...' are not."""
    if not text.endswith(b"..", 0, start):
        return False
    at = start
    while at > 0 and text[at - 1] in _PATH_BYTES:
        at -= 1
    return text[at] == 0x2F and (at == 0 or text[at - 1] != 0x3A)


_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def after_length_byte(text: bytes, start: int, binary: bool = True) -> bool:
    """Whether text[:start] ends with one letter or digit that no path byte comes before: in
    binary data, a string's length, as a pickle writes it after its opcode ('\x8cK' then a path
    of 75 bytes), an Avro or protobuf field its varint. It is no part of the path after it; in
    text it is ('x a/home/b' names a relative path), and so is a '.' ('./data/x'), but where a
    byte no text file holds comes before it (a NUL-free msgpack or protobuf file)."""
    if start < 2 or text[start - 1] not in _ALNUM or text[start - 2] in _PATH_BYTES:
        return False
    return binary or _foreign(text, start - 2)


# How a record writes the escape that starts a terminal's control sequence: the byte itself, and
# the spellings a shell script, C, Python or JSON (a notebook's traceback) give it.
_ESCAPE_SPELLINGS = (b"\x1b[", b"\\033[", b"\\e[", b"\\x1b[", b"\\x1B[", b"\\u001b[", b"\\u001B[")
_CONTROL_PARAMETERS = frozenset(b"0123456789;?")


def after_terminal_code(text: bytes, start: int) -> bool:
    """Whether text[:start] ends with a terminal's control sequence (``ESC[0;32m``, a colour;
    ``ESC[2K``, a line erased), which a terminal shows as nothing: its last letter is no part
    of the path or name after it. Coloured logs and every notebook traceback print them."""
    at = start - 1
    if at < 0 or not 0x40 <= text[at] <= 0x7E:
        return False
    while at > 0 and start - at < 24 and text[at - 1] in _CONTROL_PARAMETERS:
        at -= 1
    return any(text.endswith(spelling, 0, at) for spelling in _ESCAPE_SPELLINGS)


def escaped_before(text: bytes, start: int) -> bool:
    """Whether the letter right before ``start`` ends an escape, not a word: a JSON escape's
    ('\\ngpu07', a log line that follows a line end in a JSON string) or a terminal code's
    ('ESC[1mgpu07'). A name or a path starts at ``start`` all the same: the leak gate reads it
    there, and so do the rules (kitbuild.matchers), which must rewrite all the gate would find."""
    return start >= 2 and text[start - 1] in ESCAPE_LETTERS and text[start - 2] == 0x5C or after_terminal_code(text, start)


def _is_text(byte: int) -> bool:
    return 0x20 <= byte < 0x7F


def _foreign(text: bytes, at: int) -> bool:
    """Whether no text file holds text[at] where it stands: a control character but a tab, a line
    end or a terminal's escape; DEL; a UTF-8 lead byte before an ASCII one (msgpack's 0xd9 before
    a string's length); a continuation byte after an ASCII one (msgpack's 0xa5, the head of a
    string of 5 bytes, after the string before it)."""
    byte = text[at]
    if byte < 0x80:
        return byte < 0x20 and byte not in (0x09, 0x0A, 0x0D, 0x1B) or byte == 0x7F
    if byte >= 0xF8:
        return True
    if byte >= 0xC0:
        return at + 1 >= len(text) or text[at + 1] < 0x80
    return at == 0 or text[at - 1] < 0x80


def _lengths(byte: int) -> tuple[int, ...]:
    """The string lengths one byte before a string can state: as it is (a pickle's, msgpack's
    str8, protobuf's), as Avro's zigzag varint (twice the length), as CBOR's head of a short
    text (0x60 plus it) or msgpack's (0xa0 plus it). 0 where a reading does not apply."""
    return (byte, byte // 2 if byte % 2 == 0 else 0, byte - 0x60 if 0x60 <= byte < 0x78 else 0, byte - 0xA0 if 0xA0 <= byte < 0xC0 else 0)


def length_before(text: bytes, start: int, binary: bool) -> bool:
    """Whether text[start - 1] is the length of a string that starts at ``start``: the string is
    that long, holds nothing a text file would not and ends there (the data ends, or a byte that
    is no printable ASCII follows: the next opcode, tag or length), read as _lengths reads it (a
    pickle's 0x8c 'X' before 88 bytes, msgpack's 0xd9 'd' before 100, protobuf field 1's '\\n.'
    before 46). In a file read as text (a msgpack, protobuf or CBOR file with no NUL byte), only
    where a byte no text file holds comes before the length or after the string."""
    if start < 1:
        return False
    for n in _lengths(text[start - 1]):
        last = start + n
        if n and last <= len(text) and not any(_foreign(text, at) for at in range(start, last)) and (last == len(text) or not _is_text(text[last])):
            if binary or start >= 2 and _foreign(text, start - 2) or last < len(text) and _foreign(text, last):
                return True
    return False


def _measured(text: bytes, start: int, end: int) -> bool:
    """Whether the run of text holding text[start:end] is a string that ends at ``end`` by the
    length written before it: in one byte (which may itself read as text; see _lengths), or in
    four, little-endian (a protocol 1 to 3 pickle's 'X' and the string's length)."""
    first = start
    while first > 0 and _is_text(text[first - 1]):
        first -= 1
    for at in (first, first + 1) if first < start else (first,):
        n = end - at
        if at >= 1 and n in _lengths(text[at - 1]) or at >= 4 and text[at - 4 : at] == n.to_bytes(4, "little"):
            return True
    return False


# A private string with no '/' or '\\' is a name (a host, a user): it fires only as a whole name,
# so 'gpu07' is not found in 'gpu070', 'xgpu07' or 'x.gpu07' (another host), and is found in
# 'gpu07.lab.example.org' (its short form is private either way), at a sentence's end ('gpu07.'),
# and, with a dot of its own, after one: 'x.gpu07.lab.example.org' is in its domain. '_' is no
# part of a host name (RFC 1123): 'host_gpu07_rank0' names it too. A path fires anywhere.
_NAME_BEFORE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")
_NAME_AFTER = _NAME_BEFORE - {ord(".")}


def name_bounded(text: bytes, start: int, end: int, encoding: Encoding, dotted: bool = False, binary: bool = False, records: bool = False) -> bool:
    """Whether a name found at text[start:end] stands alone (see _NAME_BEFORE). ``records``: the
    data is a file of records (kitbuild.recordfiles), whose cells may lie end to end."""
    unit = encoding.unit
    before, escape, after = char(text, start - unit, encoding), char(text, start - 2 * unit, encoding), char(text, end, encoding)
    # A JSON escape's letter ('\\ngpu07'), a terminal code's ('ESC[1mgpu07'), is no part of the name.
    if escaped_before(text, start) if unit == 1 else before in ESCAPE_LETTERS and escape == 0x5C:
        before = None
    # A letter or digit before the name that is a string's length (see length_before): a pickle
    # writes a string of 88 bytes as 0x8c 'X' and the string ('Xgpu07...'). And, in binary data, a
    # letter after it that a byte no text holds follows, where a length before the string
    # measures it to there: an opcode or a tag (protocol 1 to 3 pickles write 'q' and a memo
    # number after each string; protobuf field 8's tag is 'B'). 'xgpu07' and 'gpu07a' between
    # NULs (other machines' names as C strings) stay other names: no length measures them.
    if unit == 1:
        if before is not None and length_before(text, start, binary):
            before = None
        if binary and after is not None and end + 1 < len(text) and not _is_text(text[end + 1]) and _measured(text, start, end):
            after = None
    # A file of records packs its cells with no byte between them: a SQLite row ('r17', 'gpu07',
    # 'done') holds 'r17gpu07done', a NumPy array of strings as wide as the widest 'gpu06gpu07'.
    # There a letter or digit before the name, and a letter after it, is the next cell's; a digit
    # after it is still another machine's name ('gpu070'), and so are '-' and '.' before it.
    if records:
        if before is not None and before in _ALNUM:
            before = None
        if after is not None and 0x61 <= after | 0x20 <= 0x7A:
            after = None
    return (before not in _NAME_BEFORE or dotted and before == 0x2E) and after not in _NAME_AFTER
