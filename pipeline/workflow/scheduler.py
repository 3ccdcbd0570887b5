"""Local runs schedule without Snakemake's job-submission rate limit. Snakemake 9 offers no setting that
switches it off, and no ``--max-jobs-per-timespan`` value stops its re-scheduling timers (measured:
docs/architecture.md, "Scheduling"); tests/test_cores.py runs this against the real scheduler."""

from __future__ import annotations

# Snakemake's `priority:` per rule (default 0): on 2 cores the order of ready jobs sets the run's tail.
# In a measured default-grid run the LLM answer job waited 8 min for two free cores and WattBot's
# SproutRAG attention (9 min on one core, its trees ready after 1 min) started at 55 min, so the last
# 20 min ran one job after another. Long single jobs whose inputs are ready early go first; then what
# the LLM jobs wait for (their runtime's build, retrieval before more indexes). Results do not depend on
# the order.
PRIORITY = {"llm_runtime": 60, "sprout_attention": 50, "answer": 40, "retrieve_llm": 40, "retrieve": 30, "index": 20}


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
