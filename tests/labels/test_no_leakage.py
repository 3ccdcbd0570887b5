"""No leakage (#33 item 2): a labels file carries `explanation` and `supporting_materials`, so it is never an
input of a retrieve, planner or answer job. Checked on the default grid's DAG as Snakemake plans it (a dry
run prints every job's declared inputs and outputs): only the scoring and report jobs read a labels file,
and no retrieval or answering job depends on one through another job's output. The claims config's
power-sized samples (`power_subsets`) are drawn from a split's labelled ids alone: the `labelled_ids` job
writes them, the one reader of labels whose output an answer job may depend on (its output holds only ids)."""
import re
from pathlib import Path

import pytest
import yaml
from dag_runner import snakemake

from pipeline.config import load_config
from pipeline.datasets.paths import REPO, data_root
from pipeline.workflow import labelled_splits, labels_source, split_source

# the scoring and report jobs, which may read labels (sprout_report draws a train question's tree walk)
SCORING = {"evaluate", "evaluate_split", "report", "figures", "sprout_report", "corpus_report", "power_gold"}
SANITISERS = {"labelled_ids"}  # writes a labels file's id column alone (pipeline/datasets/first_n.py)
ANSWERING = {"retrieve", "retrieve_llm", "answer", "ensemble"}  # retrieval (with its planner) and answering


def planned_jobs(out: str) -> list[dict]:
    """Each job of a dry run's listing: its rule, declared inputs and outputs."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        files = {k: [f.strip() for f in v.split(",") if f.strip()] for k, v in re.findall(r"^    (input|output): (.*)$", block, re.M)}
        jobs.append({"rule": m.group(1), "input": files.get("input", []), "output": files.get("output", [])})
    return jobs


def descendants(jobs: list[dict], start: str) -> list[dict]:
    """The jobs that read ``start`` or, through other jobs' outputs, anything made from it (a sanitiser's
    output, ids alone, carries nothing of it)."""
    reached, tainted, changed = [], {start}, True
    while changed:
        changed = False
        for job in jobs:
            if job not in reached and tainted & set(job["input"]):
                reached.append(job)
                if job["rule"] not in SANITISERS:
                    tainted |= set(job["output"])
                changed = True
    return reached


def planned_dag(tmp_path_factory, config: str) -> tuple[list[dict], dict]:
    work = tmp_path_factory.mktemp("dag")
    done = snakemake(work, "-n", configfile=REPO / config, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cfg = load_config(REPO / config, overrides={"data_root": str(data_root())})
    return planned_jobs(done.stdout + done.stderr), cfg


@pytest.fixture(scope="module")
def default_dag(tmp_path_factory) -> tuple[list[dict], dict]:
    return planned_dag(tmp_path_factory, "config.yaml")


@pytest.fixture(scope="module", params=["config.yaml", "config.claims.yaml"])
def shipped_dag(request, tmp_path_factory) -> tuple[list[dict], dict]:
    return planned_dag(tmp_path_factory, request.param)


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_only_scoring_and_report_jobs_read_a_labels_file(shipped_dag):
    jobs, cfg = shipped_dag
    assert {"evaluate_split", "retrieve", "answer"} <= {j["rule"] for j in jobs}, "the default grid scores test"
    questions = {split_source(cfg, s) for s in cfg["wattbot"]["splits"]}
    for split in labelled_splits(cfg):
        labels = labels_source(cfg, split)
        readers = {j["rule"] for j in jobs if labels in j["input"]}
        # train_QA.csv is both the train split's questions and its labels: the ingest job reads it as questions
        allowed = SCORING | SANITISERS | ({"ingest"} if labels in questions else set())
        assert readers and readers <= allowed, f"{labels} is read by {sorted(readers - allowed)}"
        assert not readers & ANSWERING


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_no_retrieval_or_answer_job_depends_on_the_test_labels(shipped_dag):
    jobs, cfg = shipped_dag
    labels = labels_source(cfg, "test")
    assert Path(labels).name == "test_solutions_public.csv"
    reached = {j["rule"] for j in descendants(jobs, labels)}
    allowed = SCORING | SANITISERS | {"all"}
    assert reached and reached <= allowed, f"{labels} reaches {sorted(reached - allowed)}"
    # the check sees a leak: a retrieval job given the labels file would be reported
    retrieve = next(j for j in jobs if j["rule"] == "retrieve")
    leaky = [*jobs, {"rule": "retrieve", "input": [labels], "output": retrieve["output"]}]
    assert "retrieve" in {j["rule"] for j in descendants(leaky, labels)}


def test_the_shipped_default_config_labels_the_public_test_questions():
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    assert cfg["wattbot"]["solutions"] == {"train": "train_QA.csv", "test": "test_solutions_public.csv"}


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_the_claims_configs_test_answers_come_from_labelled_ids_alone(shipped_dag, tmp_path):
    """The power-sized samples' answer jobs read questions drawn from the ids-only file, which a leak (the
    labels given to the sample's job) would taint; the ids-only file holds the id column alone."""
    jobs, cfg = shipped_dag
    if not cfg.get("power_subsets"):
        pytest.skip("no power_subsets in this config")
    from pipeline.datasets.first_n import labelled_ids

    sample = [j for j in jobs if j["rule"] == "power_sample"]
    answers = [j for j in jobs if j["rule"] == "answer" and any("/power/" in f for f in j["input"])]
    assert sample and answers and all("/power/test.labelled_ids.csv" in " ".join(j["input"]) for j in sample)
    labels = labels_source(cfg, "test")
    leaky = [{**j, "input": [*j["input"], labels]} if j is sample[0] else j for j in jobs]
    assert "answer" in {j["rule"] for j in descendants(leaky, labels)}
    out = tmp_path / "ids.csv"
    ids = labelled_ids(labels, out)
    assert out.read_text().splitlines() == ["id", *ids] and len(ids) == 187
