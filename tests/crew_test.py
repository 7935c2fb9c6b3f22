"""kitbuild.crew: forked workers take every run once, answer through files that never make them
wait, and a worker that fails or dies leaves its runs missing, never wrong; none outlives the crew."""

from __future__ import annotations

import functools
import os
import time

import pytest

from kitbuild import crew
from kitbuild.crew import Crew

pytestmark = pytest.mark.skipif(not crew.AVAILABLE, reason="workers are forked")


def _started(count: int, workers: int, work: object) -> tuple[Crew, list[int]]:
    """A crew of ``workers`` on ``count`` runs, and its workers' process ids."""
    team = Crew(count)
    team.start(workers, work)  # type: ignore[arg-type]
    return team, [w.pid for w in team._workers]


def _ended(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # ended and waited for
        return True
    return False


def _square(k: int) -> tuple[int, int]:
    return k, k * k


def test_the_pipe_hands_out_every_run_number_once_then_says_none_is_left() -> None:
    read = crew.pipe_of_runs(crew.MAX_RUNS)
    try:
        taken = [crew.take(read) for _ in range(crew.MAX_RUNS + 2)]
    finally:
        os.close(read)
    assert taken == [*range(crew.MAX_RUNS), None, None]


def test_more_runs_than_the_pipe_holds_are_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match=f"at most {crew.MAX_RUNS}"):
        crew.pipe_of_runs(crew.MAX_RUNS + 1)


def test_every_run_is_answered_once_and_the_workers_are_gone_after() -> None:
    team, pids = _started(50, 2, _square)
    answers = list(team.answers())
    assert sorted(answers) == [(k, (k, k * k)) for k in range(50)]
    assert len(pids) == 2 and all(map(_ended, pids))


def test_the_main_process_takes_runs_beside_the_workers() -> None:
    team, _ = _started(40, 1, _square)
    mine = []
    while (k := team.take()) is not None:
        mine.append(k)
    theirs = [k for k, _ in team.answers()]
    assert sorted(mine + theirs) == list(range(40))


def _dies_on(doomed: int, k: int) -> int:
    if k == doomed:
        os._exit(3)
    return k


def _fails_on(doomed: int, k: int) -> int:
    if k == doomed:
        raise RuntimeError("a private detail: /home/alice/rows")
    time.sleep(0.01)  # (the other runs take a while: the stop comes long before they are done)
    return k


def test_a_run_whose_worker_dies_is_missing_and_the_other_worker_does_the_rest(capfd: pytest.CaptureFixture[str]) -> None:
    team, pids = _started(20, 2, functools.partial(_dies_on, 7))
    answered = dict(team.answers())
    # The run that killed its worker is missing, and so is any that worker took after it; the
    # other worker answers the rest, each with its own answer.
    assert 7 not in answered
    assert all(answer == k for k, answer in answered.items())
    assert len(answered) >= 10 and not team.stopped
    assert all(map(_ended, pids))
    assert capfd.readouterr() == ("", "")


def test_a_run_that_fails_stops_the_crew_and_nothing_is_printed(capfd: pytest.CaptureFixture[str]) -> None:
    team, pids = _started(200, 2, functools.partial(_fails_on, 0))
    answered = dict(team.answers())
    # Run 0 fails at once: the crew is stopped, and the runs left are the caller's (an error that
    # every run would meet is not met 200 times over).
    assert 0 not in answered and team.stopped and team.take() is None
    assert len(answered) < 199
    assert all(map(_ended, pids))
    # The worker's error is not printed (the caller meets it again, in its own process).
    assert capfd.readouterr() == ("", "")


def _counts_setup(k: int) -> int:
    return SETUPS[0]


SETUPS = [0]


def _setup() -> None:
    SETUPS[0] += 1


def test_each_worker_is_set_up_once_before_its_first_run() -> None:
    team = Crew(30)
    team.start(2, _counts_setup, setup=_setup)
    assert {answer for _, answer in team.answers()} == {1}
    assert SETUPS == [0]  # (in the workers, not here)


def _large(k: int) -> bytes:
    return bytes([k]) * (1 << 20)


def test_workers_answer_every_run_while_no_one_reads_their_answers() -> None:
    """Answers of 1 MiB each, 16 of them, far more than a pipe holds: the workers end without
    the main process reading a byte."""
    team, pids = _started(16, 2, _large)
    deadline = time.monotonic() + 60
    running = set(pids)
    while running:
        assert time.monotonic() < deadline, "the workers waited for a reader"
        time.sleep(0.01)
        # A worker once waited for is not asked again: a second wait for it would fail.
        running = {pid for pid in running if not os.waitpid(pid, os.WNOHANG)[0]}
    try:
        answers = dict(team.answers())
    finally:
        team.cancel()
    assert answers == {k: _large(k) for k in range(16)}


def _stops_on_first(team: list[Crew], k: int) -> int:
    team[0].stop()
    return k


def test_a_stop_leaves_the_runs_not_taken_to_the_caller() -> None:
    holder: list[Crew] = []
    team = Crew(100)
    holder.append(team)
    team.start(1, functools.partial(_stops_on_first, holder))
    answered = [k for k, _ in team.answers()]
    assert answered == [0]  # the worker answers the run it stopped on, then takes no other
    assert team.stopped and team.take() is None


def _sleeps(k: int) -> int:
    time.sleep(60)
    return k


def test_a_cancel_ends_busy_workers_at_once() -> None:
    team, pids = _started(4, 2, _sleeps)
    began = time.monotonic()
    team.cancel()
    team.cancel()  # a second time: nothing left to do
    assert time.monotonic() - began < 10
    assert all(map(_ended, pids))
    assert team.take() is None


def test_in_order_gives_every_run_in_order_and_redoes_here_what_no_worker_answered() -> None:
    team, pids = _started(20, 2, functools.partial(_dies_on, 7))
    redone: list[int] = []

    def redo(k: int) -> int:
        redone.append(k)
        return k

    assert list(team.in_order(redo)) == [(k, k) for k in range(20)]
    assert 7 in redone and all(map(_ended, pids))


def test_in_order_raises_here_what_a_run_raised_in_a_worker() -> None:
    team, pids = _started(20, 2, functools.partial(_fails_on, 3))
    with pytest.raises(RuntimeError, match="a private detail"):
        for _ in team.in_order(functools.partial(_fails_on, 3)):
            pass
    team.cancel()
    assert all(map(_ended, pids))
