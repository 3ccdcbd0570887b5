"""score and evaluate: the WattBot metric on submissions."""

from __future__ import annotations

import json
import sys

from pipeline.registry import metrics
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


def cmd_labelled_ids(a) -> None:
    from pipeline.datasets.first_n import labelled_ids

    print(json.dumps({"labelled_ids": len(labelled_ids(a.gold, a.out))}))


def cmd_power_sample(a) -> None:
    """A group's power-sized sample of a split (pipeline/report/stats/power.py): its sizing table and questions."""
    import pandas as pd

    from pipeline.datasets.first_n import questions_with_ids
    from pipeline.io import atomic_write_text
    from pipeline.report.stats.power import SizedClaim, draw_ids, group_sizes

    p = json.loads(a.params)
    files = dict(item.partition("=")[::2] for item in a.pilot)
    pilot = {name: pd.read_csv(path, dtype={"id": str}) for name, path in files.items()}
    sizes = group_sizes([SizedClaim(**c) for c in p["claims"]], pilot, p["floor"])
    ids = draw_ids(pd.read_csv(a.labelled_ids, dtype=str)["id"].tolist(), int(sizes["n"].max()), p["seed"])
    atomic_write_text(a.sizes, sizes.to_csv(index=False, lineterminator="\n"))
    n = questions_with_ids(a.questions, ids, a.out, p, [a.labelled_ids, *files.values()])
    print(json.dumps({"questions": n, "claims": sizes[["claim", "n_needed", "n"]].to_dict("records")}))


def add_verbs(sub) -> None:
    """score and evaluate: the WattBot metric on submissions; the labelled ids and power-sized samples."""
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
        default=metrics.primary().name,
        choices=[m.name for m in metrics.profiles()],
        help="metric version, a registered WattBot profile: "
        + "; ".join(f"{m.name}: {m.description}" for m in metrics.profiles()),
    )
    s.add_argument(
        "--strict",
        action="store_true",
        help="reject (exit 2) a submission whose id set differs from the solution's, as Kaggle does",
    )
    s.add_argument("--out", default=None, help="write the JSON here instead of printing it")

    s = verb(sub, "evaluate", cmd_evaluate, "score one answering variant (every profile + retrieval recall)")
    for flag, text in (
        ("--solution", "gold CSV of the split"),
        ("--submission", "the variant's submission CSV"),
        ("--retrieval", "retrieval JSONL the variant answered from (for document recall)"),
        ("--answers", "answer JSONL (abstentions, failures, LLM tokens)"),
        ("--out", "scores JSON to write"),
        ("--per-question", "per-question CSV to write"),
    ):
        s.add_argument(flag, required=True, help=text)

    verb(
        sub,
        "labelled-ids",
        cmd_labelled_ids,
        "a labels file's ids alone (what an answer job may read of it)",
        "--gold",
        "--out",
    )
    s = verb(
        sub,
        "power-sample",
        cmd_power_sample,
        "a group's power-sized sample of a labelled split, sized from the score split's per-question scores",
        "--questions",
        "--params",
        "--out",
    )
    s.add_argument("--labelled-ids", required=True, help="the split's labelled ids alone (the labelled-ids verb)")
    s.add_argument("--sizes", required=True, help="the sizing table to write: per claim, its n needed and n used")
    s.add_argument(
        "--pilot", action="append", default=[], metavar="VARIANT=PATH", help="a variant's pilot per-question scores"
    )
