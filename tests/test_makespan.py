"""The cluster prediction (pipeline/workflow/makespan.py): a run's DAG recorded at onsuccess and joined with
its benchmarks at its end, replayed on 1-64 nodes from a kept run, and rendered into docs/cluster.md.

The kept run is tests/fixtures/kept_run_makespan/: jobs of the default grid's cold run
r20261206-131405-768e. That run predates the DAG record, so its fixture DAG was rebuilt from its folder's
Snakemake metadata (the jobs whose records still fall inside the run, with their measured wall seconds and
the span they cover; ``source`` in the DAG file says how), and ``cluster.json`` holds the figures of a real
passing tests/cluster/ run (written by tests/cluster/conftest.py, before sbatch-to-running was recorded)."""

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.publish import readme
from pipeline.publish.bench_doc import render_makespan
from pipeline.workflow.dag_record import DAG_LOG, DAG_REPORT, record_dag, write_dag_report
from pipeline.workflow.makespan import Latency, RunDag, latency_from, predict

KEPT = Path(__file__).parent / "fixtures" / "kept_run_makespan"


@dataclass(frozen=True, eq=False)
class StandIn:
    """What record_dag reads of a Snakemake job."""

    name: str
    threads: int
    resources: dict


def write_benchmark(root: Path, key: str, seconds: float) -> None:
    path = root / "benchmarks" / f"{key}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:01\t100\t{seconds}\n")


def test_a_runs_dag_is_recorded_and_joined_with_its_benchmarks_at_its_end(tmp_path):
    index = StandIn("wattbot/index/hier", 2, {})
    answer = StandIn("wattbot/answer/llm/train", 1, {"llm_api": 1})
    report = StandIn("report", 1, {})
    deps = {index: [answer], answer: [report], report: []}
    record_dag(tmp_path, deps, lambda j: j.name, deps.__getitem__, 2)
    logged = json.loads((tmp_path / DAG_LOG).read_text())
    assert logged["jobs"]["wattbot/index/hier"] == {
        "threads": 2,
        "llm_api": 0,
        "dependents": ["wattbot/answer/llm/train"],
        "ran": True,
    }
    write_benchmark(tmp_path, "wattbot/index/hier", 12.5)
    write_benchmark(tmp_path, "wattbot/answer/llm/train", 30.0)
    out = write_dag_report(tmp_path, tmp_path / "reports")
    jobs = json.loads(out.read_text())["jobs"]
    assert (jobs["wattbot/index/hier"]["seconds"], jobs["report"]["seconds"]) == (12.5, None)
    (tmp_path / "run.json").write_text(json.dumps({"id": "r1", "commit": "abc"}))
    dag = RunDag.of_run(tmp_path)
    assert dag.llm_api == 2 and dag.unmeasured == 1 and dag.jobs["wattbot/answer/llm/train"].llm_api == 1
    p = predict(dag, Latency(1.0, "test"), nodes=(1, 2))
    assert p["local_1_node_s"] == 12.5 + 30 + 5  # the report job: no record, no rule mean here, the default 5 s
    assert p["nodes"] == {"1": 50.5, "2": 50.5}  # a chain: one latency per job, on any number of nodes
    assert p["critical_path"] == {"jobs": 3, "seconds": 47.5, "with_latency_s": 50.5}


def test_no_dag_log_no_report(tmp_path):
    assert write_dag_report(tmp_path, tmp_path / "reports") is None
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(SystemExit, match="predates the DAG record"):
        RunDag.of_run(tmp_path)


def test_the_latency_says_where_it_came_from(tmp_path):
    assert latency_from(tmp_path / "absent.json").seconds == 0.0
    assert "absent" in latency_from(tmp_path / "absent.json").source
    measured = json.loads((KEPT / "cluster.json").read_text())
    overhead = latency_from(KEPT / "cluster.json")  # a run from before sbatch-to-running was recorded
    per_job = (measured["cluster_grid_s"] - measured["local_grid_s"]) / measured["submissions"]
    assert overhead.seconds == round(per_job, 2) and "overhead per submission" in overhead.source
    assert measured["date"] in overhead.source
    newer = tmp_path / "cluster.json"
    newer.write_text(json.dumps({**measured, "submit_to_start_s": 1.0, "submit_to_start_jobs": 26}))
    assert latency_from(newer) == Latency(
        1.0,
        f"median sbatch-to-running of 26 jobs, the last passing `tests/cluster/` run ({measured['date']}, `{newer}`)",
    )


@pytest.fixture(scope="module")
def predicted(tmp_path_factory):
    """`python -m pipeline makespan` on the kept default run, with the real cluster test's figures."""
    reports = tmp_path_factory.mktemp("reports")
    main(["makespan", str(KEPT), "--cluster", str(KEPT / "cluster.json"), "--reports", str(reports)])
    return reports, json.loads((reports / "bench" / "makespan.json").read_text())


