"""`make run`'s steps timed by the kernel: ``python -m pipeline.make_steps --times
logs/make-run.times STEP -- CMD ...`` runs CMD and, when it succeeds, appends ``STEP <epoch seconds>`` (its end)
and ``STEP_cpu_s <seconds>`` (user + sys of CMD and every process under it) to the stamps the time table reads.

Why not the sum of Snakemake's ``benchmarks/*.tsv``: their ``cpu_time`` is sampled (psutil, every few seconds,
over a job's process tree), so a process that starts and ends between two samples is missed and a short job
reads the first sample's figure. The kernel's account of a process's waited-for descendants
(``getrusage(RUSAGE_CHILDREN)``) misses none: Snakemake waits for its jobs, a job for its processes (the
llama-cpp servers: pipeline/llm/local_server.py stops and waits for them), and Snakemake's own scheduling
counts too. A process left to init, never waited for, is not counted.

CMD keeps this process's stdin, stdout and stderr (its output streams as before). Ctrl-C reaches CMD from the
terminal (the whole foreground process group gets SIGINT, as does SIGHUP): this process outlives it and exits
as it did; a SIGTERM sent to this process alone is passed on. Standard library only: the set-up step runs
before the virtual environment exists.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

CPU_SUFFIX = "_cpu_s"  # "<step>_cpu_s <seconds>": the step's CPU seconds beside its "<step> <epoch>" stamp
# the source of these counts, as the run's summary names it (the ``cpu_s_source`` of time_table.py's run_summary)
RUSAGE = "rusage"


def children_cpu_s() -> float:
    """User + sys seconds of this process's children (and theirs) that have ended and been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_step(command: list[str]) -> tuple[int, float]:
    """Run ``command`` to its end; its exit status (negative: the signal that ended it) and CPU seconds."""
    before = children_cpu_s()
    # Python handlers, not SIG_IGN: exec resets them to the default in the child, an ignored signal stays ignored.
    previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGHUP)}
    proc = subprocess.Popen(command)
    previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, lambda sig, _: proc.send_signal(sig))
    try:
        status = proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status, children_cpu_s() - before


def record(times: Path, step: str, cpu_s: float) -> None:
    """Append the step's end stamp and CPU seconds to ``times``."""
    with open(times, "a") as fh:
        fh.write(f"{step} {time.time():.1f}\n{step}{CPU_SUFFIX} {cpu_s:.2f}\n")


def exit_as(status: int) -> int:
    """The status to exit with: CMD's, or CMD's fatal signal raised again here (make then reports it as such)."""
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        return 128 - status  # the signal did not end this process
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.make_steps", description=__doc__)
    parser.add_argument("--times", type=Path, required=True, help="the stamps file (logs/make-run.times)")
    parser.add_argument("step", help="the step's name in it (setup, dag)")
    parser.add_argument("command", nargs="+", help="the command, after --")
    args = parser.parse_args(argv)
    status, cpu_s = run_step(args.command)
    if status == 0:
        record(args.times, args.step, cpu_s)
    return exit_as(status)


if __name__ == "__main__":
    sys.exit(main())
