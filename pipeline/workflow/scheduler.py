"""Local runs schedule without Snakemake's job-submission rate limit. Snakemake 9 offers no setting that
switches it off, and no ``--max-jobs-per-timespan`` value stops its re-scheduling timers (measured:
docs/architecture.md, "Scheduling"); tests/test_cores.py runs this against the real scheduler."""

from __future__ import annotations


def local_scheduler_without_rate_limit(workflow) -> bool:
    """Drop the scheduler's ``job_rate_limiter`` on a local run (its ``100/1s`` default is meant for cluster
    submission); True when it did. Called from ``onstart:``, when the scheduler exists and the executor
    is known (neither is while the Snakefile is parsed); cluster executors keep Snakemake's behaviour."""
    scheduler = getattr(workflow, "scheduler", None)
    try:
        local = bool(workflow.local_exec)
    except AttributeError:  # no executor yet: not a run
        return False
    if not local or scheduler is None or not hasattr(scheduler, "job_rate_limiter"):
        return False
    scheduler.job_rate_limiter = None
    return True
