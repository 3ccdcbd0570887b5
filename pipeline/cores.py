"""How many threads a job may use: what its config asks for, at most what Snakemake granted it.

Why: each heavy rule declares ``threads:`` (from the same config values), and Snakemake fits jobs
into ``--cores``, scaling a job's threads down when the machine has fewer cores. Snakemake tells a
shell job its grant through ``OMP_NUM_THREADS`` (set for every shell command it runs), so the
encoders, the attention pass and the llama.cpp servers read it here and never start more threads
than the job holds: ``snakemake --cores 8`` on a 2-core machine no longer oversubscribes.
Outside Snakemake (no ``OMP_NUM_THREADS``) the configured number holds.
"""

from __future__ import annotations

import os

GRANT_VARIABLE = "OMP_NUM_THREADS"


def machine_cores() -> int:
    """The cores this process may run on (what ``nproc`` prints: the affinity mask, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def granted_threads() -> int | None:
    """The threads this process was granted (Snakemake's ``OMP_NUM_THREADS``), None when unset."""
    try:
        n = int(os.environ.get(GRANT_VARIABLE, ""))
    except ValueError:
        return None
    return n if n > 0 else None


def job_threads(configured: int) -> int:
    """``configured`` threads, at most the job's grant: never below 1."""
    granted = granted_threads()
    return max(1, min(int(configured), granted) if granted else int(configured))
