"""A smoke run (``limit: N``, issue #35 item 3): every split's first N questions in file order, the same N for
every variant, its question-shaped files apart from a full run's (pipeline/paths.py), its pages saying so;
unset, every path as it was."""
import csv
import json
import subprocess

import pandas as pd
import pytest

from dag_runner import command, environment, planned_jobs
from pipeline import paths
from pipeline.config import load_config
from pipeline.datasets.first_n import first_gold, first_questions
from pipeline.datasets.paths import REPO
from pipeline.io import read_jsonl
from pipeline.report.header import RunHeader
from pipeline.report.pages.leaderboard import index_md
from pipeline.workflow import report_settings, reports

TINY = REPO / "tests" / "tiny.yaml"


@pytest.fixture
def limit_of():
    """``paths.use_limit`` for one test, the full-run layout restored after it."""
    yield paths.use_limit
    paths.use_limit(None)


def ids(path) -> list[str]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return [row["id"] for row in csv.DictReader(fh)]


def test_unset_every_path_is_what_it_was_and_a_limit_moves_only_what_the_questions_shape(limit_of):
    assert paths.limit() is None and paths.reports.root == "reports"
    before = {"retrieval": paths.retrieval("wattbot", "bm25", "train"), "answers": paths.answers("x", "test"),
              "csv": paths.answers_csv("x", "test"), "scores": paths.scores("x"), "pq": paths.per_question("x"),
              "suite": paths.suite_scores("hotpotqa", "bm25"), "suite_pq": paths.suite_per_query("hotpotqa", "bm25")}
    assert before == {"retrieval": "results/wattbot/retrieval/bm25/train.jsonl",
                      "answers": "results/wattbot/answers/x/test.jsonl", "csv": "results/wattbot/answers/x/test.csv",
                      "scores": "results/wattbot/scores/x.json", "pq": "results/wattbot/scores/x.per_question.csv",
                      "suite": "results/hotpotqa/scores/bm25.json",
                      "suite_pq": "results/hotpotqa/scores/bm25.per_query.csv"}
    shared = (paths.index("wattbot", "bm25"), paths.tree("khan2025"), paths.ingest_split("train"), paths.export_gold("h"))
    limit_of(5)
    assert paths.retrieval("wattbot", "bm25", "train") == "results/wattbot/first-5/retrieval/bm25/train.jsonl"
    assert paths.answers("x", "test") == "results/wattbot/first-5/answers/x/test.jsonl"
    assert paths.suite_scores("hotpotqa", "bm25") == "results/hotpotqa/first-5/scores/bm25.json"
    assert paths.reports.leaderboard == "reports-first-5/wattbot/leaderboard.csv"
    assert (paths.index("wattbot", "bm25"), paths.tree("khan2025"), paths.ingest_split("train"),
            paths.export_gold("h")) == shared  # trees, indexes, exports: shared with the full run


def test_the_first_n_questions_in_file_order_and_the_labels_of_those(tmp_path):
    src = REPO.parent / "shared" / "data" / "wattbot" / "train_QA.csv"
    out = tmp_path / "q.csv"
    kept = first_questions(src, 3, out)
    assert kept == ids(src)[:3] == ids(out)
    assert first_gold(src, out, tmp_path / "g.csv") == 3 and ids(tmp_path / "g.csv") == kept
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"query_id": q, "doc_id": "d", "start": 0, "end": 1}) + "\n"
                            for q in [kept[2], "other", kept[0], kept[0]]))
    assert first_gold(gold, out, tmp_path / "g.jsonl") == 3
    assert [g["query_id"] for g in read_jsonl(tmp_path / "g.jsonl")] == [kept[2], kept[0], kept[0]]
    assert first_questions(src, 10_000, tmp_path / "all.csv") == ids(src)  # fewer than N: every one


