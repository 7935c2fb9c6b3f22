"""Redraw single questions' lists until the bench's counts are the ones it reported.

The bench's published counts are fixed; a synthetic bench must reproduce them
from lists that are honestly ranked and honestly fused. A hill climb does it:
redraw one question's four lists at a time, fuse them as the bench does, and
keep the redraw unless it moves the counts further from their targets.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction

from kitbuild.synthetic._fusion import fuse, tie_across
from kitbuild.synthetic._questions import Question
from kitbuild.synthetic._rankings import Rankings, draw_rankings

ONE = Fraction(1)
HALF = Fraction(1, 2)

# Each target counts questions: the every@5 ones over the answerable questions,
# the any@5 ones over all of them. "A2 only" is A2 hit and A0 missed; with the
# two every@5 counts fixed it also fixes "A0 only".
TARGETS = {
    "A0 every@5": 400,
    "A0 any@5": 485,
    "A1 every@5": 403,
    "A2 every@5": 409,
    "A2 only": 23,
    "A5 every@5": 417,
    "A5 any@5": 487,
    "S1 every@5": 416,
    "F1 every@5": 417,
    "F2 every@5": 422,
    "F3 every@5": 425,
    "F2 tie at 5": 10,
    # A tie the fuser settled by its rule must not decide a question's outcome,
    # or the reported F2 count would rest on the tie rule.
    "F2 tie decides every@5": 0,
}

_NAMES = tuple(TARGETS)
_GOAL = tuple(TARGETS.values())

# Search effort: fresh draws per round, then swaps among the spare draws, at
# most a few per spare draw so the early rounds, with few spares, stay short.
_DRAWS_PER_ROUND = 200
_SWAPS_PER_ROUND = 20_000
_SWAPS_PER_SPARE = 10
# How often a swap may move the counts one step away from their targets.
_STEP_BACK = 0.05


def every(ranked: Sequence[str], gold: Sequence[str], depth: int = 5) -> bool:
    head = ranked[:depth]
    return all(session in head for session in gold)


def any_of(ranked: Sequence[str], gold: Sequence[str], depth: int = 5) -> bool:
    head = ranked[:depth]
    return any(session in head for session in gold)


def tie_reversed(fused: Sequence[tuple[str, int]], rank: int = 5) -> list[str]:
    """The fused order with the run of exactly tied sessions spanning ``rank`` and ``rank + 1`` reversed."""
    order = [session for session, _ in fused]
    if not tie_across(fused, rank):
        return order
    points = fused[rank - 1][1]
    start = rank - 1
    while start > 0 and fused[start - 1][1] == points:
        start -= 1
    end = rank
    while end + 1 < len(fused) and fused[end + 1][1] == points:
        end += 1
    order[start : end + 1] = reversed(order[start : end + 1])
    return order


def _outcome(question: Question, lists: Rankings) -> tuple[int, ...]:
    gold = question.gold
    a0, a1, bge, s1 = lists.a0, lists.a1, lists.bge, lists.s1
    a2 = [s for s, _ in fuse([a1, a0], [ONE, HALF])]
    a5 = [s for s, _ in fuse([bge, a0], [ONE, HALF])]
    f1 = [s for s, _ in fuse([s1, a0], [ONE, HALF])]
    f2_fused = fuse([s1, a1], [ONE, ONE])
    f2 = [s for s, _ in f2_fused]
    f3 = [s for s, _ in fuse([s1, a1, a0], [ONE, ONE, HALF])]
    answerable = not question.abstention
    tied = tie_across(f2_fused, 5)
    hits = {
        "A0 every@5": answerable and every(a0, gold),
        "A0 any@5": any_of(a0, gold),
        "A1 every@5": answerable and every(a1, gold),
        "A2 every@5": answerable and every(a2, gold),
        "A2 only": answerable and every(a2, gold) and not every(a0, gold),
        "A5 every@5": answerable and every(a5, gold),
        "A5 any@5": any_of(a5, gold),
        "S1 every@5": answerable and every(s1, gold),
        "F1 every@5": answerable and every(f1, gold),
        "F2 every@5": answerable and every(f2, gold),
        "F3 every@5": answerable and every(f3, gold),
        "F2 tie at 5": tied,
        "F2 tie decides every@5": tied and answerable and every(tie_reversed(f2_fused), gold) != every(f2, gold),
    }
    return tuple(int(hits[name]) for name in _NAMES)


def _distance(totals: Sequence[int]) -> int:
    return sum(abs(total - goal) for total, goal in zip(totals, _GOAL))


def calibrate(questions: Sequence[Question], seed: int, rounds: int = 200) -> list[Rankings]:
    """Lists for every question whose counts meet every target exactly.

    Each round draws a batch of fresh lists for random questions, keeping a
    redraw unless it moves the counts away from their targets, then walks among
    every redraw not in use. Drawing and fusing is the expensive part; a redraw
    not taken when drawn is often the swap needed a hundred steps later, and
    trying it again costs a few additions.
    """
    rng = random.Random(seed)
    lists = [draw_rankings(q, rng) for q in questions]
    outcomes = [_outcome(q, r) for q, r in zip(questions, lists)]
    totals = [sum(column) for column in zip(*outcomes)]
    distance = _distance(totals)
    spare: list[tuple[int, Rankings, tuple[int, ...]]] = []

    def offer(
        index: int, redrawn: Rankings, outcome: tuple[int, ...], slack: int = 0
    ) -> tuple[Rankings, tuple[int, ...]] | None:
        # Sideways moves are taken too, and a step back now and then: some
        # counts move together (F2 rarely misses where F3 hits), so the last
        # few must be reached by a pair of swaps whose first goes the wrong way.
        nonlocal totals, distance
        current = outcomes[index]
        if outcome == current:
            return None
        trial = [t - old + new for t, old, new in zip(totals, current, outcome)]
        trial_distance = _distance(trial)
        if trial_distance > distance + slack:
            return None
        released = lists[index], current
        lists[index], outcomes[index] = redrawn, outcome
        totals, distance = trial, trial_distance
        return released

    for _ in range(rounds):
        for _ in range(_DRAWS_PER_ROUND):
            if not distance:
                return lists
            index = rng.randrange(len(questions))
            redrawn = draw_rankings(questions[index], rng)
            outcome = _outcome(questions[index], redrawn)
            released = offer(index, redrawn, outcome)
            spare.append((index, *released) if released else (index, redrawn, outcome))
        for _ in range(min(_SWAPS_PER_ROUND, _SWAPS_PER_SPARE * len(spare))):
            if not distance:
                return lists
            position = rng.randrange(len(spare))
            index, kept, outcome = spare[position]
            released = offer(index, kept, outcome, 1 if rng.random() < _STEP_BACK else 0)
            if released:
                spare[position] = (index, *released)
    raise RuntimeError(f"calibration did not meet its targets: {dict(zip(_NAMES, totals))}")
