"""Answers -> the Kaggle submission format (the 9 columns of test_Q.csv, ids in input order)."""

from __future__ import annotations

import pandas as pd

from pipeline.answer.record import BLANK as BLANK
from pipeline.answer.record import COLUMNS as COLUMNS
from pipeline.datasets.wattbot import format_ref_ids

# Cells written from a user's question file or by the model (from PDF text it read) that no metric reads
# (supporting_materials: only whether it is is_blank). A spreadsheet runs a cell starting with one of
# FORMULA_START as a formula (=HYPERLINK(...), +cmd|...), so these get OWASP's CSV-injection remedy: a
# leading apostrophe. The scored columns (answer_value, answer_unit, ref_id, ref_url) are written as they are.
FREE_TEXT = ("question", "answer", "supporting_materials", "explanation")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def submission_frame(questions: pd.DataFrame, answers: list[dict], urls: dict[str, str]) -> pd.DataFrame:
    """One row per question in input order; an abstention follows the WattBot convention of
    ``is_blank`` in every evidence field. A question with no answer record is an error."""
    by_id = {a["id"]: a for a in answers}
    missing = [q for q in questions["id"] if q not in by_id]
    if missing:
        raise ValueError(f"no answer for question id(s) {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    rows = [
        submission_row(q.id, q.question, q.answer_unit, by_id[q.id], urls) for q in questions.itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def submission_row(qid: str, question: str, unit: str, a: dict, urls: dict[str, str]) -> tuple:
    """One answer (an Answer as a dict) as the 9 Kaggle cells, in COLUMNS order."""
    if a["is_blank"]:
        return (qid, question, a["answer"], BLANK, unit, BLANK, BLANK, BLANK, BLANK)
    refs = a["ref_id"]
    links = [urls.get(r, "") for r in refs]  # a corpus without metadata has no urls: is_blank, not ['']
    return (
        qid,
        question,
        a["answer"],
        a["answer_value"],
        unit,
        format_ref_ids(refs),
        format_ref_ids(links) if any(links) else BLANK,
        a["supporting_materials"] or BLANK,
        a["explanation"].strip() or BLANK,
    )


def neutralised(cell: object) -> object:
    """``cell`` prefixed with ``'`` when a spreadsheet would read it as a formula, and its carriage returns
    made line feeds (the CSV writer quotes a cell with a line feed, not one with a lone CR, which readers
    take for the end of the row); else as it is."""
    if not isinstance(cell, str):
        return cell
    text = cell.replace("\r\n", "\n").replace("\r", "\n")
    return "'" + text if cell.startswith(FORMULA_START) else text


def write_submission(df: pd.DataFrame, path) -> None:
    """The submission CSV, its free-text cells neutralised (:data:`FREE_TEXT`)."""
    from pipeline.io import atomic_write_text

    safe = df.assign(**{c: df[c].map(neutralised) for c in FREE_TEXT if c in df.columns})
    atomic_write_text(path, safe.to_csv(index=False, lineterminator="\n"))
