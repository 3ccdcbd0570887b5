"""profiles/slurm and profiles/kubernetes, run end to end with stand-ins (tests/cluster_standin/) for the
commands they call: profiles/slurm through snakemake-executor-plugin-slurm (sbatch, sacct, srun inside
the job, sinfo, scontrol, squeue, scancel), profiles/kubernetes through the generic cluster executor and
its own submit/status scripts (kubectl). Every job really goes through the executor, and the results
equal a local run."""
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from dag_runner import result_files, snakemake
from pipeline.datasets.paths import REPO

pytestmark = pytest.mark.slow
STANDIN = REPO / "tests" / "cluster_standin"


def run_with_profile(profile: str, tmp_path: Path, config: Path, *targets: str, **env: str):
    work, state = tmp_path / "work", tmp_path / "state"
    env = {"PATH": f"{STANDIN}:{os.environ['PATH']}", "STANDIN_STATE": str(state), **env}
    done = snakemake(work, "--workflow-profile", str(REPO / "profiles" / profile), *targets,
                     configfile=config, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    if env.get("STANDIN_CANCEL_RULE"):
        assert "SLURM status is: 'CANCELLED'" in done.stderr and "Trying to restart job" in done.stderr
    return work, state


def same_as_local(local: Path, remote: Path) -> None:
    a, b = result_files(local), result_files(remote)
    assert b and set(b) <= set(a)
    assert [name for name in b if a[name] != b[name]] == []


def test_slurm_profile_submits_every_job_with_its_resources(tiny_run, tmp_path):
    local, config = tiny_run
    conf = str(tmp_path / "cluster" / "slurm.conf")  # a cluster found through SLURM_CONF: every job's srun needs it
    work, state = run_with_profile("slurm", tmp_path, config, "reports/wattbot/leaderboard.csv",
                                   SLURM_CONF=conf, STANDIN_SLURM_CONF=conf)
    subs = (state / "submissions.log").read_text().splitlines()
    rules = Counter(re.search(r"--comment '?rule_([a-z_]+?)(?:_wildcards_\S*)?'? ", s).group(1) for s in subs)
    assert rules == {"ingest": 1, "tree": 3, "doc_sizes": 1, "index": 2, "retrieve": 4, "answer": 7, "ensemble": 2,
                     "evaluate": 5, "report": 1}  # doc_sizes: the shards checkpoint (one shard here)
    index_job = next(s for s in subs if "rule_index" in s)
    assert " -t 60 " in index_job and re.search(r" --mem \d+", index_job)  # the rule's runtime and memory
    assert "--cpus-per-task=2" in index_job  # its threads
    assert len({re.search(r"--job-name (\S+)", s).group(1) for s in subs}) == 1  # one run id: sacct --name
    assert {p.read_text().strip() for p in state.glob("*.state")} == {"COMPLETED"}
    same_as_local(local, work)


@pytest.mark.parametrize("status", ["squeue", "sacct"])  # the profile's, and the plugin's other (through profiles/slurm/bin/sacct)
def test_slurm_profile_fails_and_retries_a_cancelled_job(tiny_run, tmp_path, status):
    """A job cancelled mid-run (the stand-in's sacct says `CANCELLED by <uid>` as real SLURM's does) ends as a
    failed job with SLURM's state, and its second attempt asks twice the memory and time."""
    local, config = tiny_run
    work, state = run_with_profile("slurm", tmp_path, config, "results/wattbot/index/hier.sqlite",
                                   "--slurm-status-command", status, STANDIN_CANCEL_RULE="index")
    assert {p.read_text().strip() for p in state.glob("*.state")} == {"COMPLETED", f"CANCELLED by {os.getuid()}"}
    subs = [s for s in (state / "submissions.log").read_text().splitlines() if "rule_index" in s]
    assert len(subs) == 2 and " -t 60 " in subs[0] and " -t 120 " in subs[1]
    same_as_local(local, work)


@pytest.mark.parametrize("status", ["squeue", "sacct"])
def test_slurm_profile_fails_and_retries_a_preempted_job(tiny_run, tmp_path, status):
    """A job preempted and not requeued (PreemptMode=CANCEL: it ends PREEMPTED, which the plugin alone waits
    on forever) ends as a failed job and is retried, through profiles/slurm/bin's wrappers."""
    local, config = tiny_run
    work, state = run_with_profile("slurm", tmp_path, config, "results/wattbot/index/hier.sqlite",
                                   "--slurm-status-command", status, STANDIN_CANCEL_RULE="index",
                                   STANDIN_CANCEL_STATE="PREEMPTED")
    assert {p.read_text().strip() for p in state.glob("*.state")} == {"COMPLETED", "PREEMPTED"}
    same_as_local(local, work)


def test_kubernetes_profile_runs_each_job_as_a_pod(tiny_run, tmp_path):
    local, config = tiny_run
    work, state = run_with_profile("kubernetes", tmp_path, config, "results/wattbot/scores/bm25-x.json",
                                   WATTBENCH_K8S_IMAGE="wattbench:test")
    jobs = [json.loads(p.read_text()) for p in sorted(state.glob("wattbench-*.json"))]
    assert Counter(j["metadata"]["labels"]["rule"] for j in jobs) == {
        "ingest": 1, "tree": 3, "index": 1, "retrieve": 1, "answer": 1, "evaluate": 1}
    index_pod = next(j for j in jobs if j["metadata"]["labels"]["rule"] == "index")
    container = index_pod["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "2", "memory": "4000Mi"}
    assert index_pod["spec"]["activeDeadlineSeconds"] == 3600
    assert container["volumeMounts"][0]["mountPath"] == str(work)
    assert {p.read_text().strip() for p in state.glob("*.state")} == {"1,"}
    same_as_local(local, work)
