"""profiles/slurm on a real single-node SLURM 22.05 cluster (slurmctld, slurmd, slurmdbd with MariaDB; brought
up by tests/cluster/slurm_up.sh, stopped by slurm_down.sh). `make test` runs this file on its own, after the
parallel suite: the cluster's two cores are the machine's. Skipped only without root or apt (said why); as root
with apt, a cluster that does not come up fails.

One run of the tiny grid through the profile, with one of its running jobs cancelled by `scancel` mid-run:
the run must see the cancel within 60 s, with SLURM's state in the message, resubmit the job (with twice the
memory and time: its second attempt), finish, and leave every rule's resources in sacct and results
byte-identical to the local run. Then a run SIGKILLed mid-way and the documented resume (cancel-stale,
--unlock, the same command): the resume reruns only what was unfinished, and the results are identical.
Then the tiny grid cut into shards and query batches (#45 item 6): each shard and batch a Slurm job of its own,
every result identical to the local, unsharded run.
Last, the cluster was the test's own (its folder, ports and munge socket) and, once stopped, left the system's
SLURM, munge and MariaDB paths as they were (tests/cluster/machine_paths.py).
What they measure goes into the session's ``measured`` figures (tests/cluster/conftest.py: docs/cluster.md)."""
import os
import re
import shutil
import signal
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from dag_runner import TINY_WALL, command, environment, result_files
from machine_paths import differences, snapshot
from pipeline.datasets.paths import REPO
from pipeline.paths import side_files

pytestmark = [pytest.mark.slow, pytest.mark.cluster]
HERE = Path(__file__).parent
PROFILE = REPO / "profiles" / "slurm"
SLURM_DIR = "/run/wattbench-test-cluster"  # the test cluster's folder: configs, state, logs, pids, sockets, its database
RUN_LIMIT = 420  # s: the hard limit on each Snakemake run below (the tiny grid takes about 2-3 min here)
CANCEL_LIMIT = 60  # s: the profile's settings must make the run see a scancel within this
TARGET_JOBS = 8  # jobs to results/wattbot/scores/bm25-x.json in the tiny grid (the killed run's target)
# What each rule declares (pipeline/rules/*.smk): memory in MB and time in minutes, first attempt.
DECLARED = {"ingest": (500, 5), "tree": (1000, 10), "doc_sizes": (1000, 10), "index": (4000, 60),
            "retrieve": (2000, 10), "answer": (2000, 60), "ensemble": (500, 5), "evaluate": (500, 5),
            "report": (1000, 5), "suite_export": (4000, 20), "index_part": (4000, 60), "retrieve_batch": (2000, 10)}
# The rules of the tiny grid's jobs to reports/wattbot/leaderboard.csv (the scancel test's target).
LEADERBOARD_RULES = {"ingest", "tree", "doc_sizes", "index", "retrieve", "answer", "ensemble", "evaluate", "report"}
# The sharded run (#45 item 6): tests/tiny.yaml cut as tests/test_end_to_end.py cuts it (each WattBot document a
# shard, HotpotQA's paragraphs in three, its 10 queries in batches of at most four), to WattBot's dense index and
# HotpotQA's two retrievals: each shard's index part and each batch's retrieval a Slurm job of its own.
SHARDS = "shards: {max_chars: 20000, max_queries: 4}\n"
SHARDED_TARGETS = ("results/wattbot/index/hier.sqlite", "results/hotpotqa/retrieval/hier-dense/queries.jsonl",
                   "results/hotpotqa/retrieval/bm25/queries.jsonl")
SHARD_JOBS = {"index_part": 3 + 3, "retrieve_batch": 3 * 2}  # 3 shards of each hier index; 3 batches x 2 variants
# A job's rule from the comment the plugin gives it: rule_<name>_wildcards_<...>, or rule_<name> without wildcards.
RULE = re.compile(r"rule_([a-z_]+?)(?:_wildcards|$)")


@dataclass
class Cluster:
    """The running test cluster: its slurm.conf (every client command and Snakemake run gets it as SLURM_CONF,
    and through sbatch's environment every job on the node) and the system paths as they were before it."""

    conf: str
    before: dict
    up: bool = True

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": self.conf}

    def run(self, *cmd, check: bool = True) -> str:
        return subprocess.run(cmd, capture_output=True, text=True, check=check, env=self.env).stdout

    def down(self) -> None:
        if self.up:
            script("slurm_down.sh", timeout=300)
            self.up = False


