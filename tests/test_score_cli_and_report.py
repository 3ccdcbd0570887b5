"""`python -m pipeline score`, the evaluate stage and the report, on real files."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from pipeline.datasets.paths import REPO
from pipeline.io import atomic_write_jsonl
from pipeline.report.pages.leaderboard import ReportInputs, build_reports
from pipeline.workflow.report_settings import report_params
from pipeline.score.evaluate import evaluate_variant


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, cwd=REPO)


def test_score_cli_gold_against_itself(wattbot_dir):
    gold = str(wattbot_dir / "train_QA.csv")
    for profile in ("wattbot2025", "wattbot2026"):
        out = run_cli("score", "--solution", gold, "--submission", gold, "--profile", profile)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["all"]["score"] == 1.0


def test_score_cli_reports_missing_ids_and_bad_files(wattbot_dir, tmp_path):
    gold = pd.read_csv(wattbot_dir / "train_QA.csv")
    gold.iloc[:-3].to_csv(tmp_path / "short.csv", index=False)
    out = run_cli("score", "--solution", str(wattbot_dir / "train_QA.csv"), "--submission", str(tmp_path / "short.csv"))
    res = json.loads(out.stdout)
    assert out.returncode == 0 and len(res["missing_ids"]) == 3 == res["n_missing"]
    assert res["all"]["n"] == len(gold) and res["all"]["score"] == pytest.approx((len(gold) - 3) / len(gold))
    assert "3 missing id(s) scored 0" in out.stderr
    strict = run_cli("score", "--strict", "--solution", str(wattbot_dir / "train_QA.csv"),
                     "--submission", str(tmp_path / "short.csv"))
    assert strict.returncode == 2 and "3 missing" in strict.stderr and "Traceback" not in strict.stderr
    gold.drop(columns=["explanation"]).to_csv(tmp_path / "bad.csv", index=False)
    out = run_cli("score", "--solution", str(wattbot_dir / "train_QA.csv"), "--submission", str(tmp_path / "bad.csv"))
    assert out.returncode == 2 and "explanation" in out.stderr and "Traceback" not in out.stderr


def fake_variant(tmp_path, wattbot_dir, name, blank_all):
    gold = pd.read_csv(wattbot_dir / "train_QA.csv", dtype=str, keep_default_na=False)
    sub = gold.copy()
    if blank_all:
        for col in ("answer_value", "ref_id", "ref_url", "supporting_materials"):
            sub[col] = "is_blank"
    folder = tmp_path / "answers" / name
    folder.mkdir(parents=True)
    sub.to_csv(folder / "train.csv", index=False)
    sub.to_csv(folder / "test.csv", index=False)
    atomic_write_jsonl(folder / "train.jsonl", [{"id": i, "is_blank": blank_all} for i in gold["id"]])
    atomic_write_jsonl(tmp_path / "retrieval.jsonl",
                       [{"id": r.id, "hits": [{"node_id": "patterson2021:s1:p1:t1", "doc_id": "patterson2021",
                                                  "text": "Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e."}]}
                        for r in gold.itertuples()])
    out = tmp_path / "scores" / f"{name}.json"
    evaluate_variant(str(wattbot_dir / "train_QA.csv"), str(folder / "train.csv"), str(tmp_path / "retrieval.jsonl"),
                     str(folder / "train.jsonl"), str(out), str(tmp_path / "scores" / f"{name}.per_question.csv"))
    return out, folder / "test.csv"


def test_evaluate_and_report(tmp_path, wattbot_dir):
    perfect = fake_variant(tmp_path, wattbot_dir, "perfect", False)
    blank = fake_variant(tmp_path, wattbot_dir, "blank", True)
    result = json.loads(perfect[0].read_text())
    assert result["wattbot2025"]["all"]["score"] == 1.0 and result["answers"]["abstained"] == 0
    assert 0 < result["retrieval"]["doc_hit@1"] < 1  # only patterson2021 questions are hits
    assert 0 < result["retrieval"]["quote_in_context"] < 1  # q009's quote is that sentence
    variants = {n: {"answering": {"backend": "extractive", "retrieval": "r"},
                    "upstream": {"indexes": {"hier": {}}}} for n in ("perfect", "blank")}
    params = {"config_hash": "abc", "default_variant": "perfect", "score_split": "train", "variants": variants}
    reports = tmp_path / "reports"
    scores = {n: str(v[0]) for n, v in (("perfect", perfect), ("blank", blank))}
    per_question = {n: str(v[0].with_name(f"{n}.per_question.csv")) for n, v in (("perfect", perfect), ("blank", blank))}
    submissions = {"perfect": str(perfect[1]), "blank": str(blank[1])}
    build_reports(report_params(params), ReportInputs(scores, per_question, submissions), str(reports))
    board = pd.read_csv(reports / "wattbot" / "leaderboard.csv")
    assert list(board["variant"]) == ["perfect", "blank"]
    assert board.loc[1, "score"] == round(0.75 * 2 / 41 + 0.15 * 2 / 41 + 0.10, 4)
    assert board.loc[0, "score_lo"] == board.loc[0, "score_hi"] == 1.0  # perfect on every question: no spread
    assert board.loc[1, "score_lo"] < board.loc[1, "score"] < board.loc[1, "score_hi"]
    assert (reports / "wattbot" / "submission.csv").read_bytes() == perfect[1].read_bytes()
    assert (reports / "wattbot" / "submissions" / "blank.csv").exists()
    index = (reports / "index.md").read_text()
    assert "- Run `none (outside a run)` · config hash `not recorded`" in index and "score_by_variant.png" in index
    assert "`abc`" not in index  # the rule's params hash is not the run's config hash (#35)
    assert (reports / "wattbot" / "score_by_variant.png").read_bytes()[:4] == b"\x89PNG"


def test_wattbot_retrieval_metrics_on_hand_made_hits():
    from pipeline.score.wattbot_retrieval import question_metrics, quote_fragment

    quote = quote_fragment('"Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e."', "Quote")
    assert quote == "training gshard 600b used 24 mwh and produced 4 3 net tco 2 e"
    assert quote_fragment("Table 3", "Table 3") is None and quote_fragment("is_blank", "is_blank") is None
    assert quote_fragment("Abstract: 'eight T4 instances... trumping both centralized and powerful hardware'",
                          "Quote") == "trumping both centralized and powerful hardware"
    hits = [{"node_id": "a:s1:p1:t1", "doc_id": "a", "context_id": "a:s1:p1", "context": "x y",
             "text": "x"},
            {"node_id": "b:s1:p1:t1", "doc_id": "b", "context_id": "b:s1:p1",
             "context": "Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e.", "text": "t"},
            {"node_id": "b:s1:p1:t2", "doc_id": "b", "context_id": "b:s1:p1", "context": "same", "text": "u"}]
    m = question_metrics(hits, {"b"}, quote, ks=(1, 2))
    assert (m["doc_hit@1"], m["doc_recall@2"], m["doc_precision@2"]) == (0.0, 1.0, 0.5)
    assert m["context_tokens"] == 2 + 12 and m["quote_in_context"] == 1.0  # each context counted once
