"""A bound child (pipeline/llm/bound_child.py, how a job starts its local LLM servers) outlives the thread that
started it and dies with its process, even by SIGKILL. Before, a server forked by a worker thread was
SIGKILLed when that thread ended (PR_SET_PDEATHSIG follows the forking thread), failing a gateway's later
batches (#48)."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.llm.bound_child import popen_bound

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


def gone(pid: int, within_s: float = 10) -> bool:
    """``pid`` has exited (reaped by init, or a zombie of ours) within ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_child_started_from_a_worker_thread_outlives_the_thread():
    with ThreadPoolExecutor(1) as pool:
        proc = pool.submit(popen_bound, ["sleep", "60"]).result()
    t = threading.Thread(target=lambda: None)  # and a second thread that comes and goes
    t.start()
    t.join()
    try:
        time.sleep(0.5)
        assert proc.poll() is None, f"killed with the thread that started it (exit {proc.returncode})"
    finally:
        proc.kill()
        proc.wait()


def test_a_child_dies_with_its_process_even_by_sigkill(tmp_path):
    """A process starts a bound child from a worker thread that then ends, prints the child's pid, and is
    SIGKILLed: the child goes too."""
    script = textwrap.dedent(
        """
        import time
        from concurrent.futures import ThreadPoolExecutor
        from pipeline.llm.bound_child import popen_bound
        with ThreadPoolExecutor(1) as pool:
            child = pool.submit(popen_bound, ["sleep", "60"]).result()
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(owner.stdout.readline())
        time.sleep(0.3)
        assert not gone(child, within_s=0.2), "the child died before its process"
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        assert gone(child), "the child outlived its SIGKILLed process"
    finally:
        owner.kill()
        owner.wait()


def test_a_failed_start_raises_in_the_asking_thread():
    with pytest.raises(FileNotFoundError):
        popen_bound(["/nonexistent/wattbench-no-such-program"])
    proc = popen_bound(["true"])  # the launcher still serves
    assert proc.wait(timeout=10) == 0