def script(name: str, timeout: int) -> subprocess.CompletedProcess:
    """One of tests/cluster/'s scripts, on the test cluster's folder."""
    env = {**os.environ, "WATTBENCH_SLURM_DIR": SLURM_DIR}
    return subprocess.run([HERE / name], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def cluster(measured):
    if os.geteuid() != 0:
        pytest.skip("the SLURM cluster test needs root (it installs Debian's slurm packages and starts daemons)")
    if not shutil.which("apt-get") and not shutil.which("slurmctld"):
        pytest.skip("the SLURM cluster test needs apt-get (Debian's slurmctld, slurmd, slurmdbd, munge, mariadb)")
    # slurm_install.sh (slurm_up.sh's first step) installs the packages only where one of these is missing
    measured["packages_preinstalled"] = all(shutil.which(c) for c in ("slurmctld", "slurmdbd", "mysqld_safe", "munged"))
    began = time.monotonic()
    installed = script("slurm_install.sh", timeout=600)
    assert installed.returncode == 0, f"the packages did not install:\n{installed.stderr[-3000:]}"
    before = snapshot()  # after apt: what the packages put there is theirs
    up = script("slurm_up.sh", timeout=600)
    conf = re.search(r"^SLURM_CONF=(.+)$", up.stdout, re.M)
    running = Cluster(conf.group(1) if conf else "", before)
    try:
        assert up.returncode == 0 and conf, f"the cluster did not come up:\n{up.stderr[-3000:]}"
        measured["cluster_start_s"] = round(time.monotonic() - began, 1)
        yield running
    finally:
        running.down()


def start(cluster: Cluster, work: Path, config: Path, *args: str, log: Path) -> subprocess.Popen:
    """Snakemake through the profile, as the docs say, its output to ``log``; its own process group."""
    cmd = command(work, "--workflow-profile", str(PROFILE), *args, configfile=config)
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env=environment({"SLURM_CONF": cluster.conf}), start_new_session=True)


