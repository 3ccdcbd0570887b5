"""docs/results.md's ``llm-cost`` block: what each LLM variant's answers cost a question, from the answer jobs'
telemetry as the leaderboard's telemetry table writes it (pipeline/report/telemetry: leaderboard_telemetry)."""

import json
from pathlib import Path

import pandas as pd

from pipeline import paths
from pipeline.paths import Reports
from pipeline.publish.results_doc import render_llm_cost
from pipeline.report.telemetry.cost import leaderboard_telemetry


def _answers(tmp_path, name: str, calls: list[dict]) -> str:
    answers = tmp_path / f"{name}.jsonl"
    with open(paths.answers_telemetry(str(answers)), "w") as fh:
        fh.write("".join(json.dumps(c) + "\n" for c in calls))
    return str(answers)


def test_the_block_prices_a_vote_against_its_cached_control(tmp_path):
    """A vote of 3 samples made 6 calls for 2 questions; its one-sample control answered both from the cache
    (the vote's sample 0): it shows those calls' seconds and tokens, and a job wall of lookups. The extractive
    variant makes no call and is left out."""
    call = {"latency_s": 12.0, "prompt_tokens": 400, "completion_tokens": 70}
    cost = tmp_path / "cost.csv"
    pd.DataFrame([
        {"variant": "vote", "questions": 2, "tokens_per_question": 1410.0, "score": 0.5},
        {"variant": "one", "questions": 2, "tokens_per_question": 470.0, "score": 0.4},
        {"variant": "reader", "questions": 2, "tokens_per_question": 0.0, "score": 0.6},
    ]).to_csv(cost, index=False)
    answers = {"vote": _answers(tmp_path, "vote", [{**call, "cached": False}] * 6),
               "one": _answers(tmp_path, "one", [{**call, "cached": True}] * 2),
               "reader": str(tmp_path / "reader.jsonl")}
    bench = tmp_path / "b.tsv"
    bench.write_text("s\th:m:s\n36.0\t0:00:36\n")
    lookups = tmp_path / "l.tsv"
    lookups.write_text("s\th:m:s\n0.2\t0:00:00\n")
    out = Path(Reports.at(tmp_path / "reports").leaderboard_telemetry)
    out.parent.mkdir(parents=True)
    leaderboard_telemetry(str(cost), answers, {"vote": str(bench), "one": str(lookups), "reader": str(bench)}, str(out))
    rows = [line for line in render_llm_cost(tmp_path / "reports").splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| answering variant | questions | LLM calls | cache hits | LLM tokens / question")
    assert rows[1:] == ["| one | 2 | 2 | 2 | 470 | 12 | 0.1 |", "| vote | 2 | 6 | 0 | 1410 | 36 | 18 |"]


def test_a_run_without_llm_calls_says_so(tmp_path):
    out = Path(Reports.at(tmp_path).leaderboard_telemetry)
    out.parent.mkdir(parents=True)
    for row in ({"variant": "reader", "questions": 2, "telemetry_calls": 0}, {"variant": "reader", "questions": 2}):
        pd.DataFrame([row]).to_csv(out, index=False)
        assert render_llm_cost(tmp_path) == "*The last run has no LLM variant.*\n"
