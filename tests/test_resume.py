"""Resumability: SIGKILL the whole run mid-rule (while the index is being embedded, then while LLM
answers are being cached), rerun with --rerun-incomplete, and get exactly what an uninterrupted run
writes — with every LLM response that was stored before the kill still there and reused."""
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from dag_runner import command, environment, result_files, snakemake

pytestmark = pytest.mark.slow


def start(work: Path, config: Path, *args: str) -> subprocess.Popen:
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "run.log", "a") as log:
        return subprocess.Popen(command(work, *args, configfile=config), env=environment(),
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def kill_when(proc: subprocess.Popen, work: Path, ready, timeout: float = 900) -> None:
    """SIGKILL the run's whole process group (Snakemake and every job it started) once ``ready()``."""
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None:
            pytest.fail("the run ended before the kill point:\n" + (work / "run.log").read_text()[-3000:])
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def unlock(work: Path, config: Path) -> None:
    """A SIGKILL leaves Snakemake's directory lock behind; `--unlock` is the documented first step
    (`make resume` runs both)."""
    done = snakemake(work, "--unlock", configfile=config)
    assert done.returncode == 0, done.stderr[-2000:]


def cached_calls(db: Path) -> dict[str, str]:
    if not db.exists():
        return {}
    with sqlite3.connect(db) as con:
        try:
            return dict(con.execute("SELECT key, result FROM calls"))
        except sqlite3.OperationalError:  # table not created yet
            return {}


def test_sigkill_mid_rule_then_rerun_incomplete_gives_identical_outputs(tiny_run, tmp_path):
    reference, config = tiny_run
    work = tmp_path / "killed"
    db = work / "data" / "cache" / "llm.sqlite"

    # 1. killed while an index is being built (its job started, its output not yet written)
    run = start(work, config)
    kill_when(run, work, lambda: any((work / "logs" / "wattbot" / "index").glob("*.log")))
    assert not (work / "reports" / "wattbot" / "leaderboard.csv").exists()

    # 2. resumed, then killed again while the mock LLM's answers are being stored one by one
    unlock(work, config)
    run = start(work, config, "--rerun-incomplete")
    kill_when(run, work, lambda: len(cached_calls(db)) >= 5)
    before = cached_calls(db)
    assert before, "no LLM response was stored before the kill"

    # 3. resumed to the end
    unlock(work, config)
    done = snakemake(work, "--rerun-incomplete", configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]

    after = cached_calls(db)
    assert {k: after.get(k) for k in before} == before  # nothing stored before the kill was lost
    telemetry = pd.concat(pd.read_json(p, lines=True)
                          for p in (work / "results/wattbot/answers/mock-llm").glob("*.telemetry.jsonl"))
    assert telemetry["cached"].any()  # the rerun reused stored responses instead of calling again
    a, b = result_files(reference), result_files(work)
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []
