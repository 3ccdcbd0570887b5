"""The test runner's timeout stops the whole run, not only Snakemake: a timed-out real-cluster test once left
the tiny grid's answer jobs running for half an hour beside the next tests (tests/dag_runner.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from dag_runner import run_group

# A parent that starts a child which outlives a killed parent (as Snakemake's jobs do), prints its pid, waits.
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(child.pid, flush=True)
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone for our purpose
        return f.read().split(")")[-1].split()[0] != "Z"


def test_a_timed_out_run_leaves_no_process_behind():
    began = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        run_group([sys.executable, "-c", PARENT], env=dict(os.environ), timeout=3, grace=2)
    child = int(caught.value.output.split()[0])
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child), "the run's child outlived the timeout"
    assert time.monotonic() - began < 30


def test_a_run_that_ends_in_time_returns_its_output():
    done = run_group([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
                     env=dict(os.environ), timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
