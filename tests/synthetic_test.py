"""The synthetic bench, recounted from the files it writes.

Every check here reads the written bytes back and recounts with plain code
of its own: a figure that only the generator's own code agrees with proves
nothing about the files.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest
import yaml

from kitbuild.synthetic import generate_bench

OCT = "bench/lme-2026-10"
LS = "bench/ls-2026-11-07"
RUN = f"{LS}/full-s1"
SCRATCH = "/scratch/u7/runs/lme-2026-10"
HARNESS = "561095578dbce8f2328696e2bba5d730bdeeb9717158e9d715554d54e85be364"
DATASET = "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"
BLENDS = ("F1", "F2", "F3", "F1h", "F2h", "F3h")

FILES = {
    "kit.yaml",
    f"{OCT}/a0/run/rows.ndjson",
    f"{OCT}/a0/run/lock.json",
    f"{OCT}/w7/rows/a1/legs.ndjson",
    f"{OCT}/w7/rows/a1/lock.json",
    f"{OCT}/w7/rows/a2/a2.ndjson",
    f"{OCT}/w7/score-registered-w7.json",
    f"{OCT}/w7/w7-per-question.tsv",
    f"{OCT}/a5/run/rows.ndjson",
    f"{OCT}/a5/run/lock.json",
    f"{LS}/s2-skip.json",
    f"{RUN}/run/rows.ndjson",
    f"{RUN}/run/run.json",
    f"{RUN}/run/lock.json",
    f"{RUN}/run/sample.bin",
    *(f"{RUN}/fuse/{name}.rows.ndjson" for name in BLENDS),
    f"{RUN}/fuse/fuse.json",
    f"{RUN}/score/rescore-s1.json",
    *(f"{RUN}/score/rescore-{name}.json" for name in BLENDS),
    f"{RUN}/score/family.json",
    f"{RUN}/score/reading.json",
    f"{RUN}/logs/fuse.log",
    "bench/ls-2026-11-07-smoke/run/rows.ndjson",
}

ROW_FILES = {
    "A0": f"{OCT}/a0/run/rows.ndjson",
    "A1": f"{OCT}/w7/rows/a1/legs.ndjson",
    "A2": f"{OCT}/w7/rows/a2/a2.ndjson",
    "A5": f"{OCT}/a5/run/rows.ndjson",
    "S1": f"{RUN}/run/rows.ndjson",
    **{name: f"{RUN}/fuse/{name}.rows.ndjson" for name in BLENDS},
}
LIST_FIELDS = {
    "A0": ["search", "ranked"],
    "A1": ["leg50"],
    "A2": ["top10"],
    "A5": ["top10", "bge50"],
    "S1": ["search", "ranked"],
    **{name: ["top10", "tie_at_5"] for name in BLENDS},
}
SCORED = {"A0": "search", "A1": "leg50", "S1": "search"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("first")
    kit = generate_bench(root)
    assert kit == root.resolve() / "kit.yaml"
    return root.resolve()


@pytest.fixture(scope="module")
def rows(bench: Path) -> dict[str, list[dict]]:
    return {arm: read_rows(bench / path) for arm, path in ROW_FILES.items()}


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]


def read_json(bench: Path, relative: str) -> dict:
    return json.loads((bench / relative).read_text("utf-8"))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def on_disk(bench: Path, printed: str) -> Path:
    """The file a record names: /scratch paths are the October folder here."""
    if printed.startswith(SCRATCH + "/"):
        return bench / OCT / printed[len(SCRATCH) + 1 :]
    path = Path(printed)
    assert path.is_absolute() and bench in path.parents, printed
    return path


def scored(arm: str, row: dict) -> list[str]:
    return row[SCORED.get(arm, "top10")][:10]


def all_at(row_list: list[str], gold: list[str], k: int) -> bool:
    return set(gold) <= set(row_list[:k])


def any_at(row_list: list[str], gold: list[str], k: int) -> bool:
    return bool(set(gold) & set(row_list[:k]))


def every5(arm_rows: list[dict], arm: str) -> int:
    return sum(all_at(scored(arm, r), r["gold"], 5) for r in arm_rows if not r["abstention"])


def any5(arm_rows: list[dict], arm: str) -> int:
    return sum(any_at(scored(arm, r), r["gold"], 5) for r in arm_rows)


def rrf(lists: list[list[str]], weights: list[Fraction]) -> list[tuple[str, Fraction]]:
    points: dict[str, Fraction] = {}
    for ranked, weight in zip(lists, weights):
        for rank, session in enumerate(ranked, 1):
            points[session] = points.get(session, Fraction(0)) + weight / (60 + rank)

    def key(session: str) -> tuple:
        ranks = [ranked.index(session) + 1 if session in ranked else 10**9 for ranked in lists]
        return (-points[session], *ranks, session)

    return [(s, points[s]) for s in sorted(points, key=key)]


def mcnemar(b: int, c: int) -> float:
    n = b + c
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


# --- layout and formats ---------------------------------------------------------------------------------


def test_writes_exactly_the_bench_layout(bench: Path) -> None:
    written = {str(p.relative_to(bench)) for p in bench.rglob("*") if p.is_file()}
    assert written == FILES


def test_row_files_are_compact_ndjson_in_a_fixed_key_order(bench: Path) -> None:
    for arm, relative in ROW_FILES.items():
        text = (bench / relative).read_text("utf-8")
        assert text.endswith("\n") and "\r" not in text
        lines = text.split("\n")[:-1]
        assert len(lines) == 500
        for line in lines:
            row = json.loads(line)
            assert line == json.dumps(row, separators=(",", ":"))
            assert list(row) == ["qid", "type", "abstention", "gold", *LIST_FIELDS[arm], "score"]
            assert list(row["score"]) == ["any@1", "any@5", "all@5", "all@10"]


def test_json_records_use_two_space_indent_and_a_final_newline(bench: Path) -> None:
    for relative in FILES:
        if relative.endswith(".json") and not relative.endswith("s2-skip.json"):
            text = (bench / relative).read_text("utf-8")
            assert text == json.dumps(json.loads(text), indent=2) + "\n", relative


def test_the_quirky_files(bench: Path) -> None:
    table = (bench / OCT / "w7/w7-per-question.tsv").read_bytes()
    assert table.endswith(b"\r\n") and table.count(b"\r\n") == 501 and table.count(b"\n") == 501
    skip = (bench / LS / "s2-skip.json").read_bytes()
    assert not skip.endswith(b"\n")
    assert json.loads(skip) == {
        "model_id": "naver/splade-v3",
        "checked_at": "2026-11-07T07:58:12Z",
        "gated": True,
        "license": "cc-by-nc-sa-4.0",
        "has_safetensors": False,
        "pickled_weights": True,
        "verdict": "skipped before any download",
    }
    sample = (bench / RUN / "run/sample.bin").read_bytes()
    assert b"\x00" in sample and 0 < len(sample) < 4096
    with pytest.raises(UnicodeDecodeError):
        sample.decode("utf-8")


# --- questions and rows ---------------------------------------------------------------------------------


def test_questions_are_shaped_like_longmemeval_s(rows: dict[str, list[dict]]) -> None:
    first = rows["A0"]
    qids = [r["qid"] for r in first]
    assert len(qids) == len(set(qids)) == 500
    for arm_rows in rows.values():
        assert [(r["qid"], r["type"], r["abstention"], r["gold"]) for r in arm_rows] == [
            (r["qid"], r["type"], r["abstention"], r["gold"]) for r in first
        ]
    assert Counter(r["type"] for r in first) == {
        "single-session-user": 70,
        "single-session-assistant": 56,
        "single-session-preference": 30,
        "multi-session": 133,
        "knowledge-update": 78,
        "temporal-reasoning": 133,
    }
    abstaining = [r for r in first if r["abstention"]]
    assert len(abstaining) == 30 and len({r["type"] for r in abstaining}) >= 4
    assert any(r["qid"].startswith("gpt4_") for r in first)
    for r in first:
        assert re.fullmatch(r"(gpt4_)?[0-9a-f]{8}(_abs)?", r["qid"])
        assert r["qid"].endswith("_abs") == r["abstention"]
        assert 1 <= len(r["gold"]) <= 3 and len(set(r["gold"])) == len(r["gold"])
        assert all(re.fullmatch(r"s[0-9a-f]{10}\.md", s) for s in r["gold"])


def test_every_list_ranks_one_question_s_sessions_without_repeats(rows: dict[str, list[dict]]) -> None:
    for index in range(500):
        lists = {}
        for arm, fields in LIST_FIELDS.items():
            for field in fields:
                if field != "tie_at_5":
                    lists[f"{arm}.{field}"] = rows[arm][index][field]
        pool = set().union(*lists.values())
        assert len(pool) <= 62
        for name, ranked in lists.items():
            assert len(ranked) == len(set(ranked)), name
            assert all(re.fullmatch(r"s[0-9a-f]{10}\.md", s) for s in ranked)
            deep = name.endswith(("ranked", "leg50", "bge50"))
            assert len(ranked) == (min(50, len(pool)) if deep else 10), name
        # A question with at most 50 sessions is ranked whole by every deep list.
        assert len(pool) >= 38
    for a0 in rows["A0"]:
        assert a0["search"] == a0["ranked"][:10]
    for s1 in rows["S1"]:
        assert s1["search"] == s1["ranked"][:10]


def test_every_stored_score_is_the_score_of_its_list(rows: dict[str, list[dict]]) -> None:
    for arm, arm_rows in rows.items():
        for r in arm_rows:
            ranked, gold = scored(arm, r), r["gold"]
            assert r["score"] == {
                "any@1": int(any_at(ranked, gold, 1)),
                "any@5": int(any_at(ranked, gold, 5)),
                "all@5": int(all_at(ranked, gold, 5)),
                "all@10": int(all_at(ranked, gold, 10)),
            }, (arm, r["qid"])


def test_every_stored_fusion_is_the_fusion_of_its_stored_inputs(rows: dict[str, list[dict]]) -> None:
    one, half = Fraction(1), Fraction(1, 2)
    for i in range(500):
        s1, a1, a0 = rows["S1"][i]["ranked"], rows["A1"][i]["leg50"], rows["A0"][i]["ranked"]
        specs = {
            "A2": ([a1, a0], [one, half]),
            "A5": ([rows["A5"][i]["bge50"], a0], [one, half]),
            "F1": ([s1, a0], [one, half]),
            "F2": ([s1, a1], [one, one]),
            "F3": ([s1, a1, a0], [one, one, half]),
            "F1h": ([s1, a0], [half, half]),
            "F2h": ([s1, a1], [half, one]),
            "F3h": ([s1, a1, a0], [half, one, half]),
        }
        for arm, (lists, weights) in specs.items():
            fused = rrf(lists, weights)
            assert rows[arm][i]["top10"] == [s for s, _ in fused[:10]], (arm, i)
            if "tie_at_5" in rows[arm][i]:
                assert rows[arm][i]["tie_at_5"] == (fused[4][1] == fused[5][1]), (arm, i)


# --- the figures ------------------------------------------------------------------------------------------


def test_the_figures_on_the_page(rows: dict[str, list[dict]]) -> None:
    assert sum(not r["abstention"] for r in rows["A0"]) == 470
    assert (every5(rows["A0"], "A0"), any5(rows["A0"], "A0")) == (400, 485)
    assert every5(rows["A1"], "A1") == 403
    assert every5(rows["A2"], "A2") == 409
    assert (every5(rows["A5"], "A5"), any5(rows["A5"], "A5")) == (417, 487)
    assert every5(rows["S1"], "S1") == 416
    assert [every5(rows[f], f) for f in ("F1", "F2", "F3")] == [417, 422, 425]
    pairs = [
        (all_at(x["top10"], x["gold"], 5), all_at(y["search"], y["gold"], 5))
        for x, y in zip(rows["A2"], rows["A0"])
        if not x["abstention"]
    ]
    assert sum(x and not y for x, y in pairs) == 23
    assert sum(y and not x for x, y in pairs) == 14
    assert sum(r["tie_at_5"] for r in rows["F2"]) == 10


def test_reversing_f2_s_ties_changes_no_outcome(rows: dict[str, list[dict]]) -> None:
    for i, r in enumerate(rows["F2"]):
        if not r["tie_at_5"]:
            continue
        fused = rrf([rows["S1"][i]["ranked"], rows["A1"][i]["leg50"]], [Fraction(1), Fraction(1)])
        tied = [s for s, p in fused if p == fused[4][1]]
        order = [s for s, _ in fused]
        start = order.index(tied[0])
        order[start : start + len(tied)] = reversed(tied)
        assert r["abstention"] or all_at(order, r["gold"], 5) == all_at(r["top10"], r["gold"], 5)


# --- the records ------------------------------------------------------------------------------------------


def test_locks_pin_the_harness_and_the_dataset(bench: Path) -> None:
    locks = {
        "A0": f"{OCT}/a0/run/lock.json",
        "A1": f"{OCT}/w7/rows/a1/lock.json",
        "A5": f"{OCT}/a5/run/lock.json",
        "S1": f"{RUN}/run/lock.json",
    }
    for arm, relative in locks.items():
        lock = read_json(bench, relative)
        assert lock["harness"] == {"sha256": HARNESS}
        expected = "sha256:" + DATASET.upper() if arm == "A0" else DATASET
        assert lock["dataset"] == {"name": "longmemeval_s_cleaned.json", "sha256": expected}
    a1 = read_json(bench, locks["A1"])
    assert (a1["route"], a1["card"]) == ("gpu-b17.cluster.example.net", "RTX 4090")
    s1 = read_json(bench, locks["S1"])
    assert re.fullmatch(r"[0-9a-f]{40}", s1["revision"])
    run = read_json(bench, f"{RUN}/run/run.json")
    assert run["settings"] == {
        "model_id": "opensearch-project/opensearch-neural-sparse-encoding-doc-v3-distill",
        "revision": s1["revision"],
        "device": "cpu",
        "window": 510,
        "batch_size": 32,
        "depth": 50,
    }
    assert run["texts"] == 125667


def test_the_registered_w7_score(bench: Path) -> None:
    score = read_json(bench, f"{OCT}/w7/score-registered-w7.json")
    assert [score[arm]["every@5"] for arm in ("A0", "A1", "A2")] == [400, 403, 409]
    win = score["G-WIN A2 vs A0 (every@5, 470)"]
    assert {k: win[k] for k in ("arm_hits", "ref_hits", "b_arm_only", "c_ref_only", "delta")} == {
        "arm_hits": 409,
        "ref_hits": 400,
        "b_arm_only": 23,
        "c_ref_only": 14,
        "delta": 9,
    }
    assert win["p"] == mcnemar(23, 14) and round(win["p"], 4) == 0.1877
    assert win["p"] <= win["p_holm"] <= 1 and win["words"] == "no material difference"
    assert sorted(score["rows"]) == sorted(
        f"{SCRATCH}/{p}" for p in ("a0/run/rows.ndjson", "w7/rows/a1/legs.ndjson", "w7/rows/a2/a2.ndjson")
    )


def test_the_per_question_table(bench: Path, rows: dict[str, list[dict]]) -> None:
    lines = (bench / OCT / "w7/w7-per-question.tsv").read_bytes().decode("utf-8").split("\r\n")
    assert lines[0] == "qid\ttype\tA2:all@5\tA0:all@5" and lines[-1] == ""
    expected = [
        f"{x['qid']}\t{x['type']}\t{x['score']['all@5']}\t{y['score']['all@5']}" for x, y in zip(rows["A2"], rows["A0"])
    ]
    assert lines[1:-1] == expected


def test_fuse_json(bench: Path, rows: dict[str, list[dict]]) -> None:
    record = read_json(bench, f"{RUN}/fuse/fuse.json")
    weights = {"F1": [1.0, 0.5], "F2": [1.0, 1.0], "F3": [1.0, 1.0, 0.5]}
    weights |= {f"{name}h": [0.5, *w[1:]] for name, w in weights.items()}
    for name in BLENDS:
        spec = record["spec"][name]
        assert spec["lists"][0] == "S1.ranked" and spec["weights"] == weights[name] and spec["k"] == 60
        assert "exactly equal" in spec["ties"]
        blend = record["blends"][name]
        assert blend["every@5"] == every5(rows[name], name)
        assert blend["questions_with_an_exact_tie_across_ranks_5_6"] == sum(r["tie_at_5"] for r in rows[name])
        assert on_disk(bench, blend["rows"]["path"]) == bench / ROW_FILES[name]
    assert [record["blends"][f]["every@5"] for f in ("F1", "F2", "F3")] == [417, 422, 425]
    assert record["blends"]["F2"]["questions_with_an_exact_tie_across_ranks_5_6"] == 10
    assert record["ctrl_a2_rebuild"]["questions"] == record["ctrl_a2_rebuild"]["equal"] == 500
    assert {on_disk(bench, p) for p in record["inputs"]} == {bench / ROW_FILES[a] for a in ("S1", "A0", "A1", "A2")}
    assert f"{SCRATCH}/a0/run/rows.ndjson" in record["inputs"]
    assert str(bench / ROW_FILES["S1"]) in record["inputs"]


def test_rescores(bench: Path, rows: dict[str, list[dict]]) -> None:
    for name in ("s1", *BLENDS):
        arm = "S1" if name == "s1" else name
        record = read_json(bench, f"{RUN}/score/rescore-{name}.json")
        assert record["input"]["path"] == str(bench / ROW_FILES[arm])
        answerable = [r for r in rows[arm] if not r["abstention"]]
        assert record["counts"] == {
            "answerable": {
                "all@5": sum(all_at(scored(arm, r), r["gold"], 5) for r in answerable),
                "any@5": sum(any_at(scored(arm, r), r["gold"], 5) for r in answerable),
                "all@10": sum(all_at(scored(arm, r), r["gold"], 10) for r in answerable),
            },
            "all": {"any@5": any5(rows[arm], arm)},
        }
        assert (record["g0_problems"], record["row_diffs"], record["summary_diffs"]) == ([], 0, 0)
    assert read_json(bench, f"{RUN}/score/rescore-s1.json")["counts"]["answerable"]["all@5"] == 416


def test_family(bench: Path, rows: dict[str, list[dict]]) -> None:
    text = (bench / RUN / "score/family.json").read_text("utf-8")
    assert "/" not in text
    family = json.loads(text)
    assert set(family["rescores"]) == {f"rescore-{n}.json" for n in ("s1", *BLENDS)}
    pairs = [("F1", "A0"), ("F2", "A0"), ("F3", "A0"), ("F2", "S1"), ("F3", "S1")]
    assert [(c["arm"], c["ref"]) for c in family["primary"]] == pairs
    ps = []
    for entry, (arm, ref) in zip(family["primary"], pairs):
        hits = [
            (all_at(scored(arm, x), x["gold"], 5), all_at(scored(ref, y), y["gold"], 5))
            for x, y in zip(rows[arm], rows[ref])
            if not x["abstention"]
        ]
        b = sum(x and not y for x, y in hits)
        c = sum(y and not x for x, y in hits)
        assert entry["arm_hits"] == every5(rows[arm], arm) and entry["ref_hits"] == every5(rows[ref], ref)
        assert entry["delta"] == entry["arm_hits"] - entry["ref_hits"]
        assert (entry["b_arm_only"], entry["c_ref_only"]) == (b, c)
        assert entry["p"] == mcnemar(b, c)
        ps.append(entry["p"])
    # Holm, written out the long way.
    order = sorted(range(5), key=lambda i: ps[i])
    adjusted = [0.0] * 5
    for step, i in enumerate(order):
        adjusted[i] = max([min(1.0, (5 - step) * ps[i])] + [adjusted[j] for j in order[:step]])
    for entry, p_holm in zip(family["primary"], adjusted):
        assert entry["p_holm"] == pytest.approx(p_holm, rel=1e-12)
        win = entry["delta"] >= 10 and entry["p_holm"] <= 0.05
        assert entry["words"] == ("a material gain" if win else "no material difference")


def test_reading(bench: Path) -> None:
    reading = read_json(bench, f"{RUN}/score/reading.json")
    assert reading["family"]["path"] == str(bench / RUN / "score/family.json")
    assert reading["fuse"]["path"] == str(bench / RUN / "fuse/fuse.json")
    assert reading["s1_lock"]["path"] == str(bench / RUN / "run/lock.json")
    assert reading["family_crosscheck"]["equal"] is True
    assert reading["f2_ties_reversed_exploratory"] == {"questions": 10, "every@5_changed": 0}
    assert reading["s1_run"] == {"texts": 125667, "texts_windowed": 54802}


def test_every_printed_digest_is_the_digest_of_the_file_it_names(bench: Path) -> None:
    named: list[tuple[str, str]] = []
    named += read_json(bench, f"{OCT}/w7/score-registered-w7.json")["rows"].items()
    fuse = read_json(bench, f"{RUN}/fuse/fuse.json")
    named += fuse["inputs"].items()
    named += [(b["rows"]["path"], b["rows"]["sha256"]) for b in fuse["blends"].values()]
    for name in ("s1", *BLENDS):
        record = read_json(bench, f"{RUN}/score/rescore-{name}.json")["input"]
        named.append((record["path"], record["sha256"]))
    reading = read_json(bench, f"{RUN}/score/reading.json")
    named += [(reading[k]["path"], reading[k]["sha256"]) for k in ("family", "fuse", "s1_lock")]
    assert len(named) == 3 + 4 + 6 + 7 + 3
    for printed, sha in named:
        assert digest(on_disk(bench, printed)) == sha, printed
    for name, sha in read_json(bench, f"{RUN}/score/family.json")["rescores"].items():
        assert digest(bench / RUN / "score" / name) == sha


def test_private_names_stay_in_the_log(bench: Path) -> None:
    smoke = str(bench / "bench/ls-2026-11-07-smoke")
    private = re.compile(r"gpu-b17|/home/|/root/|/mnt/|/Users/")
    for relative in FILES - {f"{RUN}/logs/fuse.log", f"{RUN}/run/sample.bin"}:
        text = (bench / relative).read_text("utf-8")
        if relative.endswith("w7/rows/a1/lock.json"):
            text = text.replace('"route": "gpu-b17.cluster.example.net"', "")
        if relative != "kit.yaml":
            assert not private.search(text), relative
        assert smoke not in text, relative
    log = (bench / RUN / "logs/fuse.log").read_text("utf-8")
    assert smoke in log and "/home/u7/" in log and "gpu-b17" in log


def test_kit_yaml(bench: Path) -> None:
    kit = yaml.safe_load((bench / "kit.yaml").read_text("utf-8"))
    assert list(kit) == [
        "kit",
        "title",
        "date",
        "licence",
        "version",
        "authors",
        "summary",
        "rai",
        "out",
        "sources",
        "rules",
        "external_digests",
        "figures",
        "readme",
    ]
    assert kit["kit"] == "rrf-data-kit" and kit["out"] == "./kit" and kit["licence"] == "CC-BY-4.0"
    assert [(s["path"], s["as"]) for s in kit["sources"]] == [
        ("bench/lme-2026-10", "longmemeval-2026-10"),
        ("bench/ls-2026-11-07", "learned-sparse-2026-11-07"),
    ]
    assert kit["sources"][1]["include"] == ["full-s1/**", "s2-skip.json"]
    assert kit["sources"][1]["exclude"] == ["full-s1/logs/**"]
    assert [r["use"] for r in kit["rules"]] == ["record-path-to-kit-path", "box-name-to-role", "digest-withheld"]
    assert kit["rules"][0]["with"]["map"] == {SCRATCH: "longmemeval-2026-10"}
    assert kit["rules"][1]["with"] == {
        "names": {"gpu-b17.cluster.example.net": "desktop", "gpu-b17": "desktop"},
        "fields": ["route"],
    }
    assert kit["rules"][2]["with"] == {"placeholder": "withheld-2026-09-29"}
    assert set(kit["external_digests"]) == {DATASET, HARNESS}
    assert kit["summary"] and kit["readme"]["not_here"]
    assert len(kit["figures"]) == 54 and len(kit["readme"]["figures_table"]) == 13


# --- determinism and speed --------------------------------------------------------------------------------


def test_two_folders_differ_only_by_their_own_paths(bench: Path, tmp_path: Path) -> None:
    other = generate_bench(tmp_path / "second").parent
    first_digests = {r: digest(bench / r) for r in FILES}
    second_digests = {r: digest(other / r) for r in FILES}
    for relative in sorted(FILES):
        mine, theirs = (bench / relative).read_bytes(), (other / relative).read_bytes()
        if str(bench).encode() not in mine and first_digests[relative] == second_digests[relative]:
            continue
        # What may differ: this folder's path, and the digests of files that print it.
        rewritten = mine.replace(str(bench).encode(), str(other).encode())
        for name in FILES:
            if first_digests[name] != second_digests[name]:
                rewritten = rewritten.replace(first_digests[name].encode(), second_digests[name].encode())
        assert rewritten == theirs, relative
    plain = {r for r in FILES if str(bench).encode() not in (bench / r).read_bytes()}
    assert {r for r in plain if first_digests[r] != second_digests[r]} == {
        f"{RUN}/score/family.json",
    }


def test_the_same_folder_gets_the_same_bytes_and_quickly(tmp_path: Path) -> None:
    target = tmp_path / "again"
    script = (
        "import sys, time; from pathlib import Path; start = time.perf_counter(); "
        "from kitbuild.synthetic import generate_bench; generate_bench(Path(sys.argv[1])); "
        "print(time.perf_counter() - start)"
    )
    done = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True, text=True, check=True)
    assert float(done.stdout) < 3.0
    before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
    generate_bench(target)
    assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()} == before
