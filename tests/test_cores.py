"""Jobs use the threads Snakemake granted them: encoders, the attention pass and the llama.cpp
servers follow the job's grant (OMP_NUM_THREADS, set by Snakemake for every shell job), and the
heavy rules declare the threads they keep busy, so `--cores 8` on a 2-core machine oversubscribes nothing."""
import re
import subprocess
import sys

import pytest

from pipeline.registry.answer_backends import variant_spec
from pipeline.verbs.answer import answer_job_llm
from pipeline.config import load_config
from pipeline.cores import job_threads, machine_cores
from pipeline.llm_models import LLMSpec
from pipeline.datasets.paths import REPO, data_root
from pipeline.workflow import answer_threads, default_llm_api, encoder_threads, llm_share, sprout_threads

GEMMA = "local/gemma3-270m"


@pytest.fixture()
def cfg():
    return load_config(REPO / "tests" / "grid.yaml")  # the tests' own grid, not config.yaml


def test_job_threads_at_most_the_grant(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert job_threads(2) == 2  # outside Snakemake: the config holds
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert job_threads(2) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    assert job_threads(2) == 2  # a larger grant never adds threads the config did not ask for
    monkeypatch.setenv("OMP_NUM_THREADS", "bogus")
    assert job_threads(3) == 3


def test_a_changed_thread_count_reruns_nothing(cfg):
    """``embedding.threads`` and ``sprout.threads`` set the rules' ``threads:`` (how a job runs), not the
    hashed params (what it computes): index, retrieval, answering and attention params stay the same."""
    import copy

    from pipeline.workflow import answering_params, index_params, retrieval_params, sprout_attention_params

    more = copy.deepcopy(cfg)
    more["embedding"]["threads"], more["sprout"]["threads"] = 7, 5
    assert encoder_threads(more) == 7 and sprout_threads(more) == 5
    for name in cfg["indexes"]:
        assert index_params(more, name) == index_params(cfg, name)
    for name in cfg["retrieval"]:
        assert retrieval_params(more, name) == retrieval_params(cfg, name)
    for name in cfg["answering"]:
        assert answering_params(more, name) == answering_params(cfg, name)
    assert sprout_attention_params(more) == sprout_attention_params(cfg)
    assert '"threads"' not in index_params(cfg, "hier") + sprout_attention_params(cfg)


def test_rule_threads_come_from_the_config(cfg):
    assert answer_threads(cfg, "llm-cf") == 2 == answer_threads(cfg, "llm-cf-r1")  # 2 servers x 1 thread
    assert answer_threads(cfg, "convex-extractive") == 1
    assert encoder_threads(cfg) == cfg["embedding"]["threads"] == 2
    assert sprout_threads(cfg) == 2
    llm = LLMSpec.from_dict({**cfg["llm"], "local": {"gemma3-270m": {**cfg["llm"]["local"]["gemma3-270m"], "n_threads": 3}}})
    threads = lambda name: (m := llm.resolve(name)).kind.threads(m)  # noqa: E731
    assert threads(GEMMA) == 6
    assert threads("openai/gpt-4o-mini") == 1
    # llm-cf and llm-cf-r1 each take the whole llm_api budget: never side by side, so r1 never pays
    # concurrently for the first attempts it shares with llm-cf (whichever runs second hits the cache)
    assert llm_share(cfg, "llm-cf", None) == llm_share(cfg, "llm-cf-r1", None) == default_llm_api(cfg)
    assert machine_cores() >= 1


@pytest.mark.parametrize(
    "config, servers", [("config.yaml", 1), ("config.mpnet.yaml", 1), ("config.claims.yaml", 2), ("config.full.yaml", 2)]
)
def test_shipped_grids_hold_the_cores_their_local_servers_use(config, servers):
    """The local model's ``concurrency`` (config.yaml's comment says why the default grid runs 1 server and
    the LLM-bound grids 2) is each LLM answer's threads and llm_api share, and the run's default total:
    one LLM answer at a time, on as many cores as it has servers."""
    cfg = load_config(REPO / config, {"data_root": str(data_root())})
    assert cfg["llm"]["per_model"][cfg["llm"]["model"]]["concurrency"] == servers   # the model its LLM answers call
    for variant in ("llm-cf", "llm-cf-r1"):
        assert answer_threads(cfg, variant) == servers == llm_share(cfg, variant, None) == default_llm_api(cfg)


def test_local_servers_fit_the_cores(cfg):
    llm = LLMSpec.from_dict(cfg["llm"])
    two = llm.for_job(GEMMA, None, 2).resolve(GEMMA)
    assert two.concurrency == 2 and two.server.n_threads == 1
    one = llm.for_job(GEMMA, None, 1).resolve(GEMMA)
    assert one.concurrency == 1 and one.server.n_threads == 1
    assert one.max_failure_rate == cfg["llm"]["per_model"][GEMMA]["max_failure_rate"]
    wide = LLMSpec.from_dict({**cfg["llm"], "local": {"gemma3-270m": {**cfg["llm"]["local"]["gemma3-270m"], "n_threads": 2}}})
    fitted = wide.for_job(GEMMA, None, 2).resolve(GEMMA)  # one 2-thread server rather than two starved ones
    assert fitted.concurrency == 1 and fitted.server.n_threads == 2
    assert llm.for_job("openai/gpt-4o-mini", None, 1).resolve("openai/gpt-4o-mini") == llm.resolve("openai/gpt-4o-mini")
    assert llm.resolve(GEMMA).concurrency == 2  # the spec itself is not changed


def test_answer_job_follows_its_grant(cfg, monkeypatch):
    variant = variant_spec("llm-cf", cfg["answering"]["llm-cf"])
    llm = {k: v for k, v in cfg["llm"].items() if k != "per_model"}
    execution = {"mode": "live", "per_model": cfg["llm"]["per_model"]}
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    job = answer_job_llm(llm, execution, 2, variant).resolve(GEMMA)
    assert job.concurrency == 1 and job.server.n_threads == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    job = answer_job_llm(llm, execution, 2, variant).resolve(GEMMA)
    assert job.concurrency == 2 and job.server.n_threads == 1


def test_encoder_threads_follow_the_grant(monkeypatch):
    import pipeline.embed.onnx_minilm as onnx

    seen = {}

    class Recorder:
        def __init__(self, model_file=None, batch_size=64, max_tokens=256, threads=2, lazy=False):
            seen["threads"] = threads

    monkeypatch.setattr(onnx, "OnnxMiniLM", Recorder)
    from pipeline.embed.factory import make_encoder

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    make_encoder({"backend": "onnx-int8", "threads": 2})
    assert seen["threads"] == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    make_encoder({"backend": "onnx-int8", "threads": 2})
    assert seen["threads"] == 2


def test_attention_threads_follow_the_grant(monkeypatch):
    import pipeline.sprout.stage as stage
    from pipeline.specs import AttentionSpec

    seen = {}
    monkeypatch.setattr(stage, "AttentionEncoder", lambda threads, kernel: seen.setdefault("threads", threads))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    stage.attention_encoder(AttentionSpec.from_dict({"threads": 2}))
    assert seen["threads"] == 1


def _planned(cores: int) -> dict[str, set[tuple[int, int | None]]]:
    """rule -> the (threads, cpus resource) of its planned jobs, from a dry run of the default grid."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(REPO),
           "--config", f"data_root={data_root()}", "--cores", str(cores), "-n", "--forceall"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    planned: dict[str, set[tuple[int, int | None]]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out.stdout + out.stderr):
        if m := re.match(r"(?:local)?rule (\w+):", block):
            t = re.search(r"^\s+threads: (\d+)", block, re.M)
            c = re.search(r"^\s+resources: .*\bcpus=(\d+)", block, re.M)
            planned.setdefault(m.group(1), set()).add((int(t.group(1)) if t else 1, int(c.group(1)) if c else None))
    return planned


@pytest.mark.slow
def test_planned_jobs_hold_the_cores_they_use():
    """`snakemake --cores 8` plans the LLM, embedding and attention jobs with the threads they keep
    busy (the local LLM's 1 server; 1 per embedding and attention job, config.yaml's default), each
    taking as many units of the `cpus` resource (this machine's cores, registered by the Snakefile), so
    on a 2-core machine two 1-thread jobs run at a time; `--cores 1` scales them to 1, and the job then
    fits its encoder/servers to that."""
    eight = _planned(8)
    assert eight["answer"] == {(1, 1)}  # extractive 1, local LLM 1 (servers x n_threads: config.yaml's concurrency 1)
    for rule in ("index", "sprout_attention", "sprout_train_pairs"):
        assert eight[rule] == {(1, 1)}, rule
    assert eight["retrieve"] == {(1, 1)}
    one = _planned(1)
    assert {t for jobs in one.values() for t, _ in jobs} == {1}


RATE_LIMIT_PROBE = """
import json, os
from pipeline.workflow import local_scheduler_without_rate_limit

SEEN = {"timers": 0}

rule all:
    input: expand("out/{i}.txt", i=range(int(os.environ["NJOBS"])))

rule job:
    output: "out/{i}.txt"
    shell: "sleep 0.2; touch {output}"

onstart:
    s = workflow.scheduler
    SEEN["limiter"] = f"{type(s.job_rate_limiter).__module__}.{type(s.job_rate_limiter).__name__}"
    SEEN["patched"] = local_scheduler_without_rate_limit(workflow) if os.environ.get("PATCH") else None
    SEEN["timer_hook"] = hasattr(type(s), "_schedule_reevalutation")
    start_timer = s._schedule_reevalutation
    def counted(delay):
        SEEN["timers"] += 1
        start_timer(delay)
    s._schedule_reevalutation = counted

onsuccess:
    with open("seen.json", "w") as fh:
        json.dump(SEEN, fh)
"""


def _probe_scheduler(work, patch: bool, *executor: str, jobs: int = 6) -> dict:
    """Run ``jobs`` 0.2 s jobs through the real Snakemake (locally on one core, every scheduling pass leaves
    jobs waiting; or with ``executor``'s arguments) and return what its scheduler held and how many
    re-scheduling timers it started."""
    import json
    import os

    work.mkdir()
    (work / "Snakefile").write_text(RATE_LIMIT_PROBE)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATCH": "1" if patch else "", "NJOBS": str(jobs)}
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(work / "Snakefile"), "--directory", str(work),
           *(executor or ("--cores", "1")), "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((work / "seen.json").read_text())


@pytest.mark.slow
def test_local_runs_have_no_submission_rate_limit(tmp_path):
    """The Snakefile's onstart drops Snakemake's job-rate limiter on a local run: with it, every scheduling
    pass that leaves jobs waiting starts a timer for another pass (on the default grid the timer chains took
    a quarter of a core), and Snakemake 9 has no setting that stops them (docs/architecture.md, Scheduling).
    Run against Snakemake's real scheduler: a renamed attribute, a limiter no longer set on local runs, or a
    scheduler that cannot run without one fails here."""
    stock = _probe_scheduler(tmp_path / "stock", patch=False)
    assert stock["limiter"] == "snakemake.scheduling.job_scheduler.JobRateLimiter" and stock["timer_hook"]
    assert stock["timers"] > 0  # the probe sees the timers the limiter starts
    patched = _probe_scheduler(tmp_path / "patched", patch=True)
    assert patched["patched"] is True and patched["timers"] == 0  # and all six jobs ran (onsuccess wrote this)
    snakefile = (REPO / "Snakefile").read_text()
    assert "onstart:\n    wf.local_scheduler_without_rate_limit(workflow)" in snakefile


@pytest.mark.slow
def test_cluster_runs_keep_snakemakes_rate_limit(tmp_path):
    """A cluster executor (the generic one profiles/kubernetes uses; here its submit command is bash) keeps
    Snakemake's job-rate limiter: the patch declines and the scheduler still starts its timers."""
    pytest.importorskip("snakemake_executor_plugin_cluster_generic")
    cluster = ("--executor", "cluster-generic", "--cluster-generic-submit-cmd", "bash", "--jobs", "1")
    seen = _probe_scheduler(tmp_path / "cluster", True, *cluster, jobs=1)
    assert seen["patched"] is False and seen["limiter"].endswith(".JobRateLimiter") and seen["timers"] > 0


def test_an_llm_planner_retrieval_takes_its_models_share_and_threads(cfg):
    """A retrieval whose query planner is an LLM calls its model as an answering job of that model does:
    its ``llm_api`` share is the model's concurrency (capped by the run's total), its threads a local
    model's servers x n_threads, and it runs under the ``retrieve_llm`` rule (the others keep ``retrieve``)."""
    from pipeline.workflow import planner_share, planner_threads, retrieval_variants

    hosted = "openai/gpt-4o-mini"
    base = {k: v for k, v in cfg["retrieval"]["hier-convex-q2"].items() if k != "planner"}
    cfg["retrieval"]["local-q"] = {**base, "planner": {"kind": "llm", "n": 3, "model": GEMMA}}
    cfg["retrieval"]["hosted-q"] = {**base, "planner": {"kind": "llm", "n": 3, "model": hosted}}
    cfg["llm"]["per_model"][hosted] = {"concurrency": 16}
    assert planner_share(cfg, "local-q", None) == 2 == planner_threads(cfg, "local-q")  # 2 servers x 1 thread
    assert planner_share(cfg, "hosted-q", None) == 16 and planner_share(cfg, "hosted-q", 4) == 4
    assert planner_threads(cfg, "hosted-q") == 1
    assert planner_share(cfg, "hier-convex-q2", None) == 0 and planner_threads(cfg, "hier-convex-q2") == 1
    assert default_llm_api(cfg) == 16  # one planner job at its full concurrency by default
    assert retrieval_variants(cfg, llm_planner=True) == "hosted\\-q|local\\-q"
    assert "hier-convex" not in retrieval_variants(cfg, llm_planner=True)
    assert re.fullmatch(retrieval_variants(cfg, llm_planner=False), "hier-convex-q2")
    assert not re.fullmatch(retrieval_variants(cfg, llm_planner=False), "local-q")


def test_no_rule_carries_a_fixed_priority():
    """Priorities come from the critical path at run time (pipeline/workflow/critical_path.py), not from
    per-rule constants, which ordered a wide fan of short jobs before the longest chain."""
    assert [p.name for p in (REPO / "pipeline" / "rules").glob("*.smk") if "priority:" in p.read_text()] == []
