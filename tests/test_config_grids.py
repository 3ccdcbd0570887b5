"""Every shipped config, dry-run as a user runs it: from a copy of the repository root, config.yaml and
all (the tiny-DAG tests run in a scratch folder without config.yaml, so they cannot see config.yaml
merged under a --configfile). The LLM jobs Snakemake plans, (variant, split, model) read from the jobs'
own --params, must be the rows of the estimate the same file gives (pipeline/estimate.py), and the
KohakuRAG preset must plan none of the default grid's jobs."""
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dag_runner import environment

from pipeline.workflow import llm_work
from pipeline.registry.answer_backends import calls_llm
from pipeline.config import load_config
from pipeline.datasets.paths import REPO, data_root
from pipeline.estimate import estimate

SHIPPED = ("config.yaml", "config.mpnet.yaml", "config.suite-full.yaml", "config.full.yaml", "config.kohakurag.yaml")
pytestmark = [pytest.mark.slow, pytest.mark.data]


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory) -> Path:
    """The repository's files (tracked and new, not ignored: no results, no .snakemake) in a scratch folder."""
    root = tmp_path_factory.mktemp("repo")
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    assert (root / "config.yaml").is_file() and (root / "Snakefile").is_file()
    return root


def dry_run(root: Path, config: str) -> str:
    """``snakemake -n -p --configfile <config>`` in ``root`` (a dummy OPENAI_API_KEY for the preset's
    hosted models: preflight asks for a key)."""
    cmd = [sys.executable, "-m", "snakemake", "-n", "-p", "--configfile", config,
           "--config", f"data_root={data_root()}", "--cores", "2"]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=1500,
                          env=environment({"OPENAI_API_KEY": "sk-dummy-for-dry-run"}))
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def planned_llm_jobs(out: str) -> set[tuple[str, str, str]]:
    """(what, split, model) of every planned job that calls an LLM, from its printed shell command:
    answer jobs of an LLM backend, retrieve jobs with an LLM query planner (n >= 2: n = 1 asks nothing)."""
    jobs = set()
    for line in out.splitlines():
        m = re.search(r"python -m pipeline (answer|retrieve) ", line)   # "Shell command: /path/to/python -m ..."
        if not m:
            continue
        argv = shlex.split(line[m.start():])
        params = json.loads(argv[argv.index("--params") + 1])
        path = Path(argv[argv.index("--out") + 1])
        dataset, split = path.parts[1], path.stem   # results/<dataset>/.../<split>.jsonl
        where = split if dataset == "wattbot" else f"{dataset}/{split}"
        llm_model = (params.get("llm") or {}).get("model")
        if m.group(1) == "answer" and calls_llm(params["answering"]["backend"]):
            jobs.add((f"answer {params['name']}", where, params["answering"].get("model") or llm_model))
        planner = params["retrieval"].get("planner") or {} if m.group(1) == "retrieve" else {}
        if planner.get("kind") == "llm" and planner.get("n", 1) >= 2:
            jobs.add((f"planner {params['name']}", where, planner.get("model") or llm_model))
    return jobs


def planned_outputs(out: str) -> list[str]:
    return [p.strip() for line in out.splitlines() if line.strip().startswith("output:")
            for p in line.split(":", 1)[1].split(",")]


@pytest.fixture(scope="module")
def plans(repo_copy) -> dict[str, str]:
    return {}


@pytest.mark.parametrize("config", SHIPPED)
def test_the_dry_run_plans_the_llm_jobs_the_estimate_counts(repo_copy, plans, config):
    plans[config] = out = dry_run(repo_copy, config)
    rows = {(x.what, x.split, x.model) for x in
            estimate(llm_work(load_config(repo_copy / config, {"data_root": str(data_root())}))).lines}
    assert planned_llm_jobs(out) == rows
    if config == "config.kohakurag.yaml":
        assert rows, "the preset's LLM jobs"


