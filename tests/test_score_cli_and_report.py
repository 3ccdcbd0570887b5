"""`python -m pipeline score`, the evaluate stage and the report, on real files."""
import json
import subprocess
import sys

import pandas as pd

from pipeline.datasets.paths import REPO
from pipeline.provenance import atomic_write_jsonl
from pipeline.report.build import build_reports
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
    assert out.returncode == 0 and len(json.loads(out.stdout)["missing_ids"]) == 3
    assert "3 missing" in out.stderr
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
                       [{"id": r.id, "hits": [{"doc_id": "patterson2021"}]} for r in gold.itertuples()])
    out = tmp_path / "scores" / f"{name}.json"
    evaluate_variant(str(wattbot_dir / "train_QA.csv"), str(folder / "train.csv"), str(tmp_path / "retrieval.jsonl"),
                     str(folder / "train.jsonl"), str(out), str(tmp_path / "scores" / f"{name}.pq.csv"))
    return out, folder / "test.csv"


def test_evaluate_and_report(tmp_path, wattbot_dir):
    perfect = fake_variant(tmp_path, wattbot_dir, "perfect", False)
    blank = fake_variant(tmp_path, wattbot_dir, "blank", True)
    result = json.loads(perfect[0].read_text())
    assert result["wattbot2025"]["all"]["score"] == 1.0 and result["answers"]["abstained"] == 0
    assert 0 < result["retrieval"]["doc_hit@1"] < 1  # only patterson2021 questions are hits
    variants = {n: {"answering": {"backend": "extractive", "retrieval": "r"},
                    "upstream": {"indexes": {"hier": {}}}} for n in ("perfect", "blank")}
    params = {"config_hash": "abc", "default_variant": "perfect", "score_split": "train", "variants": variants}
    reports = tmp_path / "reports"
    build_reports(params, [str(perfect[0]), str(blank[0])], [str(perfect[1]), str(blank[1])], str(reports))
    board = pd.read_csv(reports / "wattbot" / "leaderboard.csv")
    assert list(board["variant"]) == ["perfect", "blank"]
    assert board.loc[1, "score"] == round(0.75 * 2 / 41 + 0.15 * 2 / 41 + 0.10, 4)
    assert (reports / "wattbot" / "submission.csv").read_bytes() == perfect[1].read_bytes()
    assert (reports / "wattbot" / "submissions" / "blank.csv").exists()
    index = (reports / "index.md").read_text()
    assert "`abc`" in index and "score_by_variant.png" in index
    assert (reports / "wattbot" / "score_by_variant.png").read_bytes()[:4] == b"\x89PNG"
