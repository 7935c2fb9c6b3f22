"""group_by over many groups, with a long 'order' (a provenance.json's, in verify): counted in one
pass, never a group looked for in a list or counted over every row (minutes: a hang)."""

from __future__ import annotations

import time

import orjson

from kitbuild.figures import MemoryFiles, evaluate


def test_a_long_group_order_over_many_groups_is_counted_at_once() -> None:
    # An 'order' of 100,000 groups over 30,000 rows, each row its own group.
    rows = [{"qid": f"q{i}", "type": f"t{i}", "ranked": ["a"], "gold": ["a"]} for i in range(30_000)]
    kit = MemoryFiles({"L/rows.ndjson": b"".join(orjson.dumps(row) + b"\n" for row in rows)})
    spec = {
        "hits": {"recount": "every_at_k", "rows": "L/rows.ndjson", "ranked": "/ranked", "gold": "/gold", "k": 1},
        "by_type": {"recount": "group_by", "figures": ["hits"], "by": "/type", "order": [f"t{i}" for i in range(0, 200_000, 2)]},
    }
    started = time.monotonic()
    values = evaluate(spec, kit)
    assert time.monotonic() - started < 20
    groups = list(values["by_type"].parts)
    # The listed groups first, in their order; the rest sorted.
    assert values["by_type"].value == 30_000 and groups[:3] == ["t0", "t2", "t4"] and groups[15_000] == "t1"
    assert all(values["by_type"].parts[g].value == 1 for g in ("t0", "t1", "t29999"))


def test_an_order_naming_a_group_twice_keeps_what_it_counted() -> None:
    # (As before the one-pass count: a group listed twice is a group counted twice.)
    rows = [{"qid": "q1", "type": "a", "ranked": ["x"], "gold": ["x"]}, {"qid": "q2", "type": "b", "ranked": ["x"], "gold": ["y"]}]
    kit = MemoryFiles({"L/rows.ndjson": b"".join(orjson.dumps(row) + b"\n" for row in rows)})
    spec = {
        "hits": {"recount": "every_at_k", "rows": "L/rows.ndjson", "ranked": "/ranked", "gold": "/gold", "k": 1},
        "by_type": {"recount": "group_by", "figures": ["hits"], "by": "/type", "order": ["b", "zz", "b"]},
    }
    value = evaluate(spec, kit)["by_type"]
    assert value.value == 3 and list(value.parts) == ["b", "a"]
    assert value.parts["b"].parts["hits"].text() == "0" and value.parts["a"].parts["hits"].text() == "1"