def test_the_full_suite_plans_cross_fitted_heads_and_no_llm(repo_copy, plans):
    """config.suite-full.yaml (#45): no LLM job (no local model built either), and on the datasets the heads
    train on, K fold trainings, K trained-head indexes per trained-head index and one cross-fitted retrieval
    per trained-head variant; the trained-head index of the whole dataset is not built there."""
    from dag_runner import planned_jobs

    from pipeline import workflow as wf

    out = plans.get("config.suite-full.yaml") or dry_run(repo_copy, "config.suite-full.yaml")
    cfg = load_config(repo_copy / "config.suite-full.yaml", {"data_root": str(data_root())})
    k, datasets, variants = wf.crossfit_folds(cfg), wf.crossfit_datasets(cfg), wf.crossfit_variants(cfg)
    assert k and datasets and variants and not planned_llm_jobs(out)
    jobs = planned_jobs(out)
    assert not {"local_model", "llm_runtime", "retrieve_llm"} & set(jobs)
    assert jobs["sprout_train_fold"] == k * len(datasets) == jobs["sprout_fold_index"]  # one trained-head index
    assert jobs["retrieve_crossfit"] == len(datasets) * len(variants)
    outputs = planned_outputs(out)
    for d in datasets:
        assert f"results/{d}/index/sprout.sqlite" not in outputs
        assert {f"results/sprout/crossfit/{d}/fold{f}.json" for f in range(k)} <= set(outputs)


def test_the_kohakurag_preset_plans_no_job_of_the_default_grid(repo_copy, plans):
    """No planned output of the preset names a variant, dataset or stage only the default grid has
    (the bug: 111 jobs, every default variant and the suite planned again under the preset)."""
    out = plans.get("config.kohakurag.yaml") or dry_run(repo_copy, "config.kohakurag.yaml")
    preset = load_config(repo_copy / "config.kohakurag.yaml", {"data_root": str(data_root())})
    default = load_config(repo_copy / "config.yaml", {"data_root": str(data_root())})
    default_only = set()
    for table in ("indexes", "retrieval", "answering"):
        default_only |= set(default[table]) - set(preset[table])
    default_only |= set((default.get("suite") or {}).get("datasets") or {})
    outputs = planned_outputs(out)
    assert outputs and any("kr-ensemble" in p for p in outputs)
    named = sorted({(p, n) for p in outputs for n in default_only if n in Path(p).parts or Path(p).stem == n})
    assert named == []
    assert not any(p.startswith(("results/sprout", "reports/suite", "reports/sprout")) for p in outputs)


def test_cluster_jobs_resolve_the_same_extends_chain(tmp_path):
    """A cluster job re-reads the Snakefile with the submitting run's --configfile/--config arguments: an
    overlay that is only valid with the file it extends (alone it lacks every table) runs through the
    Kubernetes profile (its kubectl stand-in runs each job as its own Snakemake process)."""
    import os

    import yaml

    from dag_runner import snakemake

    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"extends": str(REPO / "tests" / "tiny.yaml"), "default_variant": "bm25-x"}))
    work, state = tmp_path / "work", tmp_path / "state"
    env = {"PATH": f"{REPO / 'tests' / 'cluster_standin'}:{os.environ['PATH']}", "STANDIN_STATE": str(state),
           "WATTBENCH_K8S_IMAGE": "wattbench:test"}
    done = snakemake(work, "--workflow-profile", str(REPO / "profiles" / "kubernetes"),
                     "results/wattbot/ingest/train.csv", configfile=overlay, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # the job ran in its own process (a pod): alone, overlay.yaml fails validation, and the scratch folder
    # has no config.yaml to fall back on, so it succeeded only by resolving the same chain
    assert [p.read_text().strip() for p in state.glob("wattbench-ingest-*.state")] == ["1,"]
    assert "Finished job" in next(state.glob("wattbench-ingest-*.log")).read_text()
    assert (work / "results" / "wattbot" / "ingest" / "train.csv").is_file()
