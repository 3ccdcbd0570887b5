"""Score one answering variant on a labelled split: every registered WattBot profile, document recall
of its retrieval, abstention and failure counts, LLM cost. Feeds the leaderboard.

The answers' counts the pages show are measures of pipeline/registry/metrics.py, registered below."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.io import atomic_write_json, atomic_write_text, read_jsonl
from pipeline.provenance import write_manifest
from pipeline.registry import metrics
from pipeline.registry.metrics import ANSWER_COUNTS, Measure, everywhere, register
from pipeline.score.wattbot import per_question, score_frames
from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics

if TYPE_CHECKING:
    import pandas as pd

_BOARDS = (metrics.LEADERBOARD, metrics.LEADERBOARD_PAGE, metrics.CORPUS_PAGE, metrics.MLFLOW, metrics.DOCS_LEADERBOARD)
for _name, _what, _views, _better, _label in (
    ("tokens_per_question", "LLM tokens (prompt and completion) per question scored",
     (metrics.LEADERBOARD_PAGE, metrics.MLFLOW), metrics.LOWER, "LLM tokens / question"),
    ("abstained", "answers that abstain (is_blank)", (*_BOARDS, metrics.DOCS_ENSEMBLES), metrics.NEITHER, ""),
    ("failures", "questions left without a provider reply", (*_BOARDS, metrics.CORPUS_GIST), metrics.LOWER, ""),
):  # fmt: skip
    _shown = everywhere(*_views)
    register(
        Measure(_name, ANSWER_COUNTS, _what, _shown, better=_better, defined_on="variants", label=_label, whole=True)
    )


def read_csv_default(path) -> pd.DataFrame:
    """pandas defaults, exactly as the official metric reads its files."""
    import pandas as pd

    return pd.read_csv(path)


def evaluate_variant(
    solution: str, submission: str, retrieval: str, answers: str, out: str, per_question_out: str
) -> dict:
    gold, sub = read_csv_default(solution), read_csv_default(submission)
    # Only the labelled questions are scored: a corpus's solutions may label some of its questions (the
    # others are answered for the submission, not "extra ids"); WattBot's score split labels every one.
    labelled = sub["id"].astype(str).isin(set(gold["id"].astype(str)))
    unlabelled, sub = int((~labelled).sum()), sub[labelled].reset_index(drop=True)
    result: dict = {"n_questions": len(gold)}
    if unlabelled:
        result["unlabelled_questions"] = unlabelled
    profiles = [m.name for m in metrics.profiles()]
    for profile in profiles:
        result[profile] = score_frames(gold, sub, profile)
    result["retrieval"] = wattbot_retrieval_metrics(read_jsonl(retrieval), gold.fillna("").astype(str))[1]
    recs = read_jsonl(answers)
    calls = [r["call"] for r in recs if "call" in r]
    result["answers"] = {
        "abstained": sum(bool(r["is_blank"]) for r in recs),
        "failures": sum(bool(r.get("failure")) for r in recs),
        "llm_calls": sum(c.get("n_calls", 1) for c in calls),
        "failure_reasons": " | ".join(sorted({r["failure"][:120] for r in recs if r.get("failure")})),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
    }
    atomic_write_json(out, result)
    pq = per_question(gold, sub, metrics.primary().name)
    atomic_write_text(per_question_out, pq.to_csv(index=False, lineterminator="\n"))
    write_manifest(out, {"metric_profiles": sorted(profiles)}, [solution, submission, retrieval, answers])
    return result
