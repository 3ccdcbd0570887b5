"""Job priorities from the critical path: each job ranks by the longest chain of work still below it.

On 2 cores the order of ready jobs sets the run's length. Priorities by rule were tried and bought
nothing (02cf3c0, 71c7676): five suite SproutRAG attentions then ran before WattBot's hier index, which
the longest chain (index → retrieve → LLM answer → scores → report) waited for. Here every job's
priority is the expected wall seconds of the longest chain from it to the end of the DAG, itself
included, so a long chain outranks a wide fan of short jobs. Snakemake's scheduler stays in charge:
this only sets the ``priority`` it reads (``onstart``, once the DAG of jobs to run is known).

A job that holds several cores (a local LLM's answer jobs at 2 servers: 2 cores) gets its chain times
its cores. Snakemake's default (ILP) scheduler starts the set of ready jobs with the largest SUM of
priorities, so a 2-core job competes with two 1-core jobs: ranked by its chain alone it lost to any
two shorter chains whose sum was longer, or to one a little longer while the second core idled. Per
core it now ranks by its chain like every other job, and a core left idle counts 0. That decides only
when both cores are free at once (the start, the end of a 2-core job, a moment nothing else is
ready): Snakemake never leaves a core idle while a 1-core job fits, so no priority makes a 2-core job
start sooner than that (pipeline/workflow/list_schedule.py simulates it; on the default grid's DAG 2-core answers
wait for both cores without idling either, and the run is bound by its core-seconds, not by its chain:
docs/architecture.md, "Scheduling").

Expected job lengths come from the last run's ``benchmarks/`` in the working directory where a job has
one, else from a shipped table (:data:`SHIPPED`: one default run's benchmark files, refreshed by
``python -m pipeline job-lengths``), keyed by job, then by rule and dataset, then by rule.
Results do not depend on the order.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pipeline.io import atomic_write_json
from pipeline.report.telemetry.time_table import BENCHMARK_DIR, JobTime, read_benchmarks, rule_of
from pipeline.workflow.dag_record import record_dag, resource_value

SHIPPED = Path(__file__).with_name("job_lengths.json")
PATH_LOG = Path("logs") / "critical_path.json"  # the planned critical path (the time report's timeline marks it)
UNKNOWN_S = 5.0  # a job of a rule no table knows: short (most rules without a record are)

N = TypeVar("N", bound=Hashable)


def job_key(benchmark: str) -> str:
    """``benchmarks/wattbot/index/hier.tsv`` → ``wattbot/index/hier`` (a job's name in the tables)."""
    key = benchmark.replace("\\", "/")
    key = key[len(BENCHMARK_DIR) + 1 :] if key.startswith(BENCHMARK_DIR + "/") else key
    return key[: -len(".tsv")] if key.endswith(".tsv") else key


def _rule_dataset(key: str) -> tuple[str, str]:
    return rule_of(f"{BENCHMARK_DIR}/{key}.tsv"), key.split("/", 1)[0]


@dataclass(frozen=True)
class JobLengths:
    """Expected wall seconds per job, with rule-and-dataset and rule means for jobs never timed."""

    by_job: dict[str, float]
    by_rule_dataset: dict[tuple[str, str], float] = field(default_factory=dict)
    by_rule: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of_jobs(cls, by_job: dict[str, float]) -> JobLengths:
        groups: dict[tuple[str, str], list[float]] = {}
        rules: dict[str, list[float]] = {}
        for key, s in by_job.items():
            rule, dataset = _rule_dataset(key)
            groups.setdefault((rule, dataset), []).append(s)
            rules.setdefault(rule, []).append(s)
        return cls(
            dict(by_job),
            {k: statistics.fmean(v) for k, v in groups.items()},
            {k: statistics.fmean(v) for k, v in rules.items()},
        )

    def seconds(self, key: str) -> float:
        if key in self.by_job:
            return self.by_job[key]
        rule, dataset = _rule_dataset(key)
        return self.by_rule_dataset.get((rule, dataset), self.by_rule.get(rule, UNKNOWN_S))


def measured(jobs: Iterable[JobTime]) -> dict[str, float]:
    """Wall seconds per job from benchmark records (``JobTime.job`` is the key :func:`job_key` gives)."""
    return {j.job: round(j.wall_s, 2) for j in jobs}


def load_lengths(root: str | Path = ".", shipped: Path = SHIPPED) -> JobLengths:
    """The shipped table, overridden job by job by ``root``'s own ``benchmarks/`` (the last run here)."""
    table = json.loads(shipped.read_text(encoding="utf-8"))["jobs"] if shipped.exists() else {}
    return JobLengths.of_jobs({**table, **measured(read_benchmarks(root))})


def write_shipped(root: str | Path, out: Path = SHIPPED, source: str = "", keep: Iterable[str] = ()) -> int:
    """Refresh the shipped table from ``root``'s benchmark files (run after a cold default run). Jobs in
    ``keep`` hold their length from the table being replaced: ones the run did not really do (the
    llama-cpp-python build, ``llm_runtime``, takes seconds where pip has the wheel cached, 6 min where not)."""
    jobs = measured(read_benchmarks(root))
    old = json.loads(out.read_text(encoding="utf-8"))["jobs"] if out.exists() else {}
    if missing := sorted(set(keep) - set(old)):
        raise SystemExit(f"job-lengths: --keep {', '.join(missing)}: not in {out}")
    jobs.update({k: old[k] for k in keep})
    atomic_write_json(out, {"source": source, "jobs": dict(sorted(jobs.items()))})
    return len(jobs)


def chain_lengths(
    nodes: Iterable[N], dependents: Callable[[N], Iterable[N]], length: Callable[[N], float]
) -> dict[N, float]:
    """For each node, the longest sum of ``length`` along a path from it down to a node nothing depends
    on, the node itself included. Iterative (a DAG of thousands of jobs is deeper than Python's stack)."""
    chain: dict[N, float] = {}
    for start in nodes:
        stack: list[tuple[N, bool]] = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if node in chain:
                continue
            below = list(dependents(node))
            if expanded:
                chain[node] = length(node) + max((chain[d] for d in below), default=0.0)
            else:
                stack.append((node, True))
                stack.extend((d, False) for d in below if d not in chain)
    return chain


def critical_path(chain: dict[N, float], dependents: Callable[[N], Iterable[N]]) -> list[N]:
    """The longest chain: from the node with the longest chain, each step to its longest dependent."""
    if not chain:
        return []
    path = [max(chain, key=lambda n: chain[n])]
    while below := [d for d in dependents(path[-1]) if d in chain]:
        path.append(max(below, key=lambda d: chain[d]))
    return path


def priority(chain_s: float, cores: int = 1) -> int:
    """Snakemake priorities are integers: whole seconds of remaining chain, at least 1 (0 is the default),
    times the cores the job holds (the ILP scheduler sums priorities: per core, its chain)."""
    return max(1, round(chain_s)) * max(1, cores)


def prioritise(workflow, root: str | Path = ".") -> list[str]:
    """``onstart``: set every job-to-run's priority to its remaining chain per core it holds (``threads``,
    already scaled to ``--cores``); write and return the critical path (job keys). Jobs the user prioritised
    (``--prioritize``) keep Snakemake's highest priority."""
    dag = getattr(workflow, "dag", None)
    if dag is None:
        return []
    from snakemake.jobs import Job

    todo = set(dag.needrun_jobs())
    lengths = load_lengths(root)

    def key(job) -> str:
        return job_key(str(job.benchmark)) if job.benchmark else ""

    def dependents(job) -> list:
        return [d for d in dag.depending[job] if d in todo]

    chain = chain_lengths(todo, dependents, lambda j: lengths.seconds(key(j)) if key(j) else 0.0)
    for job, s in chain.items():
        if dag._priority.get(job) != Job.HIGHEST_PRIORITY:
            dag._priority[job] = priority(s, job.threads)
    path = [key(j) for j in critical_path(chain, dependents) if key(j)]
    Path(root, PATH_LOG).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(Path(root, PATH_LOG), {"jobs": path, "expected_s": [lengths.seconds(k) for k in path]})
    return path


def record_final_dag(workflow, root: str | Path = ".") -> Path | None:
    """``onsuccess``: record the run's DAG as Snakemake holds it at the end (pipeline/workflow/dag_record.py:
    the cluster prediction replays it): every job, also those a checkpoint added while the run went, which
    ``onstart`` never sees (a sharded dataset's ``index_part`` and attention-part jobs come after its
    ``doc_sizes`` checkpoint), and those already up to date (their lengths are the benchmarks an earlier run
    wrote); ``ran`` marks the jobs this invocation ran. None without a DAG (a dry run)."""
    dag = getattr(workflow, "dag", None)
    if dag is None:
        return None
    jobs = set(dag.jobs)

    def key(job) -> str:
        return job_key(str(job.benchmark)) if job.benchmark else job_name(job)

    llm_total = resource_value(getattr(workflow, "global_resources", None), "llm_api")
    return record_dag(root, jobs, key, lambda j: [d for d in dag.depending[j] if d in jobs], llm_total, dag.finished)


def job_name(job) -> str:
    """A job without a benchmark file, named by its rule and wildcard values (``llm_runtime``, ``report``)."""
    values = [str(v) for v in getattr(job, "wildcards", None) or ()]
    return "/".join([job.rule.name, *values])
