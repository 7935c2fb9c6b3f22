"""The learned-sparse run of 2026-11-07: S1, its six fusions, the recounts and the reading.

This run's scorer, fuser and reader print the absolute path of every file
they read on this machine, and October files by their /scratch path.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from fractions import Fraction
from math import comb
from typing import Any

from kitbuild.synthetic._calibration import every, tie_reversed
from kitbuild.synthetic._fusion import POINTS_RULE, TIE_RULE, K, fuse, tie_across, top
from kitbuild.synthetic._october import (
    A0_ROWS,
    A1_ROWS,
    A2_ROWS,
    HALF,
    ONE,
    October,
    dataset,
    harness,
)
from kitbuild.synthetic._questions import Question
from kitbuild.synthetic._rankings import Rankings
from kitbuild.synthetic._records import SMOKE, SPARSE, Tree, json_bytes, ndjson_bytes
from kitbuild.synthetic._rows import Row, count, every_at_5, row, score
from kitbuild.synthetic._stats import holm, mcnemar_exact, words

S1_MODEL = "opensearch-project/opensearch-neural-sparse-encoding-doc-v3-distill"
S1_REVISION = "9db44a4f478e8367c8d7368118454ee477d2efc5"
TEXTS = 125667
TEXTS_WINDOWED = 54802
WINDOW = 510

RUN = f"{SPARSE}/full-s1"
S1_ROWS = f"{RUN}/run/rows.ndjson"
S1_RUN = f"{RUN}/run/run.json"
S1_LOCK = f"{RUN}/run/lock.json"
S1_SAMPLE = f"{RUN}/run/sample.bin"
FUSE = f"{RUN}/fuse/fuse.json"
FAMILY = f"{RUN}/score/family.json"
READING = f"{RUN}/score/reading.json"
FUSE_LOG = f"{RUN}/logs/fuse.log"
SKIP = f"{SPARSE}/s2-skip.json"
SMOKE_ROWS = f"{SMOKE}/run/rows.ndjson"

# Each blend's lists in the order its spec names them, which is also the
# order the tie rule consults them.
BLENDS: dict[str, tuple[tuple[str, Fraction], ...]] = {
    "F1": (("S1.ranked", ONE), ("A0.ranked", HALF)),
    "F2": (("S1.ranked", ONE), ("A1.leg50", ONE)),
    "F3": (("S1.ranked", ONE), ("A1.leg50", ONE), ("A0.ranked", HALF)),
    "F1h": (("S1.ranked", HALF), ("A0.ranked", HALF)),
    "F2h": (("S1.ranked", HALF), ("A1.leg50", ONE)),
    "F3h": (("S1.ranked", HALF), ("A1.leg50", ONE), ("A0.ranked", HALF)),
}

# The five comparisons registered before the run: (arm, ref).
PRIMARY = (("F1", "A0"), ("F2", "A0"), ("F3", "A0"), ("F2", "S1"), ("F3", "S1"))


def _rows_file(name: str) -> str:
    return f"{RUN}/fuse/{name}.rows.ndjson"


def _rescore_file(name: str) -> str:
    return f"{RUN}/score/rescore-{name}.json"


def _sample() -> bytes:
    # A slice of the encoder's sparse output as the run dumped it: a tag, a
    # NUL, then raw little-endian weights; deliberately not text.
    rng = random.Random(510)
    return b"S1SPARSE\x00\x01\xff\xfe" + rng.randbytes(244)


def _s1(tree: Tree, questions: Sequence[Question], lists: Sequence[Rankings]) -> list[Row]:
    rows = [row(q, {"search": r.s1[:10], "ranked": r.s1}, r.s1[:10]) for q, r in zip(questions, lists)]
    tree.put(S1_ROWS, ndjson_bytes(rows))
    tree.put(
        S1_RUN,
        json_bytes(
            {
                "run": "S1",
                "settings": {
                    "model_id": S1_MODEL,
                    "revision": S1_REVISION,
                    "device": "cpu",
                    "window": WINDOW,
                    "batch_size": 32,
                    "depth": 50,
                },
                "texts": TEXTS,
                "texts_windowed": TEXTS_WINDOWED,
                "questions": len(rows),
                "summary": {"every@5": every_at_5(rows), "any@5": count(rows, "any@5", answerable_only=False)},
                "started": "2026-11-07T08:14:03Z",
                "finished": "2026-11-07T15:52:40Z",
            }
        ),
    )
    tree.put(
        S1_LOCK,
        json_bytes(
            {
                "arm": "S1",
                "harness": harness(),
                "dataset": dataset(),
                "model_id": S1_MODEL,
                "revision": S1_REVISION,
                "device": "cpu",
                "questions": len(rows),
                "locked": "2026-11-07T08:13:58Z",
            }
        ),
    )
    tree.put(S1_SAMPLE, _sample())
    return rows


def _fuse_rows(
    sources: dict[str, list[list[str]]], blend: tuple[tuple[str, Fraction], ...], questions: Sequence[Question]
) -> list[Row]:
    rows = []
    for index, q in enumerate(questions):
        fused = fuse([sources[name][index] for name, _ in blend], [w for _, w in blend])
        best = top(fused, 10)
        rows.append(row(q, {"top10": best, "tie_at_5": tie_across(fused, 5)}, best))
    return rows


def _blend_spec(blend: tuple[tuple[str, Fraction], ...]) -> dict[str, Any]:
    return {
        "lists": [name for name, _ in blend],
        "weights": [float(w) for _, w in blend],
        "k": K,
        "points": POINTS_RULE,
        "ties": TIE_RULE,
    }


def _rescore(tree: Tree, path: str, field: str, summary: dict[str, int]) -> dict[str, Any]:
    """The second scorer: reads a row file back from its bytes and recounts it from the scored list."""
    rows = [json.loads(line) for line in tree.files[path].decode("utf-8").splitlines()]
    problems = []
    qids = [r["qid"] for r in rows]
    if len(set(qids)) != len(qids):
        problems.append("question ids repeat")
    row_diffs = 0
    recounted = []
    for r in rows:
        scored = r[field][:10]
        if len(set(scored)) != len(scored):
            problems.append(f"{r['qid']}: a session repeats in {field}")
        if not r["gold"]:
            problems.append(f"{r['qid']}: no gold session")
        mine = score(scored, r["gold"])
        row_diffs += mine != r["score"]
        recounted.append({**r, "score": mine})
    counts = {
        "answerable": {key: count(recounted, key, answerable_only=True) for key in ("all@5", "any@5", "all@10")},
        "all": {"any@5": count(recounted, "any@5", answerable_only=False)},
    }
    mine_summary = {"every@5": counts["answerable"]["all@5"], "any@5": counts["all"]["any@5"]}
    summary_diffs = sum(1 for key, value in summary.items() if mine_summary[key] != value)
    return {
        "scorer": "rescore",
        "input": {"path": tree.here(path), "sha256": tree.digest(path)},
        "scored_field": field,
        "counts": counts,
        "g0_problems": problems,
        "row_diffs": row_diffs,
        "summary_diffs": summary_diffs,
    }


def _comparison(name: str, arm: Sequence[Row], ref: Sequence[Row]) -> dict[str, Any]:
    pairs = [(x["score"]["all@5"], y["score"]["all@5"]) for x, y in zip(arm, ref) if not x["abstention"]]
    arm_hits, ref_hits = every_at_5(arm), every_at_5(ref)
    only_arm = sum(1 for x, y in pairs if x and not y)
    only_ref = sum(1 for x, y in pairs if y and not x)
    return {
        "name": name,
        "arm_hits": arm_hits,
        "ref_hits": ref_hits,
        "delta": arm_hits - ref_hits,
        "b_arm_only": only_arm,
        "c_ref_only": only_ref,
        "p": mcnemar_exact(only_arm, only_ref),
    }


def _p_by_likelihood(b: int, c: int) -> float:
    # The harness's own test sums every outcome no likelier than the one seen,
    # a different route to the same two-sided p; the reading checks they agree.
    n = b + c
    seen = comb(n, b)
    return float(min(Fraction(1), Fraction(sum(comb(n, i) for i in range(n + 1) if comb(n, i) <= seen), 2**n)))


def write_sparse(tree: Tree, questions: Sequence[Question], lists: Sequence[Rankings], october: October) -> None:
    s1 = _s1(tree, questions, lists)
    sources = {
        "S1.ranked": [r["ranked"] for r in s1],
        "A0.ranked": [r["ranked"] for r in october.a0],
        "A1.leg50": [r["leg50"] for r in october.a1],
    }
    blends = {name: _fuse_rows(sources, blend, questions) for name, blend in BLENDS.items()}
    for name, rows in blends.items():
        tree.put(_rows_file(name), ndjson_bytes(rows))

    # The control: A2 re-fused here by this run's code must give the top 10
    # the October bench stored, or this fuser is not the bench's.
    rebuilt = [top(fuse([a1, a0], [ONE, HALF]), 10) for a1, a0 in zip(sources["A1.leg50"], sources["A0.ranked"])]
    equal = sum(1 for mine, theirs in zip(rebuilt, october.a2) if mine == theirs["top10"])

    fuse_record: dict[str, Any] = {
        "fused_at": "2026-11-07T16:02:15Z",
        "spec": {name: _blend_spec(blend) for name, blend in BLENDS.items()},
        "inputs": {tree.printed(path): tree.digest(path) for path in (S1_ROWS, A0_ROWS, A1_ROWS, A2_ROWS)},
        "blends": {
            name: {
                "rows": {"path": tree.here(_rows_file(name)), "sha256": tree.digest(_rows_file(name))},
                "every@5": every_at_5(rows),
                "any@5": count(rows, "any@5", answerable_only=False),
                "questions_with_an_exact_tie_across_ranks_5_6": sum(1 for r in rows if r["tie_at_5"]),
            }
            for name, rows in blends.items()
        },
        "ctrl_a2_rebuild": {
            "spec": _blend_spec((("A1.leg50", ONE), ("A0.ranked", HALF))),
            "questions": len(rebuilt),
            "equal": equal,
        },
    }
    tree.put(FUSE, json_bytes(fuse_record))

    # Each recount is checked against the summary its producer wrote: S1's
    # run.json, and fuse.json for the blends.
    run_summary = json.loads(tree.files[S1_RUN])["summary"]
    rescores = {"s1": _rescore(tree, S1_ROWS, "search", run_summary)}
    for name in blends:
        summary = fuse_record["blends"][name]
        rescores[name] = _rescore(tree, _rows_file(name), "top10", {k: summary[k] for k in ("every@5", "any@5")})
    for name, record in rescores.items():
        tree.put(_rescore_file(name), json_bytes(record))

    arms = {"A0": october.a0, "S1": s1, **blends}
    comparisons = [_comparison(f"{arm} vs {ref} (every@5, 470)", arms[arm], arms[ref]) for arm, ref in PRIMARY]
    adjusted = holm([c["p"] for c in comparisons])
    primary = []
    for (arm, ref), found, p_holm in zip(PRIMARY, comparisons, adjusted):
        primary.append(
            {
                "name": found["name"],
                "arm": arm,
                "ref": ref,
                **{key: found[key] for key in ("arm_hits", "ref_hits", "delta", "b_arm_only", "c_ref_only", "p")},
                "p_holm": p_holm,
                "words": words(found["delta"], p_holm),
            }
        )
    family: dict[str, Any] = {
        "registered": "2026-11-06T21:40:00Z",
        "metric": "every@5",
        "answerable": sum(1 for q in questions if not q.abstention),
        "rule": {
            "test": "McNemar exact, two-sided",
            "adjust": "Holm, across the five",
            "min_delta": 10,
            "alpha": 0.05,
        },
        "rescores": {_rescore_file(name).rsplit("/", 1)[1]: tree.digest(_rescore_file(name)) for name in rescores},
        "primary": primary,
    }
    tree.put(FAMILY, json_bytes(family))

    crosscheck = all(_p_by_likelihood(entry["b_arm_only"], entry["c_ref_only"]) == entry["p"] for entry in primary)
    changed = 0
    tied = 0
    for index, (q, r) in enumerate(zip(questions, blends["F2"])):
        if not r["tie_at_5"]:
            continue
        tied += 1
        fused = fuse([sources["S1.ranked"][index], sources["A1.leg50"][index]], [ONE, ONE])
        if not q.abstention and every(tie_reversed(fused), q.gold) != every(top(fused, 5), q.gold):
            changed += 1
    reading = {
        "read_at": "2026-11-08T10:12:37Z",
        "family": {"path": tree.here(FAMILY), "sha256": tree.digest(FAMILY)},
        "fuse": {"path": tree.here(FUSE), "sha256": tree.digest(FUSE)},
        "s1_lock": {"path": tree.here(S1_LOCK), "sha256": tree.digest(S1_LOCK)},
        "family_crosscheck": {"equal": crosscheck, "comparisons": len(primary), "by": {"harness": harness()}},
        "f2_ties_reversed_exploratory": {"questions": tied, "every@5_changed": changed},
        "s1_run": {"texts": TEXTS, "texts_windowed": TEXTS_WINDOWED},
    }
    tree.put(READING, json_bytes(reading))

    tree.put(
        SKIP,
        json_bytes(
            {
                "model_id": "naver/splade-v3",
                "checked_at": "2026-11-07T07:58:12Z",
                "gated": True,
                "license": "cc-by-nc-sa-4.0",
                "has_safetensors": False,
                "pickled_weights": True,
                "verdict": "skipped before any download",
            },
            final_newline=False,
        ),
    )

    tree.put(SMOKE_ROWS, ndjson_bytes(s1[:5]))
    log = [
        "2026-11-07T16:01:58Z fuse: host gpu-b17 user u7 cwd /home/u7/work/ls-bench",
        f"2026-11-07T16:01:58Z fuse: smoke check {tree.here(SMOKE_ROWS)}: 5 rows, ok",
        *(f"2026-11-07T16:01:59Z fuse: read {path}" for path in fuse_record["inputs"]),
        *(
            f"2026-11-07T16:02:{10 + i:02d}Z fuse: {name} every@5 {b['every@5']} ties@5/6 "
            f"{b['questions_with_an_exact_tie_across_ranks_5_6']}"
            for i, (name, b) in enumerate(fuse_record["blends"].items())
        ),
        f"2026-11-07T16:02:15Z fuse: ctrl A2 rebuilt {equal}/{len(rebuilt)}",
        f"2026-11-07T16:02:15Z fuse: wrote {tree.here(FUSE)} (cache /home/u7/.cache/ls-bench)",
    ]
    tree.put(FUSE_LOG, "".join(line + "\n" for line in log).encode("utf-8"))
