"""The four retrievers' lists for one question, drawn from a latent-relevance model.

Each session has a relevance that every retriever sees, a lexical error that
the two term-matching retrievers (BM25, the learned-sparse encoder) share, a
semantic error that the two embedders (nomic-embed-text, BGE-small) share, and
each retriever adds its own. The shared errors are why fusing BM25 with the
learned-sparse list gains little while fusing either with an embedder gains
more: a fusion can only average away errors its lists do not have in common.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from statistics import NormalDist

from kitbuild.synthetic._questions import Question

DEPTH = 50

# Per retriever: (weight on the lexical error, weight on the semantic error,
# its own error). BM25 and nomic-embed-text also lean a little on each
# other's family, which keeps their fusion's gain as modest as the bench saw.
# Tuned so an untuned draw lands near the reported counts and the
# calibration has little left to do.
_ERRORS = {
    "a0": (0.72, 0.33, 0.57),
    "a1": (0.16, 0.79, 0.55),
    "bge": (0.0, 0.8, 0.51),
    "s1": (0.58, 0.0, 0.51),
}
_SHARED = 0.76
# How far a gold session stands above the distractors, from the easiest
# question to the hardest.
_LIFT = 5.0
_LIFT_SPREAD = 2.5

# Standard normal draws by table lookup: the bench redraws lists thousands of
# times while it calibrates, and random.gauss is the slowest step of a draw.
# Rounded so that a last-bit difference in the platform's log() cannot change
# a table entry, and with it every list drawn after.
_NORMAL_BITS = 12
_NORMAL = tuple(round(NormalDist().inv_cdf((i + 0.5) / (1 << _NORMAL_BITS)), 6) for i in range(1 << _NORMAL_BITS))


@dataclass(frozen=True)
class Rankings:
    a0: tuple[str, ...]  # BM25, the 50 it ranks first
    a1: tuple[str, ...]  # nomic-embed-text, its leg50
    bge: tuple[str, ...]  # BGE-small, the list A5 fused
    s1: tuple[str, ...]  # the learned-sparse encoder


def draw_rankings(question: Question, rng: random.Random) -> Rankings:
    bits = rng.getrandbits
    table = _NORMAL
    width = _NORMAL_BITS
    sessions = question.sessions

    def errors() -> list[float]:
        return [table[bits(width)] for _ in sessions]

    # A hard question lowers every gold session for every retriever at once,
    # so misses cluster on the same questions across lists.
    hardness = rng.random()
    # Multiplied out rather than ** 3: pow() comes from the platform's libm,
    # while a product is rounded the same way everywhere.
    lift = _LIFT - _LIFT_SPREAD * hardness * hardness * hardness
    relevance = [_SHARED * e for e in errors()]
    # The first gold session stands out more than the rest: with several
    # answer-holding sessions, finding one is far easier than finding them all.
    for order, session in enumerate(question.gold):
        bonus = 1.0 if order == 0 else -0.5
        relevance[sessions.index(session)] += lift + bonus + 1.6 * table[bits(width)]
    lexical = errors()
    semantic = errors()

    def ranked(name: str) -> tuple[str, ...]:
        lex, sem, own = _ERRORS[name]
        seen = [r + lex * x + sem * y + own * table[bits(width)] for r, x, y in zip(relevance, lexical, semantic)]
        return tuple(s for _, s in sorted(zip(seen, sessions), reverse=True)[:DEPTH])

    return Rankings(**{name: ranked(name) for name in _ERRORS})
