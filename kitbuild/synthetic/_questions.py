"""The question set: LongMemEval-S-shaped ids, types, sessions and gold labels.

Nothing here comes from the dataset; the shape does (500 questions, the S
version's per-type counts, 38 to 62 sessions each, 30 abstention questions).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

TYPE_COUNTS = {
    "single-session-user": 70,
    "single-session-assistant": 56,
    "single-session-preference": 30,
    "multi-session": 133,
    "knowledge-update": 78,
    "temporal-reasoning": 133,
}

# Preference questions always have an answer in LongMemEval, so none abstain.
ABSTENTION_COUNTS = {
    "single-session-user": 6,
    "single-session-assistant": 3,
    "single-session-preference": 0,
    "multi-session": 9,
    "knowledge-update": 6,
    "temporal-reasoning": 6,
}

# How many answer-holding sessions a question of each type may have.
_GOLD_SIZES = {
    "single-session-user": (1,),
    "single-session-assistant": (1,),
    "single-session-preference": (1,),
    "multi-session": (2, 2, 3),
    "knowledge-update": (1, 2, 2),
    "temporal-reasoning": (1, 1, 2, 3),
}

SESSIONS_MIN, SESSIONS_MAX = 38, 62


@dataclass(frozen=True)
class Question:
    qid: str
    type: str
    abstention: bool
    sessions: tuple[str, ...]
    gold: tuple[str, ...]


def _fresh(rng: random.Random, taken: set[str], make: str, bits: int) -> str:
    while True:
        name = make % rng.getrandbits(bits)
        if name not in taken:
            taken.add(name)
            return name


def draw_questions(seed: int) -> list[Question]:
    """The 500 questions, in the order every row file lists them."""
    rng = random.Random(seed)
    plan: list[tuple[str, bool]] = []
    for qtype, count in TYPE_COUNTS.items():
        abstaining = ABSTENTION_COUNTS[qtype]
        plan += [(qtype, True)] * abstaining + [(qtype, False)] * (count - abstaining)
    rng.shuffle(plan)

    qids: set[str] = set()
    names: set[str] = set()
    questions = []
    for qtype, abstention in plan:
        stem = _fresh(rng, qids, "gpt4_%08x" if rng.random() < 0.15 else "%08x", 32)
        sessions = tuple(_fresh(rng, names, "s%010x.md", 40) for _ in range(rng.randint(SESSIONS_MIN, SESSIONS_MAX)))
        gold = tuple(rng.sample(sessions, rng.choice(_GOLD_SIZES[qtype])))
        qid = stem + "_abs" if abstention else stem
        questions.append(Question(qid, qtype, abstention, sessions, gold))
    return questions
