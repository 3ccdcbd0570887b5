"""No leakage (#33 item 2): a labels file carries `explanation` and `supporting_materials`, so it is never an
input of a retrieve, planner or answer job. Checked on the default grid's DAG as Snakemake plans it (a dry
run prints every job's declared inputs and outputs): only the scoring and report jobs read a labels file,
and no retrieval or answering job depends on one through another job's output."""
import re
from pathlib import Path

import pytest
import yaml
from dag_runner import snakemake

from pipeline.config import load_config
from pipeline.datasets.paths import REPO, data_root
from pipeline.workflow import labelled_splits, labels_source, split_source

# the scoring and report jobs, which may read labels (sprout_report draws a train question's tree walk)
SCORING = {"evaluate", "evaluate_split", "report", "figures", "sprout_report", "corpus_report"}
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
    """The jobs that read ``start`` or, through other jobs' outputs, anything made from it."""
    reached, tainted, changed = [], {start}, True
    while changed:
        changed = False
        for job in jobs:
            if job not in reached and tainted & set(job["input"]):
                reached.append(job)
                tainted |= set(job["output"])
                changed = True
    return reached


@pytest.fixture(scope="module")
def default_dag(tmp_path_factory) -> tuple[list[dict], dict]:
    work = tmp_path_factory.mktemp("dag")
    done = snakemake(work, "-n", configfile=REPO / "config.yaml", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cfg = load_config(REPO / "config.yaml", overrides={"data_root": str(data_root())})
    return planned_jobs(done.stdout + done.stderr), cfg


def test_only_scoring_and_report_jobs_read_a_labels_file(default_dag):
    jobs, cfg = default_dag
    assert {"evaluate_split", "retrieve", "answer"} <= {j["rule"] for j in jobs}, "the default grid scores test"
    questions = {split_source(cfg, s) for s in cfg["wattbot"]["splits"]}
    for split in labelled_splits(cfg):
        labels = labels_source(cfg, split)
        readers = {j["rule"] for j in jobs if labels in j["input"]}
        # train_QA.csv is both the train split's questions and its labels: the ingest job reads it as questions
        allowed = SCORING | ({"ingest"} if labels in questions else set())
        assert readers and readers <= allowed, f"{labels} is read by {sorted(readers - allowed)}"
        assert not readers & ANSWERING


def test_no_retrieval_or_answer_job_depends_on_the_test_labels(default_dag):
    jobs, cfg = default_dag
    labels = labels_source(cfg, "test")
    assert Path(labels).name == "test_solutions_public.csv"
    reached = {j["rule"] for j in descendants(jobs, labels)}
    assert reached and reached <= SCORING | {"all"}, f"{labels} reaches {sorted(reached - SCORING)}"
    # the check sees a leak: a retrieval job given the labels file would be reported
    retrieve = next(j for j in jobs if j["rule"] == "retrieve")
    leaky = [*jobs, {"rule": "retrieve", "input": [labels], "output": retrieve["output"]}]
    assert "retrieve" in {j["rule"] for j in descendants(leaky, labels)}


def test_the_shipped_default_config_labels_the_public_test_questions():
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    assert cfg["wattbot"]["solutions"] == {"train": "train_QA.csv", "test": "test_solutions_public.csv"}
