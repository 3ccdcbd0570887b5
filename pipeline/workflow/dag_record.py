"""A run's DAG, recorded for the cluster prediction (pipeline/workflow/makespan.py).

Why: Snakemake knows the DAG only while it runs, and a kept run (``runs/<id>/``) keeps ``reports/``, not
``benchmarks/`` or ``.snakemake/``. So ``onsuccess`` writes the DAG's jobs, the cores each holds, its
``llm_api`` share, the jobs waiting on it and whether this invocation ran it (:data:`DAG_LOG`), and the run's
end (time-table) joins that with the jobs' measured wall seconds into ``reports/`` (:data:`DAG_REPORT`), which
is kept with the run. At the end, not at ``onstart``: a checkpoint adds jobs while the run goes (a sharded
dataset's shard jobs after its ``doc_sizes``), which the DAG at ``onstart`` does not hold. A resumed run
records the whole DAG too: the jobs an earlier invocation ran keep that run's benchmarks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from pipeline.io import atomic_write_json
from pipeline.report.telemetry.time_table import read_benchmarks

DAG_LOG = Path("logs") / "dag.json"  # written at onsuccess: the DAG's jobs, no lengths yet
DAG_REPORT = "time-dag.telemetry.json"  # in reports/: the DAG with each job's measured wall seconds


def record_dag(
    root: str | Path,
    jobs: Iterable,
    key: Callable,
    dependents: Callable,
    llm_total: int | None,
    ran: Callable[[object], bool] = lambda job: True,
) -> Path:
    """Write :data:`DAG_LOG` for ``jobs`` (``key``: a job's name, ``dependents``: the recorded jobs that wait
    on it, ``ran``: whether this invocation ran it), with each job's ``threads`` and ``llm_api`` share and the
    run's total."""
    record = {
        key(j): {
            "threads": int(j.threads),
            "llm_api": _llm_share(j),
            "dependents": sorted(key(d) for d in dependents(j)),
            "ran": bool(ran(j)),
        }
        for j in jobs
    }
    out = Path(root, DAG_LOG)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, {"llm_api": llm_total, "jobs": dict(sorted(record.items()))})
    return out


def _llm_share(job) -> int:
    """A job's ``llm_api`` resource (0 where it declares none)."""
    return resource_value(getattr(job, "resources", None), "llm_api") or 0


def resource_value(resources, name: str) -> int | None:
    """``name`` of a Snakemake resources mapping as an int (Snakemake 9 wraps values in objects with
    ``.value``), None where absent or not a number."""
    try:
        found = resources.get(name) if resources is not None else None
        value = getattr(found, "value", found)
        return None if value is None else int(value)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def write_dag_report(root: str | Path, reports: str | Path) -> Path | None:
    """The run's end (time-table): :data:`DAG_LOG` joined with ``benchmarks/`` into ``reports/``
    :data:`DAG_REPORT`; a job without a benchmark record gets ``seconds: null``. None without a DAG log."""
    log = Path(root, DAG_LOG)
    if not log.exists():
        return None
    dag = json.loads(log.read_text(encoding="utf-8"))
    wall = {j.job: round(j.wall_s, 2) for j in read_benchmarks(root)}
    jobs = {k: {**v, "seconds": wall.get(k)} for k, v in dag["jobs"].items()}
    out = Path(reports, DAG_REPORT)
    atomic_write_json(out, {"llm_api": dag.get("llm_api"), "jobs": jobs})
    return out
