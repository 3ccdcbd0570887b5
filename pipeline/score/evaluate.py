"""Score one answering variant on a labelled split: both WattBot profiles, document recall
of its retrieval, abstention and failure counts, LLM cost. Feeds the leaderboard."""

from __future__ import annotations

import pandas as pd

from pipeline.io import atomic_write_json, atomic_write_text, read_jsonl
from pipeline.provenance import write_manifest
from pipeline.score.wattbot import PROFILES, per_question, score_frames
from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics


def read_csv_default(path) -> pd.DataFrame:
    """pandas defaults, exactly as the official metric reads its files."""
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
    for profile in PROFILES:
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
    pq = per_question(gold, sub, "wattbot2025")
    atomic_write_text(per_question_out, pq.to_csv(index=False, lineterminator="\n"))
    write_manifest(out, {"metric_profiles": sorted(PROFILES)}, [solution, submission, retrieval, answers])
    return result
