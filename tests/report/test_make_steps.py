"""make run's steps timed by the kernel (pipeline/make_steps.py, #34): real process trees.
A grandchild's CPU is counted, the command's exit status and output pass through, Ctrl-C stops the command
and the wrapper outlives it, and the time table reports the count as the run's CPU."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pipeline.datasets.paths import REPO
from pipeline.report.telemetry.time_table import MAKE_RUN_TIMES, RUN_SUMMARY, render, write_time_table

BURN = 1.0  # CPU seconds the grandchild burns
# A child that starts a grandchild burning BURN CPU-s (time.process_time: its own CPU, not wall), waits for it,
# and prints what the grandchild reported: the tree Snakemake -> job -> its processes has this shape.
GRANDCHILD = (
    "import time; t = time.process_time()\n"
    f"while time.process_time() - t < {BURN}: pass\n"
    "print('burned', time.process_time() - t)"
)
CHILD = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {GRANDCHILD!r}], check=True)"
# A server that works until it is stopped, reporting its CPU seconds then: a job stops its llama-cpp servers
# with terminate() and wait() (pipeline/llm/local_server.py), so their CPU counts too.
SERVER = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: (print('server', time.process_time(), flush=True), sys.exit(0)))\n"
    "print('ready', flush=True)\n"
    "while True: pass"
)
JOB = (
    "import subprocess, sys\n"
    f"server = subprocess.Popen([sys.executable, '-c', {SERVER!r}], stdout=subprocess.PIPE, text=True)\n"
    "server.stdout.readline()\n"
    f"{CHILD}\n"
    "server.terminate(); print(server.stdout.read(), end=''); server.wait()"
)


def timed(times, step: str, *command: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline.make_steps", "--times", str(times), step, "--", *command],
        cwd=REPO, capture_output=True, text=True, **kw)


def stamps(times) -> dict[str, float]:
    return {k: float(v) for k, v in (line.split(" ") for line in times.read_text().splitlines())}


def test_grandchildren_cpu_is_counted_and_their_output_passes_through(tmp_path):
    times = tmp_path / "make-run.times"
    before = time.time()
    out = timed(times, "dag", sys.executable, "-c", JOB)
    assert out.returncode == 0  # below: the command's stdout, as its processes wrote it
    burned = dict(line.split(" ") for line in out.stdout.splitlines())
    assert float(burned["burned"]) >= BURN and float(burned["server"]) > 0
    got = stamps(times)
    assert set(got) == {"dag", "dag_cpu_s"} and before <= got["dag"] <= time.time() + 0.1
    assert got["dag_cpu_s"] >= float(burned["burned"]) + float(burned["server"])  # and the interpreters' start-ups


def test_a_failing_command_keeps_its_status_and_records_nothing(tmp_path):
    times = tmp_path / "make-run.times"
    out = timed(times, "setup", sys.executable, "-c", "import sys; print('oops', file=sys.stderr); sys.exit(3)")
    assert out.returncode == 3 and out.stderr == "oops\n" and not times.exists()
    killed = timed(times, "setup", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert killed.returncode == -signal.SIGTERM and not times.exists()  # its fatal signal, raised again


def test_ctrl_c_stops_the_command_and_the_wrapper_outlives_it(tmp_path):
    """The terminal's SIGINT goes to the whole process group: the command handles it (Snakemake cleans up) and
    ends; the wrapper waits for that end and exits with its status."""
    ready, cleaned = tmp_path / "ready", tmp_path / "cleaned"
    child = (
        "import pathlib, signal, sys, time\n"
        f"def stop(*_):\n    time.sleep(0.5); pathlib.Path({str(cleaned)!r}).write_text('x'); sys.exit(130)\n"
        f"signal.signal(signal.SIGINT, stop); pathlib.Path({str(ready)!r}).write_text('x'); time.sleep(60)"
    )
    times = tmp_path / "make-run.times"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.make_steps", "--times", str(times), "dag", "--",
         sys.executable, "-c", child], cwd=REPO, start_new_session=True)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: every process of the foreground group
    assert proc.wait(timeout=30) == 130
    assert cleaned.exists() and not times.exists()  # ended after the command's clean-up; no stamps


def test_the_time_table_reports_the_kernels_count(tmp_path):
    """A make run's stamps from real timed steps: the run's CPU is the Snakemake step's count, its cores busy
    that over the step's wall; the benchmarks' sampled sum is kept beside it."""
    (tmp_path / "logs").mkdir()
    times = tmp_path / MAKE_RUN_TIMES
    times.write_text(f"start {time.time() - 1:.0f}\n")
    assert timed(times, "setup", sys.executable, "-c", "pass").returncode == 0
    assert timed(times, "dag", sys.executable, "-c", CHILD).returncode == 0
    got = stamps(times)
    bench = tmp_path / "benchmarks/wattbot/index/flat.tsv"  # a job that ran in the Snakemake step, sampled low
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "1.0\t0:00:01\t1\t1\t1\t1\t0\t0\t10\t0.1\n")
    os.utime(bench, (got["dag"], got["dag"]))
    write_time_table(tmp_path, tmp_path / "reports")
    summary = json.loads((tmp_path / "reports" / RUN_SUMMARY).read_text())
    assert summary["cpu_s_source"] == "rusage" and summary["cpu_s"] == round(got["dag_cpu_s"], 1) >= BURN
    assert summary["benchmarks_cpu_s"] == 0.1
    wall = got["dag"] - got["setup"]
    assert summary["make_run_snakemake_s"] == round(wall, 1)
    assert summary["cores_busy"] == pytest.approx(got["dag_cpu_s"] / wall, abs=0.01)
    assert summary["make_run_setup_cpu_s"] == round(got["setup_cpu_s"], 1)
    assert summary["make_run_total_cpu_s"] == round(summary["make_run_setup_cpu_s"] + summary["cpu_s"], 1)
    body = render(tmp_path / "reports")
    assert "the kernel's count (rusage) of each step" in body and "as Snakemake's benchmarks sample it" not in body
    assert "sampled (psutil" in body  # the per-rule table says its CPU is sampled