def test_the_verb_predicts_a_real_kept_run_within_its_bounds(predicted):
    _, p = predicted
    run = json.loads((KEPT / "run.json").read_text())
    dag = json.loads((KEPT / "reports" / DAG_REPORT).read_text())["jobs"]
    assert p["run"]["id"] == run["id"] and p["run"]["commit"] == run["commit"] and p["jobs"] == len(dag)
    assert p["unmeasured_jobs"] <= len(dag) // 10
    chain, work = p["critical_path"], p["core_seconds"]
    # no schedule beats its longest chain or its work over the cores; the fixture records no threads or
    # llm_api shares (taken as 1 and 0), so it is bound by its work and cannot replay the run's span
    assert max(chain["seconds"], work / p["cores_per_node"]) - 0.1 <= p["local_1_node_s"] <= p["run"]["measured_span_s"]
    for n, s in p["nodes"].items():
        assert s >= max(chain["with_latency_s"], work / (int(n) * p["cores_per_node"])) - 0.1
    assert sorted(p["nodes"], key=int) == ["1", "4", "16", "64"]
    assert p["nodes"]["64"] <= p["nodes"]["4"] <= p["nodes"]["1"]
    assert p["latency"]["seconds"] > 0 and "tests/cluster/" in p["latency"]["source"]


def test_the_block_names_the_run_its_commit_and_the_latencys_source(predicted, tmp_path):
    reports, p = predicted
    body = render_makespan(reports)
    assert p["run"]["id"] in body and p["run"]["commit"][:12] in body and p["latency"]["source"] in body
    assert body.count("predicted") == 4 and "measured" in body
    rows = [line.split("|")[1].split(" node")[0].strip() for line in body.splitlines() if "predicted" in line]
    assert rows == ["1", "4", "16", "64"]
    page = "intro\n<!-- BEGIN generated: makespan -->\nold\n<!-- END generated: makespan -->\n"
    filled = readme.fill(page, reports)
    assert "Rendered by `make readme` from `reports/bench/makespan.json`" in filled and body in filled
    assert "makespan" in readme.MEASUREMENTS


def test_a_run_kept_without_its_time_record_says_so(tmp_path):
    shutil.copytree(KEPT, tmp_path / "run")
    (tmp_path / "run" / "reports" / "time-run.telemetry.json").unlink()
    main(["makespan", str(tmp_path / "run"), "--cluster", str(tmp_path / "none.json"), "--reports", str(tmp_path)])
    body = render_makespan(tmp_path)
    assert "not recorded" in body and "0.0 s: no real-cluster measurement" in body


CHECKPOINT_SNAKEFILE = '''
from pathlib import Path
from pipeline.workflow import record_final_dag

def parts(wildcards):
    n = int(Path(checkpoints.sizes.get().output[0]).read_text())
    return [f"part/{i}.txt" for i in range(n)]

rule all:
    input: "merged.txt"

checkpoint sizes:
    output: "sizes.txt"
    benchmark: "benchmarks/sizes.tsv"
    shell: "echo 3 > {output}"

rule part:
    input: "sizes.txt"
    output: "part/{i}.txt"
    benchmark: "benchmarks/part/{i}.tsv"
    threads: 2
    shell: "echo {wildcards.i} > {output}"

rule merge:
    input: parts
    output: "merged.txt"
    benchmark: "benchmarks/merged.tsv"
    shell: "cat {input} > {output}"

onsuccess:
    record_final_dag(workflow)
'''


@pytest.mark.slow
def test_a_real_run_records_the_jobs_its_checkpoint_added(tmp_path):
    """The jobs a checkpoint adds while the run goes (a sharded dataset's shard jobs after doc_sizes) are in
    the record: a real Snakemake run of a checkpoint fanning out to three part jobs, then a resumed run that
    runs only the merge again and still records the whole DAG, the parts marked as not run by it."""
    from dag_runner import environment, run_group

    (tmp_path / "Snakefile").write_text(CHECKPOINT_SNAKEFILE)
    argv = [sys.executable, "-m", "snakemake", "--snakefile", str(tmp_path / "Snakefile"), "--directory", str(tmp_path),
            "--cores", "2", "-q"]  # fmt: skip
    first = run_group(argv, env=environment(), timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    jobs = json.loads((tmp_path / DAG_LOG).read_text())["jobs"]
    assert sorted(jobs) == ["all", "merged", "part/0", "part/1", "part/2", "sizes"]
    assert jobs["sizes"]["dependents"] == ["part/0", "part/1", "part/2"]  # none of which onstart's DAG held
    assert all(jobs[f"part/{i}"]["dependents"] == ["merged"] and jobs[f"part/{i}"]["threads"] == 2 for i in range(3))
    assert all(j["ran"] for j in jobs.values())
    again = run_group([*argv, "--forcerun", "merge"], env=environment(), timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    jobs = json.loads((tmp_path / DAG_LOG).read_text())["jobs"]
    assert sorted(jobs) == ["all", "merged", "part/0", "part/1", "part/2", "sizes"]
    assert {k for k, j in jobs.items() if j["ran"]} == {"all", "merged"}
    report = json.loads(write_dag_report(tmp_path, tmp_path / "reports").read_text())["jobs"]
    assert all(report[f"part/{i}"]["seconds"] is not None for i in range(3))  # the first run's benchmarks
