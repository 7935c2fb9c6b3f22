"""Work spread over processes (kitbuild/parallel.py): results in input order, errors and progress kept."""

from __future__ import annotations

import os
import time

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from kitbuild import parallel
from kitbuild.parallel import batches, map_files
from kitbuild.progress import Progress

# Enough bytes that a few files go to the workers too (below SERIAL_BYTES they are done here).
LARGE = parallel.SERIAL_BYTES


class Recording(Progress):
    """A progress that adds up what it is told."""

    def __init__(self) -> None:
        self.files = 0
        self.size = 0
        self.calls = 0

    def advance(self, files: int = 0, size: int = 0) -> None:
        self.files += files
        self.size += size
        self.calls += 1


# Work functions are module-level: map_files sends them to the workers by name.


def tagged(state: str, item: int) -> tuple[str, int, int]:
    # The first item is slow, so that later batches finish first.
    if item == 0:
        time.sleep(0.05)
    return state, item * item, os.getpid()


def fails_on_seven(state: str, item: int) -> int:
    if item == 7:
        raise ValueError(f"item {item} cannot be read")
    return item


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("count, weight", [(500, 10), (3, LARGE)], ids=["many-small", "few-large"])
def test_results_come_in_input_order(jobs, count, weight):
    items = list(range(count))
    out = map_files(tagged, "state", items, [weight] * count, jobs)
    assert [(state, square) for state, square, _ in out] == [("state", i * i) for i in items]
    pids = {pid for _, _, pid in out}
    if jobs == 1:
        assert pids == {os.getpid()}
    else:
        assert os.getpid() not in pids  # the work went to the workers


def test_sequential_work_stays_in_this_process_in_order():
    out = map_files(tagged, "state", list(range(500)), [LARGE] * 500, jobs=2, sequential=True)
    assert [square for _, square, _ in out] == [i * i for i in range(500)]
    assert {pid for _, _, pid in out} == {os.getpid()}


def test_few_small_items_are_done_here():
    out = map_files(tagged, "state", [1, 2, 3], [10, 10, 10], jobs=2)
    assert {pid for _, _, pid in out} == {os.getpid()}


def test_no_items_give_no_results():
    assert map_files(tagged, "state", [], [], jobs=2) == []


@pytest.mark.parametrize("jobs, count, weight", [(1, 500, 10), (2, 500, 10), (2, 3, LARGE)])
def test_an_exception_in_the_work_is_raised_in_the_caller(jobs, count, weight):
    with pytest.raises(ValueError, match="^item 7 cannot be read$"):
        map_files(fails_on_seven, None, list(range(count)) + [7], [weight] * (count + 1), jobs)


@pytest.mark.parametrize("jobs, count, weight", [(1, 500, 10), (2, 500, 10), (2, 3, LARGE), (2, 3, 10)])
def test_progress_moves_by_every_item_and_every_weight_exactly(jobs, count, weight):
    progress = Recording()
    weights = [weight + i for i in range(count)]
    map_files(tagged, "state", list(range(count)), weights, jobs, progress)
    assert (progress.files, progress.size) == (count, sum(weights))
    assert progress.calls >= 1


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(0, 1 << 40), max_size=3000), st.integers(1, 64))
def test_batches_keep_order_and_cover_every_item(weights, jobs):
    items = list(range(len(weights)))
    runs = batches(items, weights, jobs)
    assert [i for run in runs for i in run] == items
    assert all(run for run in runs)
    assert all(len(run) <= parallel.MAX_BATCH_FILES for run in runs)


def test_many_items_go_out_in_batches_not_one_by_one():
    runs = batches(list(range(100_000)), [1] * 100_000, jobs=4)
    assert len(runs) <= 100_000 // parallel.MAX_BATCH_FILES + 1
    assert [i for run in runs for i in run] == list(range(100_000))


def test_no_more_workers_start_than_four_a_core(monkeypatch):
    # '--jobs 100000' over many files must not start a process a file.
    monkeypatch.setattr(parallel, "default_jobs", lambda: 1)
    out = map_files(tagged, "state", list(range(2_000)), [10] * 2_000, jobs=100_000)
    assert [square for _, square, _ in out] == [i * i for i in range(2_000)]
    assert len({pid for _, _, pid in out}) <= parallel.MAX_JOBS_PER_CORE
