"""The makespan of a kept run's DAG on a cluster of N nodes, predicted from its measured job lengths.

Why: a user who outgrows one machine asks how long the same run takes on a cluster, and the answer is
bounded by the DAG's longest chain, by the work divided by the cores, and by the cost of each submission
(sbatch to running, paid once per job along every chain), none of which one local run shows. So a run
records its DAG (``onsuccess``: each job, the cores it holds, its ``llm_api`` share and the jobs waiting
on it: :data:`DAG_LOG`), its end joins that with the jobs' measured wall seconds into
``reports/`` (:data:`DAG_REPORT`, kept with the run under ``runs/<id>/``), and ``python -m pipeline
makespan`` replays it through the scheduler simulation (pipeline/workflow/list_schedule.py) on 1, 4, 16
and 64 nodes with the per-job latency the real-cluster test measured (``reports/bench/cluster.json``),
beside the run's measured 1-node time. The prediction says which latency it used and where it came from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.workflow.critical_path import JobLengths, chain_lengths, critical_path, priority
from pipeline.workflow.dag_record import DAG_REPORT
from pipeline.workflow.list_schedule import Nodes, SimJob, greedy, ilp, makespan, schedule

RUN_TIMES = "time-run.telemetry.json"  # in reports/: the run's measured span (time-table)
NODES = (1, 4, 16, 64)
CORES = 2  # per node: the machine the default runs are measured on


@dataclass(frozen=True)
class RunDag:
    """A kept run's DAG with measured lengths: the jobs to simulate, how many lengths were not measured
    (given their rule's mean in this run), its ``llm_api`` total, and the run it came from."""

    jobs: dict[str, SimJob]
    unmeasured: int
    llm_api: int | None
    run: dict

    @classmethod
    def of_run(cls, run_dir: str | Path) -> RunDag:
        """From ``runs/<id>/``: ``reports/`` :data:`DAG_REPORT`, the span in :data:`RUN_TIMES`, ``run.json``."""
        run_dir = Path(run_dir)
        path = run_dir / "reports" / DAG_REPORT
        if not path.exists():
            raise SystemExit(f"makespan: {path} is missing: the run predates the DAG record (logs/dag.json)")
        dag = json.loads(path.read_text(encoding="utf-8"))
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        times = run_dir / "reports" / RUN_TIMES
        span = json.loads(times.read_text(encoding="utf-8")) if times.exists() else {}
        run = {
            "id": info.get("id"),
            "commit": info.get("commit"),
            "cpu": info.get("cpu"),
            "config_files": info.get("config_files"),
            "resumed": info.get("resumed"),
            **_measured(span),
        }
        return cls(*_sim_jobs(dag["jobs"]), dag.get("llm_api"), run)


def _measured(span: dict) -> dict:
    """The run's measured 1-node times (time-table's record): the DAG's span and Snakemake's whole run."""
    return {"measured_span_s": span.get("span_s"), "measured_snakemake_s": span.get("make_run_snakemake_s")}


def _sim_jobs(record: dict) -> tuple[dict[str, SimJob], int]:
    """The record's jobs as simulation jobs; a length not measured is its rule's mean in this run."""
    measured = {k: v["seconds"] for k, v in record.items() if v.get("seconds") is not None}
    lengths = JobLengths.of_jobs(measured)
    jobs = {
        k: SimJob(
            lengths.seconds(k), int(v.get("threads", 1)), tuple(v.get("dependents", ())), int(v.get("llm_api", 0))
        )
        for k, v in record.items()
    }
    return jobs, len(record) - len(measured)


@dataclass(frozen=True)
class Latency:
    """The per-job submission latency used, and where it came from (a sentence the block shows)."""

    seconds: float
    source: str


def latency_from(cluster_json: str | Path) -> Latency:
    """The real-cluster test's figures (tests/cluster/conftest.py): its median sbatch-to-running where it
    recorded one, else its overhead per submission (cluster run less local run, over the submissions),
    else none (0 s: the prediction is then the bound with free submissions, and says so)."""
    path = Path(cluster_json)
    if not path.exists():
        return Latency(0.0, f"no real-cluster measurement (`{path}` is absent): 0 s, submissions taken as free")
    b = json.loads(path.read_text(encoding="utf-8"))
    run = f"the last passing `tests/cluster/` run ({b.get('date', 'undated')}, `{path}`)"
    if "submit_to_start_s" in b:
        return Latency(
            float(b["submit_to_start_s"]), f"median sbatch-to-running of {b['submit_to_start_jobs']} jobs, {run}"
        )
    per_job = (b["cluster_grid_s"] - b["local_grid_s"]) / b["submissions"]
    return Latency(
        round(per_job, 2),
        f"overhead per submission (cluster less local, over the submissions), {run}; "
        "it records no sbatch-to-running latency",
    )


def predict(dag: RunDag, latency: Latency, nodes: Sequence[int] = NODES, cores: int = CORES) -> dict:
    """Simulated makespans: the run on one node without submissions (as it ran locally: Snakemake's ILP
    pick), then on each node count with ``latency`` per job (SLURM starting the highest priority that
    fits, node by node); with the bounds no schedule beats: the longest chain, the work over the cores."""
    jobs = {k: SimJob(j.seconds, min(j.cores, cores), j.dependents, j.llm_api) for k, j in dag.jobs.items()}
    chain = chain_lengths(jobs, lambda k: jobs[k].dependents, lambda k: jobs[k].seconds)
    prio = {k: priority(chain[k], jobs[k].cores) for k in jobs}
    path = critical_path(chain, lambda k: jobs[k].dependents)
    work = sum(j.seconds * j.cores for j in jobs.values())
    paid = chain_lengths(jobs, lambda k: jobs[k].dependents, lambda k: jobs[k].seconds + latency.seconds)
    by_nodes = {
        str(n): round(makespan(schedule(jobs, prio, cores, greedy, dag.llm_api, Nodes(n, latency.seconds))), 1)
        for n in nodes
    }
    return {
        "run": dag.run,
        "cores_per_node": cores,
        "jobs": len(jobs),
        "unmeasured_jobs": dag.unmeasured,
        "core_seconds": round(work, 1),
        "critical_path": {
            "jobs": len(path),
            "seconds": round(max(chain.values(), default=0.0), 1),
            "with_latency_s": round(max(paid.values(), default=0.0), 1),
        },
        "latency": {"seconds": latency.seconds, "source": latency.source},
        "local_1_node_s": round(makespan(schedule(jobs, prio, cores, ilp, dag.llm_api)), 1),
        "nodes": by_nodes,
    }


def write_prediction(
    run_dir: str | Path, cluster_json: str | Path, reports: str | Path, nodes: Sequence[int] = NODES, cores: int = CORES
) -> tuple[Path, dict]:
    """``python -m pipeline makespan``: predict from the kept run ``run_dir`` and write
    ``<reports>/bench/makespan.json`` with its manifest (the docs block's stamp), naming the run and the
    latency's source."""
    from pipeline.publish.bench_doc import save_bench

    dag, latency = RunDag.of_run(run_dir), latency_from(cluster_json)
    figures = predict(dag, latency, nodes, cores)
    inputs = [
        p
        for p in (Path(run_dir) / "reports" / DAG_REPORT, Path(run_dir) / "run.json", Path(cluster_json))
        if p.exists()
    ]
    slice_ = {
        "run": dag.run["id"],
        "run_commit": dag.run["commit"],
        "nodes": list(nodes),
        "cores_per_node": cores,
        "latency": figures["latency"],
    }
    return save_bench(figures, Path(reports), "makespan", slice_, tuple(inputs)), figures
