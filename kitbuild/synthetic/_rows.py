"""Row records: one question's lists and the scores the bench computed from them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kitbuild.synthetic._questions import Question

Row = dict[str, Any]


def score(scored: Sequence[str], gold: Sequence[str]) -> dict[str, int]:
    """The bench's four scores of one scored list (every row has them, abstention rows included)."""
    return {
        "any@1": int(any(g in scored[:1] for g in gold)),
        "any@5": int(any(g in scored[:5] for g in gold)),
        "all@5": int(all(g in scored[:5] for g in gold)),
        "all@10": int(all(g in scored[:10] for g in gold)),
    }


def row(question: Question, fields: Mapping[str, Any], scored: Sequence[str]) -> Row:
    """A row in the bench's fixed key order: the question, its lists, then the score of ``scored``."""
    return {
        "qid": question.qid,
        "type": question.type,
        "abstention": question.abstention,
        "gold": list(question.gold),
        **{name: list(value) if isinstance(value, tuple) else value for name, value in fields.items()},
        "score": score(scored, question.gold),
    }


def every_at_5(rows: Iterable[Row]) -> int:
    """every@5: answerable questions whose every gold session is in the scored top 5."""
    return sum(r["score"]["all@5"] for r in rows if not r["abstention"])


def count(rows: Iterable[Row], key: str, answerable_only: bool) -> int:
    return sum(r["score"][key] for r in rows if not (answerable_only and r["abstention"]))