def test_a_smoke_run_says_so_on_its_pages_and_a_full_run_reads_as_before():
    full = load_config(TINY)
    smoke = load_config(TINY, {"limit": 2})
    assert "limit" not in json.loads(reports.report_params(full))
    params = report_settings.report_params(json.loads(reports.report_params(smoke)))
    assert params.limit == 2 and params.config_hash != json.loads(reports.report_params(full))["config_hash"]
    page = index_md(params, 2, pd.DataFrame(), "a.png", "b.png", RunHeader("r1", "h", "c"))
    assert "- **smoke run: first 2 questions per split**" in page.splitlines()
    assert report_settings.figures_params(json.loads(reports.figures_params(smoke))).limit == 2


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_a_limited_run_answers_the_first_n_of_each_split_and_never_stands_in_for_a_full_run(tmp_path):
    """A targeted real run of tests/tiny.yaml with limit=2: one variant's answers of both splits and its
    scores, under results/wattbot/first-2/; then the full run's dry run still plans those jobs."""
    targets = ["results/wattbot/first-2/answers/bm25-x/test.jsonl", "results/wattbot/first-2/scores/bm25-x.json"]
    cmd = command(tmp_path, *targets, configfile=TINY)
    cmd.insert(cmd.index("--config") + 2, "limit=2")
    done = subprocess.run(cmd, capture_output=True, text=True, env=environment(), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    wattbot = tmp_path / "results" / "wattbot"
    for split in ("train", "test"):
        answered = [r["id"] for r in read_jsonl(wattbot / "first-2" / "answers" / "bm25-x" / f"{split}.jsonl")]
        assert answered == ids(wattbot / "ingest" / f"{split}.csv")[:2]  # the first two, in file order
    scores = json.loads((wattbot / "first-2" / "scores" / "bm25-x.json").read_text())
    assert scores["n_questions"] == 2 and scores["wattbot2025"]["all"]["n"] == 2
    assert not (wattbot / "answers").exists() and not (wattbot / "scores").exists()
    full = subprocess.run(command(tmp_path, "-n", "results/wattbot/scores/bm25-x.json", configfile=TINY),
                          capture_output=True, text=True, env=environment(), timeout=600)
    assert full.returncode == 0, full.stderr[-3000:]
    jobs = planned_jobs(full.stdout)
    assert jobs.get("answer") == 1 and jobs.get("retrieve") == 1 and jobs.get("evaluate") == 1
    assert "index" not in jobs and "tree" not in jobs and "ingest" not in jobs  # the shared part is reused


def test_every_kind_of_split_is_cut_a_corpus_the_suite_and_wattbot(tmp_path, limit_of):
    """A corpus's questions and labels, a suite dataset's queries and gold, WattBot's splits and score labels:
    a smoke run reads the cut files, which the first_questions and first_gold rules make from the full ones."""
    import pipeline.workflow as wf
    from test_corpora import corpus_config, make_corpus

    cfg = corpus_config(make_corpus(tmp_path))
    wf.register_corpora(cfg)
    full = {"mine": wf.questions_path("mine", "questions"), "hotpotqa": wf.questions_path("hotpotqa", "queries")}
    limit_of(1)
    assert wf.questions_path("mine", "questions") == "results/mine/first-1/questions/questions.csv"
    assert wf.full_questions_path("mine", "questions") == full["mine"] == "results/mine/ingest/questions.csv"
    assert wf.solutions_path(cfg, "mine") == ["results/mine/first-1/questions/questions.gold.csv"]
    assert wf.split_gold(cfg, "mine", "questions") == "results/mine/ingest/solutions.csv"
    assert wf.questions_path("hotpotqa", "queries") == "results/hotpotqa/first-1/questions/queries.csv"
    assert wf.full_questions_path("hotpotqa", "queries") == full["hotpotqa"] == paths.export_split("hotpotqa")
    assert wf.gold_path(cfg, "hotpotqa", "queries", "jsonl") == "results/hotpotqa/first-1/questions/queries.gold.jsonl"
    assert wf.split_gold(cfg, "hotpotqa", "queries") == paths.export_gold("hotpotqa")
    assert wf.gold_path(cfg, "wattbot", "train") == "results/wattbot/first-1/questions/train.gold.csv"
    assert wf.split_gold(cfg, "wattbot", "train").endswith("wattbot/train_QA.csv")
    assert wf.corpus_targets(cfg) == ["reports-first-1/mine/leaderboard.csv", "reports-first-1/mine/submission.csv"]
    # the corpus's labels, cut to its first question
    kept = first_questions(cfg["corpora"]["mine"]["questions"], 1, tmp_path / "q.csv")
    assert kept == ["q1"] and first_gold(cfg["corpora"]["mine"]["solutions"], tmp_path / "q.csv", tmp_path / "g.csv") == 1
    limit_of(None)
    assert wf.solutions_path(cfg, "mine") == ["results/mine/ingest/solutions.csv"]
    assert wf.gold_path(cfg, "wattbot", "train") == wf.split_gold(cfg, "wattbot", "train")