def finish(proc: subprocess.Popen, log: Path, expect_rc: int = 0) -> str:
    """Its output, once it has ended with ``expect_rc`` within RUN_LIMIT (else killed, and the test fails)."""
    try:
        proc.wait(timeout=RUN_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the run did not finish within {RUN_LIMIT} s:\n{log.read_text()[-3000:]}")
    out = log.read_text()
    assert proc.returncode == expect_rc, out[-3000:]
    return out


def queue(cluster: Cluster, *fields: str) -> list[list[str]]:
    out = cluster.run("squeue", "-h", "-o", "|".join(fields), check=False)
    return [line.split("|") for line in out.splitlines()]


def wait_for(what: str, seconds: float, probe):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if found := probe():
            return found
        time.sleep(0.5)
    pytest.fail(f"{what}: not within {seconds} s")


def running_in(work: Path) -> list[int]:
    """Pids of the processes working in ``work`` (a job's cwd is its run's: the plugin submits with -D)."""
    pids, work = [], work.resolve()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and Path(os.readlink(proc / "cwd")).is_relative_to(work):
                pids.append(int(proc.name))
        except OSError:  # gone meanwhile, or a kernel thread
            continue
    return pids


def accounting(cluster: Cluster, since: str) -> list[dict]:
    out = cluster.run("sacct", "-X", "-n", "-P", "-S", since, "-o",
                      "JobID,Comment,AllocCPUS,ReqMem,Timelimit,State,Submit,Start,WorkDir")
    keys = ("id", "comment", "cpus", "mem", "time", "state", "submit", "start", "workdir")
    return [dict(zip(keys, line.split("|"))) for line in out.splitlines() if line]


def submit_to_start(jobs: list[dict]) -> list[float]:
    """Each job's seconds from sbatch to running (sacct's Submit and Start, whole seconds): the per-job
    submission latency the cluster prediction charges (pipeline/workflow/makespan.py)."""
    stamp = "%Y-%m-%dT%H:%M:%S"
    return [time.mktime(time.strptime(j["start"], stamp)) - time.mktime(time.strptime(j["submit"], stamp))
            for j in jobs if j["start"][:1].isdigit()]


def rule_of(job: dict) -> str:
    return RULE.match(job["comment"]).group(1)


def minutes(limit: str) -> int:
    h, m, s = map(int, limit.split("-")[-1].split(":"))
    return h * 60 + m


def test_tiny_grid_on_slurm_survives_a_scancel(cluster, tiny_run, tmp_path, measured, request):
    local, config = tiny_run
    work, log = tmp_path / "work", tmp_path / "snakemake.log"
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    began = time.monotonic()
    proc = start(cluster, work, config, "reports/wattbot/leaderboard.csv", log=log)
    # an index job (the longest rule here), once it has run a few seconds
    victim = wait_for("a running index job", 240, lambda: next(
        (j for j, c, t, s in queue(cluster, "%i", "%k", "%T", "%M") if c.startswith("rule_index") and t == "RUNNING"
         and s.count(":") == 1 and int(s.split(":")[1]) >= 3), None))
    cluster.run("scancel", victim)
    cancelled = time.monotonic()
    wait_for("the run marking the cancelled job failed", CANCEL_LIMIT,
             lambda: f"SLURM-job '{victim}' failed, SLURM status is: 'CANCELLED'" in log.read_text())
    seen = time.monotonic() - cancelled
    assert seen <= CANCEL_LIMIT
    out = finish(proc, log)
    wall = time.monotonic() - began
    assert "Trying to restart job" in out

    jobs = [j for j in accounting(cluster, since) if j["comment"].startswith("rule_")]
    by_id = {j["id"]: j for j in jobs}
    assert by_id[victim]["state"].startswith("CANCELLED")
    index_jobs = [j for j in jobs if j["comment"].startswith("rule_index")]
    assert len(index_jobs) == 3  # two indexes, one of them twice
    for j in jobs:
        attempt = 2 if j["comment"] == by_id[victim]["comment"] and j["id"] != victim else 1
        assert_declared(j, attempt)
        if j["id"] != victim:
            assert j["state"] == "COMPLETED", j
    assert {j["cpus"] for j in index_jobs} == {"2"}  # the rule's threads
    assert {rule_of(j) for j in jobs} == LEADERBOARD_RULES
    same_as_local(local, work)
    latency = submit_to_start(jobs)
    assert len(latency) == len(jobs) and min(latency) >= 0, latency
    measured.update(submit_to_start_s=round(statistics.median(latency), 1), submit_to_start_max_s=max(latency),
                    submit_to_start_jobs=len(latency))
    measured.update(local_grid_s=round(request.config.stash[TINY_WALL], 1), cluster_grid_s=round(wall, 1),
                    submissions=len(jobs), jobs=len({j["comment"] for j in jobs}), cancel_seen_s=round(seen, 1),
                    cancel_limit_s=CANCEL_LIMIT)


def test_a_killed_run_resumes_as_documented(cluster, tiny_run, tmp_path, measured):
    local, config = tiny_run
    work, log = tmp_path / "work", tmp_path / "killed.log"
    target = "results/wattbot/scores/bm25-x.json"
    proc = start(cluster, work, config, target, log=log)
    wait_for("a finished job and a running one", 240, lambda: re.search(r"^[1-9]\d* of \d+ steps", log.read_text(), re.M)
             and any(t == "RUNNING" for (t,) in queue(cluster, "%T")))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    stale = cluster.run(PROFILE / "cancel-stale", work)
    assert "cancelling" in stale or "no queued" in stale
    wait_for("the killed run's jobs gone", 30, lambda: not queue(cluster, "%i"))
    # and their processes: the test cluster tracks a job's processes by parentage (proctrack/linuxproc, no
    # cgroups), so one reparented by a dying step can outlive the job in squeue and still write beside its output
    wait_for("the killed run's processes gone", 60, lambda: not running_in(work))
    before = {p: p.stat().st_mtime_ns for p in (work / "results").rglob("*") if p.is_file()}

    locked = finish(start(cluster, work, config, target, log=tmp_path / "locked.log"), tmp_path / "locked.log", expect_rc=1)
    assert "--unlock" in locked  # Snakemake says how; the hint and docs/cluster.md say the same sequence
    finish(start(cluster, work, config, "--unlock", log=tmp_path / "unlock.log"), tmp_path / "unlock.log")
    out = finish(start(cluster, work, config, target, log=tmp_path / "resume.log"), tmp_path / "resume.log")
    jobs = re.findall(r"^\s+output: (.+)$", out, re.M)
    assert 0 < len(jobs) < TARGET_JOBS  # not the whole target's jobs again
    # What the resume may rewrite: the outputs of the jobs it ran and their side files (pipeline/paths.py), which
    # job the kill caught whatever: a job that finished on the node after the kill is rerun with its manifest.
    rerun = {o.strip() for line in jobs for o in line.split(",")}
    allowed = rerun | {side for o in rerun for side in side_files(o)}
    touched = {str(p.relative_to(work)) for p, t in before.items() if p.exists() and p.stat().st_mtime_ns != t}
    assert touched <= allowed, touched - allowed
    same_as_local(local, work)
    measured.update(resumed_jobs=len(jobs), target_jobs=TARGET_JOBS)


def test_a_sharded_grid_runs_each_shard_as_a_slurm_job(cluster, tiny_run, tmp_path, measured):
    """#45 item 6: the tiny grid cut into shards and query batches, through the profile as shipped: every
    shard's index part and every batch's retrieval ran as a Slurm job of its own, with its rule's resources,
    and every file the local (unsharded) run wrote is byte-identical; the sharded run adds only its parts."""
    local, config = tiny_run
    cut = tmp_path / "sharded.yaml"
    cut.write_text(config.read_text() + SHARDS)
    work, log = tmp_path / "work", tmp_path / "sharded.log"
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    began = time.monotonic()
    finish(start(cluster, work, cut, *SHARDED_TARGETS, log=log), log)
    wall = time.monotonic() - began

    jobs = [j for j in accounting(cluster, since) if j["comment"].startswith("rule_") and ours(j, work)]
    for j in jobs:
        assert j["state"] == "COMPLETED", j
        assert_declared(j, attempt=1)
    shard_jobs = [j for j in jobs if rule_of(j) in SHARD_JOBS]
    assert {r: sum(rule_of(j) == r for j in jobs) for r in SHARD_JOBS} == SHARD_JOBS
    assert len({j["id"] for j in shard_jobs}) == len({j["comment"] for j in shard_jobs}) == len(shard_jobs)
    parts = same_as_local(local, work, extra=("/index/parts/hier/", "/retrieval/parts/"))
    assert len(parts) == sum(SHARD_JOBS.values()), parts  # one part file per shard job
    measured.update(sharded_grid_s=round(wall, 1), sharded_submissions=len(jobs), shard_jobs=len(shard_jobs))


def ours(job: dict, work: Path) -> bool:
    """A job submitted by the run in ``work`` (the plugin submits with -D: sacct's WorkDir)."""
    return Path(job["workdir"]).resolve() == work.resolve()


def assert_declared(job: dict, attempt: int) -> None:
    """The job's memory and time in sacct are its rule's declared ones (pipeline/rules/*.smk), times its attempt."""
    mem, limit = DECLARED[rule_of(job)]
    assert (job["mem"], minutes(job["time"])) == (f"{mem * attempt}M", limit * attempt), job


def same_as_local(local: Path, remote: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """Every result of ``remote`` is the local run's, byte for byte; the files only ``remote`` has (returned)
    may be only the shard parts whose paths hold one of ``extra``."""
    a, b = result_files(local), result_files(remote)
    only_remote = sorted(set(b) - set(a))
    assert b and all(any(e in name for e in extra) for name in only_remote), only_remote
    assert [name for name in b if name in a and a[name] != b[name]] == []
    return only_remote


def test_the_cluster_was_its_own_and_the_machine_is_as_it_was(cluster):
    """Last in this file: the daemons ran from the test cluster's folder, on its own ports and munge socket;
    with them stopped, the system's SLURM, munge and MariaDB paths are as they were before it
    (tests/cluster/machine_paths.py), and the folder is gone."""
    config = cluster.run("scontrol", "show", "config")
    assert re.search(rf"^SLURM_CONF\s+= {re.escape(cluster.conf)}$", config, re.M)
    assert re.search(rf"^AuthInfo\s+= socket={re.escape(SLURM_DIR)}/", config, re.M)
    assert re.search(rf"^StateSaveLocation\s+= {re.escape(SLURM_DIR)}/", config, re.M)
    assert cluster.conf.startswith(SLURM_DIR + "/")
    cluster.down()
    assert differences(cluster.before, snapshot()) == []
    assert not Path(SLURM_DIR).exists()
