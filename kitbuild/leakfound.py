"""What the leak scan found (kitbuild.leaks): a :class:`Leak` says what kind of private text lies
where, never the text; :func:`settle` makes one finding per code and place of all a scan's
readings found, keeping the one that says most.
"""

from __future__ import annotations

from dataclasses import dataclass

from kitbuild.leakviews import Encoding

__all__ = ["Found", "Leak", "settle"]


@dataclass(frozen=True, slots=True)
class Leak:
    """Private text at ``offset`` of the scanned data: ``code`` and ``what`` kind of thing, never the text."""

    code: str
    offset: int
    what: str


# (code, raw offset, length, what, encoding, allowed) of a finding before it is settled (an
# allowed one is kept until then, for the mirror rule: see settle)
Found = tuple[str, int, int, str, Encoding, bool]


def settle(found: list[Found], lo: int, hi: int) -> list[Leak]:
    """One finding per code and raw offset, those starting in [lo, hi), in order.

    UTF-16 (UTF-32) text of characters below U+0100 reads as the same text in the other byte order
    one (three) bytes earlier, and nothing near it tells which is meant. Little-endian is what
    nearly every tool writes (Windows, PowerShell, .NET), so where both readings find the same
    thing the big-endian one is dropped: little-endian text gets its exact offset, and big-endian
    text that can be read both ways one a byte (three bytes) late. An allowed little-endian reading
    still drops a big-endian one it overlaps, which may read less of it (at the text's start,
    'ci@x.org' after a byte-order mark reads 'i@x.org' the other way).
    """
    little: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for code, offset, length, _, encoding, _ in found:
        if encoding.mirror and not encoding.big:
            little.setdefault((code, encoding.unit), []).append((offset, offset + length * encoding.unit))
    best: dict[tuple[str, int], tuple[int, str]] = {}
    for code, offset, length, what, encoding, allowed in found:
        if allowed or not lo <= offset < hi:
            continue
        at = offset + encoding.mirror
        if encoding.big and any(a < at + length * encoding.unit and at < b for a, b in little.get((code, encoding.unit), ())):
            continue
        # Two findings of one code at one offset: the longest says most ('gpu07.lab.example.org'
        # rather than 'gpu07'), then the first description, so the choice is the same every time.
        key = (code, offset)
        if key not in best or (-length, what) < (-best[key][0], best[key][1]):
            best[key] = (length, what)
    return [Leak(code, offset, what) for (code, offset), (_, what) in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
