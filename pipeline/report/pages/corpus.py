"""A corpus's report (``corpora:``): reports/<name>/leaderboard.csv, submission.csv and its page,
index.html (pipeline/report/pages/corpus_page.py).

With labels the leaderboard is WattBot's (pipeline/report/pages/leaderboard.py ``leaderboard``: the WattBot metric
with bootstrap intervals, report.seed/bootstrap, and the doc-level retrieval metrics of each variant's run
from the labels' ref ids); without, each variant's answered and blank counts, no score. The submission is
one variant's answers in the Kaggle format, every question id in the questions file's order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.io import atomic_write_bytes, atomic_write_text, read_jsonl
from pipeline.paths import Reports
from pipeline.provenance import write_manifest
from pipeline.report.pages.corpus_page import write_corpus_page
from pipeline.report.pages.leaderboard import leaderboard
from pipeline.report.params import CorpusReportParams, VariantSlice


@dataclass(frozen=True)
class CorpusReportInputs:
    """The corpus_report rule's files, each by answering variant."""

    answers: dict[str, str]  # variant -> its answer records (JSONL) on the corpus's questions
    submissions: dict[str, str]  # variant -> its Kaggle-format CSV
    scores: dict[str, str]  # variant -> the evaluate stage's scores JSON (labelled corpora only)
    per_question: dict[str, str]  # variant -> its per-question CSV (the score intervals)


def answer_counts(answers_path: str) -> dict[str, int]:
    """Questions asked (all, labelled or not), answered, blank (abstained) and failed answers of one
    variant's records."""
    recs = read_jsonl(answers_path)
    blank = sum(bool(r["is_blank"]) for r in recs)
    return {
        "asked": len(recs),
        "answered": len(recs) - blank,
        "blank": blank,
        "failures": sum(bool(r.get("failure")) for r in recs),
    }


def unlabelled_board(variants: dict[str, VariantSlice], answers: dict[str, str]) -> pd.DataFrame:
    """One row per variant without scores: what it is and how many questions it answered."""
    rows = []
    for name, path in sorted(answers.items()):
        v = variants[name]
        rows.append(
            {
                "variant": name,
                "backend": v["answering"]["backend"],
                "retrieval": v["answering"]["retrieval"],
                "indexes": "+".join(sorted(v["upstream"]["indexes"])),
                **answer_counts(path),
            }
        )
    board = pd.DataFrame(rows).sort_values(["answered", "variant"], ascending=[False, True], kind="stable")
    return board.reset_index(drop=True)


def corpus_board(params: CorpusReportParams, inputs: CorpusReportInputs) -> pd.DataFrame:
    """The corpus's leaderboard: scored with labels (plus answered/blank counts), else counts only."""
    if not params.labelled:
        return unlabelled_board(params.board.variants, inputs.answers)
    board = leaderboard(params.board, inputs.scores, inputs.per_question)
    counts = pd.DataFrame([{"variant": n, **answer_counts(p)} for n, p in inputs.answers.items()])
    return board.merge(counts[["variant", "asked", "answered", "blank"]], on="variant", how="left")


def build_corpus_report(params: CorpusReportParams, inputs: CorpusReportInputs, reports: str) -> dict:
    """Write reports/<corpus>/leaderboard.csv, submission.csv and index.html (with its figures); a one-line
    summary of them."""
    out, name = Reports(reports), params.corpus
    board = corpus_board(params, inputs)
    atomic_write_text(out.corpus_leaderboard(name), board.to_csv(index=False, lineterminator="\n"))
    chosen = params.submission_variant
    data = Path(inputs.submissions[chosen]).read_bytes()
    atomic_write_bytes(out.corpus_submission(name), data)
    read = [*inputs.answers.values(), *inputs.scores.values(), inputs.submissions[chosen]]
    write_manifest(out.corpus_leaderboard(name), params.hashed, read)
    write_manifest(out.corpus_submission(name), params.hashed, [inputs.submissions[chosen]])
    write_corpus_page(params, board, inputs.per_question, out.corpus_page(name), out.corpus_figures(name))
    write_manifest(out.corpus_page(name), params.hashed, [*read, *inputs.per_question.values()])
    return {"corpus": name, "variants": len(board), "submission": chosen, "labelled": params.labelled}
