"""The jobs a Snakemake invocation will run, known once its DAG is built: what the LLM preflight, the
estimate and the plan cover (:func:`pipeline.workflow.llm_shares.needed_llm_work`), so a run asked for
a few targets, or resumed, is checked and priced for what it will do rather than for the whole grid."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

Job = tuple[str, Mapping[str, str]]  # (rule name, wildcards) of a job that will run


def needrun_jobs(workflow) -> list[Job]:
    """The jobs of ``workflow``'s built DAG that will run (up-to-date outputs and finished jobs left out)."""
    return [(job.rule.name, dict(job.wildcards_dict)) for job in workflow.dag.needrun_jobs()]


class _DagBuilt(logging.Filter):
    """Calls back once, at the first ``RUN_INFO`` record (the "Job stats" table): Snakemake 9 logs it as
    soon as its DAG is built, on a dry run and on a real run (there before ``onstart``), and has no hook
    there; a dry run runs no ``onstart``. A filter of the logger, so the callback prints before the table."""

    def __init__(self, workflow, callback: Callable[[list[Job]], None]) -> None:
        from snakemake.logging import LogEvent

        super().__init__()
        self.workflow, self.callback, self.event = workflow, callback, LogEvent.RUN_INFO

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "event", None) == self.event:
            logging.getLogger(record.name).removeFilter(self)  # once: a dry run logs the table again at its end
            self.callback(needrun_jobs(self.workflow))
        return True


def when_dag_built(workflow, callback: Callable[[list[Job]], None]) -> None:
    """Call ``callback`` with the jobs that will run (:func:`needrun_jobs`) once ``workflow``'s DAG is built,
    before any job and before Snakemake prints its plan; nothing when nothing is to be done. A filter left
    by an earlier workflow in this process (one that stopped before its DAG) is dropped first."""
    from snakemake.logging import logger

    for old in [f for f in logger.filters if isinstance(f, _DagBuilt)]:
        logger.removeFilter(old)
    logger.addFilter(_DagBuilt(workflow, callback))
