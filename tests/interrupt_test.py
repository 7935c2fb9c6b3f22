"""Ctrl-C in a terminal reaches every process of its group: the workers of a parallel pass as
well as kitbuild itself. The pass must end at once (not after every batch left), leave no worker
running (one would go on writing into a staging folder being removed), and print no worker's
traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROGRAM = """
import os, sys, time
from kitbuild.parallel import map_files

def work(folder, item):
    open(os.path.join(folder, f"{os.getpid()}-{item}"), "w").close()
    time.sleep(0.1)
    return item

try:
    map_files(work, sys.argv[1], list(range(400)), [1 << 20] * 400, 4)
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_ctrl_c_to_the_group_ends_a_parallel_pass_at_once_and_every_worker_with_it(tmp_path: Path) -> None:
    # 400 items of 0.1 s on 4 workers: 10 s of work, of which a pass stopped at once does little.
    process = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while len(os.listdir(tmp_path)) < 8 and time.monotonic() < deadline:  # every worker has begun
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    asked = time.monotonic()
    try:
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    took = time.monotonic() - asked
    assert (out, err) == ("interrupted\n", "")
    assert took < 5, f"the pass went on for {took:.1f} s after Ctrl-C"
    workers = {int(name.split("-")[0]) for name in os.listdir(tmp_path)}
    assert len(workers) == 4
    started = len(os.listdir(tmp_path))
    time.sleep(0.5)
    assert len(os.listdir(tmp_path)) == started, "a worker went on working after the pass ended"
    assert not [pid for pid in workers if _alive(pid)]
