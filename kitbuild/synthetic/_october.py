"""The October bench (lme-2026-10): A0, A1, A2 under registration w7, and A5 beside them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from kitbuild.synthetic._fusion import fuse, top
from kitbuild.synthetic._questions import Question
from kitbuild.synthetic._rankings import Rankings
from kitbuild.synthetic._records import OCTOBER, Tree, json_bytes, ndjson_bytes
from kitbuild.synthetic._rows import Row, count, every_at_5, row
from kitbuild.synthetic._stats import holm_first, mcnemar_exact, words

HARNESS_SHA256 = "561095578dbce8f2328696e2bba5d730bdeeb9717158e9d715554d54e85be364"
DATASET_NAME = "longmemeval_s_cleaned.json"
DATASET_SHA256 = "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"

A0_ROWS = f"{OCTOBER}/a0/run/rows.ndjson"
A0_LOCK = f"{OCTOBER}/a0/run/lock.json"
A1_ROWS = f"{OCTOBER}/w7/rows/a1/legs.ndjson"
A1_LOCK = f"{OCTOBER}/w7/rows/a1/lock.json"
A2_ROWS = f"{OCTOBER}/w7/rows/a2/a2.ndjson"
W7_SCORE = f"{OCTOBER}/w7/score-registered-w7.json"
W7_TABLE = f"{OCTOBER}/w7/w7-per-question.tsv"
A5_ROWS = f"{OCTOBER}/a5/run/rows.ndjson"
A5_LOCK = f"{OCTOBER}/a5/run/lock.json"

ONE = Fraction(1)
HALF = Fraction(1, 2)
K = 60

# The comparisons w7 registered before its first score; G-WIN is the only one
# whose arms are in this bench, and the Holm step runs across all four.
W7_FAMILY_SIZE = 4
G_WIN = "G-WIN A2 vs A0 (every@5, 470)"


@dataclass(frozen=True)
class October:
    a0: list[Row]
    a1: list[Row]
    a2: list[Row]
    a5: list[Row]


def harness() -> dict[str, str]:
    return {"sha256": HARNESS_SHA256}


def dataset() -> dict[str, str]:
    return {"name": DATASET_NAME, "sha256": DATASET_SHA256}


def _lock_a0() -> dict[str, object]:
    # A0's lock came from an older harness release that printed digests in
    # upper case behind a "sha256:" tag; it is kept as the bench wrote it.
    return {
        "arm": "A0",
        "harness": harness(),
        "dataset": {"name": DATASET_NAME, "sha256": "sha256:" + DATASET_SHA256.upper()},
        "retriever": "bm25",
        "params": {"k1": 1.2, "b": 0.75, "depth": 50},
        "questions": 500,
        "started": "2026-10-09T13:02:41Z",
        "finished": "2026-10-09T13:09:17Z",
    }


def _lock_a1() -> dict[str, object]:
    return {
        "arm": "A1",
        "harness": harness(),
        "dataset": dataset(),
        "model": "nomic-embed-text",
        "route": "gpu-b17.cluster.example.net",
        "card": "RTX 4090",
        "dimensions": 768,
        "depth": 50,
        "questions": 500,
        "started": "2026-10-17T08:31:05Z",
        "finished": "2026-10-17T11:47:52Z",
    }


def _lock_a5() -> dict[str, object]:
    return {
        "arm": "A5",
        "harness": harness(),
        "dataset": dataset(),
        "model": "BAAI/bge-small-en-v1.5",
        "fusion": {"lists": ["bge50", "A0.ranked"], "weights": [1.0, 0.5], "k": K},
        "as_shipped_by": "https://github.com/turlockmike/deep-recall",
        "questions": 500,
        "started": "2026-10-10T09:12:30Z",
        "finished": "2026-10-10T10:05:14Z",
    }


def _arm_counts(rows: Sequence[Row]) -> dict[str, int]:
    return {"every@5": every_at_5(rows), "any@5": count(rows, "any@5", answerable_only=False)}


def _g_win(a2: Sequence[Row], a0: Sequence[Row]) -> dict[str, object]:
    answerable = [(x, y) for x, y in zip(a2, a0) if not x["abstention"]]
    only_arm = sum(1 for x, y in answerable if x["score"]["all@5"] and not y["score"]["all@5"])
    only_ref = sum(1 for x, y in answerable if y["score"]["all@5"] and not x["score"]["all@5"])
    arm_hits, ref_hits = every_at_5(a2), every_at_5(a0)
    p = mcnemar_exact(only_arm, only_ref)
    p_holm = holm_first(p, W7_FAMILY_SIZE)
    return {
        "arm": "A2",
        "ref": "A0",
        "arm_hits": arm_hits,
        "ref_hits": ref_hits,
        "b_arm_only": only_arm,
        "c_ref_only": only_ref,
        "delta": arm_hits - ref_hits,
        "p": p,
        "p_holm": p_holm,
        "holm_family": W7_FAMILY_SIZE,
        "words": words(arm_hits - ref_hits, p_holm),
    }


def write_october(tree: Tree, questions: Sequence[Question], lists: Sequence[Rankings]) -> October:
    a0 = [row(q, {"search": r.a0[:10], "ranked": r.a0}, r.a0[:10]) for q, r in zip(questions, lists)]
    a1 = [row(q, {"leg50": r.a1}, r.a1[:10]) for q, r in zip(questions, lists)]
    a2 = []
    a5 = []
    for q, first, second in zip(questions, a1, a0):
        fused = top(fuse([first["leg50"], second["ranked"]], [ONE, HALF]), 10)
        a2.append(row(q, {"top10": fused}, fused))
    for q, r, base in zip(questions, lists, a0):
        fused = top(fuse([r.bge, base["ranked"]], [ONE, HALF]), 10)
        a5.append(row(q, {"top10": fused, "bge50": r.bge}, fused))

    tree.put(A0_ROWS, ndjson_bytes(a0))
    tree.put(A0_LOCK, json_bytes(_lock_a0()))
    tree.put(A1_ROWS, ndjson_bytes(a1))
    tree.put(A1_LOCK, json_bytes(_lock_a1()))
    tree.put(A2_ROWS, ndjson_bytes(a2))
    tree.put(A5_ROWS, ndjson_bytes(a5))
    tree.put(A5_LOCK, json_bytes(_lock_a5()))

    score = {
        "registration": "w7",
        "scored_at": "2026-10-17T12:20:44Z",
        "harness": harness(),
        "metric": "every@5",
        "answerable": sum(1 for q in questions if not q.abstention),
        "A0": _arm_counts(a0),
        "A1": _arm_counts(a1),
        "A2": _arm_counts(a2),
        G_WIN: _g_win(a2, a0),
        "rows": {tree.printed(path): tree.digest(path) for path in (A0_ROWS, A1_ROWS, A2_ROWS)},
    }
    tree.put(W7_SCORE, json_bytes(score))

    # The per-question table came from a spreadsheet export, hence CRLF.
    lines = ["qid\ttype\tA2:all@5\tA0:all@5"]
    lines += [f"{x['qid']}\t{x['type']}\t{x['score']['all@5']}\t{y['score']['all@5']}" for x, y in zip(a2, a0)]
    tree.put(W7_TABLE, "".join(line + "\r\n" for line in lines).encode("utf-8"))
    return October(a0=a0, a1=a1, a2=a2, a5=a5)
