"""The leak scanner's one hyperscan pass over data (kitbuild.leaks), and the automata it uses
where hyperscan is not.

Every byte of every file is searched for the shapes' anchors, the escapes a view decodes, the
private strings and withheld digests, and their base64 forms (kitbuild.leakbase64): one database
for them all reads each byte once.
"""

from __future__ import annotations

import functools

import ahocorasick_rs
import hyperscan

from kitbuild.leakviews import ESCAPE_FINDS, WIDE_ESCAPE_FINDS, end_escape

__all__ = ["Hits", "Pass", "automaton", "compiled"]

# (anchors, literals, escapes by kind, wide escapes, base64 cores): see Pass.find
Hits = tuple[list[tuple[int, int]], list[tuple[int, int]], list[list[tuple[int, int]]], list[tuple[int, int]], list[tuple[int, int]]]

class Pass:
    """One hyperscan pass over data: where the shapes' anchors are, where a literal may be, and
    where the escapes a view decodes are (leakviews.ESCAPE_FINDS).

    The anchors and the escapes are searched in every byte of every file, and in binary data
    (random bytes hold the anchors' first bytes often, which defeats an automaton's prefilter)
    that search was most of a file's time: hyperscan's SIMD literal matcher runs it at 3,600
    MB/s over random bytes and 2,900 over records, against 580 for an ahocorasick_rs DFA of the
    same anchors (docs/performance.md). One database for all three kinds reads each byte once:
    0.43 ms a MB of random bytes, against 0.68 for one pass each. Each literal is compiled as a
    regex of \\xHH escapes: the binding's literal mode reads a pattern as a C string, and
    anchors hold NUL bytes.
    """

    def __init__(self, anchors: list[bytes], literals: list[bytes], wide: bool, encoded: list[bytes], text: bool = True) -> None:
        """``wide``: find escapes in UTF-16 and UTF-32 text too (WIDE_ESCAPE_FINDS);
        ``encoded``: base64 cores (kitbuild.leakbase64); ``text``: find the last five kinds of
        ESCAPE_FINDS too, ``\\xHH``, the line breaks of wrapped base64, a path's extra slashes,
        a PDF piece's kerning and a backslash before punctuation (not in binary data, where they
        carry no text: a line end there, every 256 bytes, cost random bytes a sixth of their
        speed, and each ``\\x`` a view)."""
        finds = ESCAPE_FINDS if text else ESCAPE_FINDS[:-5]
        self.lengths = [len(p) for p in (*anchors, *literals)]
        self.anchors, self.literals = len(anchors), len(anchors) + len(literals)
        self.escapes = self.literals + len(finds)
        wide_finds = [p for _, p in WIDE_ESCAPE_FINDS] if wide else []
        self.wide = self.escapes + len(wide_finds)
        self.encoded_lengths = [len(p) for p in encoded]
        expressions = [b"".join(b"\\x%02x" % c for c in p) for p in (*anchors, *literals)] + [p for p, _ in finds] + wide_finds
        expressions += [b"".join(b"\\x%02x" % c for c in p) for p in encoded]
        # The literals in any case (see LeakScanner._literal_matches); the rest as they are.
        flags = [0] * len(anchors) + [hyperscan.HS_FLAG_CASELESS] * len(literals) + [0] * (len(finds) + len(wide_finds) + len(encoded))
        self.database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self.database.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions), flags=flags)

    def find(self, text: bytes, first: int, last: int) -> Hits:
        """What lies in text[first:last]: (anchor index, start) of each anchor, (start, end) of
        each literal, for each kind of ESCAPES spans that hold its escapes, (unit, end) of each
        escape in UTF-16 or UTF-32 text, and (core index, start) of each base64 core, all in order."""
        anchors: list[tuple[int, int]] = []
        literals: list[tuple[int, int]] = []
        escapes: list[list[tuple[int, int]]] = [[] for _ in ESCAPE_FINDS]
        wide: list[tuple[int, int]] = []
        encoded: list[tuple[int, int]] = []
        lengths, n_anchors, n_patterns, n_escapes, n_wide, encoded_lengths = self.lengths, self.anchors, self.literals, self.escapes, self.wide, self.encoded_lengths

        def hit(index: int, _from: int, to: int, _flags: int, _context: object) -> None:
            end = first + to
            if index < n_anchors:
                anchors.append((index, end - lengths[index]))
            elif index < n_patterns:
                literals.append((end - lengths[index], end))
            elif index < n_escapes:
                kind = index - n_patterns
                escapes[kind].append((max(first, end - ESCAPE_FINDS[kind][1]), end))
            elif index < n_wide:
                wide.append((WIDE_ESCAPE_FINDS[index - n_escapes][0], end))
            else:
                encoded.append((index - n_wide, end - encoded_lengths[index - n_wide]))

        self.database.scan(text[first:last], match_event_handler=hit)  # the whole text is not copied
        end_escape(text, first, last, escapes)
        return anchors, literals, escapes, wide, encoded


@functools.lru_cache(maxsize=32)
def compiled(anchors: tuple[bytes, ...], literals: tuple[bytes, ...], wide: bool, encoded: tuple[bytes, ...], text: bool = True) -> Pass:
    """The pass for these patterns, compiled once a process: every scanner of a kit's verify
    has the same ones, and a build makes several scanners of one config (0.01 to 0.03 s a
    database, which a kit of one small file or a test suite of many builds pays each time)."""
    return Pass(list(anchors), list(literals), wide, list(encoded), text)


def automaton(patterns: list[bytes], kind: ahocorasick_rs.MatchKind) -> ahocorasick_rs.BytesAhoCorasick | None:
    """Where hyperscan is not used (past leaks._HYPERSCAN_LITERALS), and to find every
    occurrence of a literal near a hit."""
    if not patterns:
        return None
    # The DFA: with a thousand patterns it searches at 275 MB/s, the NFAs at 90-100.
    return ahocorasick_rs.BytesAhoCorasick(patterns, matchkind=kind, implementation=ahocorasick_rs.Implementation.DFA)

