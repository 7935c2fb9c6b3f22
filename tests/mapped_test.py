"""How verify's scan groups a worker's run of files: a large file alone is paired with its neighbour."""

from __future__ import annotations

from kitbuild import filescan


def test_runs_of_one_large_file_are_paired_with_their_neighbour() -> None:
    large = {"L1", "L2", "L3", "L4", "L5"}
    runs = [["L1"], ["L2"], ["L3"], ["s1", "s2"], ["L4"], ["s3"], ["L5"]]
    assert filescan.in_pairs(runs, large, 2) == [["L1", "L2"], ["L3"], ["s1", "s2"], ["L4"], ["s3"], ["L5"]]
    assert filescan.in_pairs([["L1"], ["L2"], ["L3"], ["L4"]], large, 2) == [["L1", "L2"], ["L3", "L4"]]
    # Two files on two workers: apart, not paired on one.
    assert filescan.in_pairs([["L1"], ["L2"]], large, 2) == [["L1"], ["L2"]]
    assert filescan.in_pairs([["L1"], ["L2"]], large, 1) == [["L1", "L2"]]
    assert filescan.in_pairs([["s1"], ["s2"]], large, 1) == [["s1"], ["s2"]]
    assert runs == [["L1"], ["L2"], ["L3"], ["s1", "s2"], ["L4"], ["s3"], ["L5"]]  # not changed in place
