"""score and evaluate: the WattBot metric on submissions."""

from __future__ import annotations

import json
import sys

from pipeline.verbs.base import verb


def cmd_score(a) -> None:
    from pipeline.score.wattbot import score_files

    result = score_files(a.solution, a.submission, a.profile, strict=a.strict)
    text = json.dumps(result, indent=1, sort_keys=True)
    if a.out:
        from pipeline.io import atomic_write_text

        atomic_write_text(a.out, text + "\n")
    else:
        print(text)
    if result["missing_ids"] or result["extra_ids"]:
        print(
            f"warning: {result['n_missing']} missing id(s) scored 0 and {len(result['extra_ids'])} "
            f"extra id(s) ignored in {a.submission}",
            file=sys.stderr,
        )


def cmd_evaluate(a) -> None:
    from pipeline.score.evaluate import evaluate_variant

    evaluate_variant(a.solution, a.submission, a.retrieval, a.answers, a.out, a.per_question)


def add_verbs(sub) -> None:
    """score and evaluate: the WattBot metric on submissions."""
    s = verb(
        sub,
        "score",
        cmd_score,
        "score a submission CSV against a solution CSV (WattBot metric); "
        "a solution id missing from the submission scores 0 on every component",
    )
    s.add_argument("--solution", required=True, help="gold CSV (id, answer_value, answer_unit, ref_id, ...)")
    s.add_argument(
        "--submission", required=True, help="submission CSV (id, answer_value, answer_unit, ref_id, explanation)"
    )
    s.add_argument(
        "--profile",
        default="wattbot2025",
        choices=("wattbot2025", "wattbot2026"),
        help="metric version: the 2025 Kaggle leaderboard metric or the revised 2026 one",
    )
    s.add_argument(
        "--strict",
        action="store_true",
        help="reject (exit 2) a submission whose id set differs from the solution's, as Kaggle does",
    )
    s.add_argument("--out", default=None, help="write the JSON here instead of printing it")

    s = verb(sub, "evaluate", cmd_evaluate, "score one answering variant (both profiles + retrieval recall)")
    for flag, text in (
        ("--solution", "gold CSV of the split"),
        ("--submission", "the variant's submission CSV"),
        ("--retrieval", "retrieval JSONL the variant answered from (for document recall)"),
        ("--answers", "answer JSONL (abstentions, failures, LLM tokens)"),
        ("--out", "scores JSON to write"),
        ("--per-question", "per-question CSV to write"),
    ):
        s.add_argument(flag, required=True, help=text)
