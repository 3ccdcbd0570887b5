"""Per-question attribution: why a variant got a WattBot question right or wrong.

One class per (question, variant), decided in this order so each question lands in exactly one:

1. unanswerable gold (``is_blank``): ``correct`` when the variant abstained, else ``answered_unanswerable``;
2. value right and citation exact (ref score 1): ``correct``;
3. value right, citation not exact: ``wrong_citation``;
4. no gold document among the documents the answerer was shown: ``retrieval_miss``
   (the root cause is retrieval, whether the answerer then abstained or guessed);
5. gold document shown, answerer abstained: ``abstained_answerable``;
6. gold document shown, answered with a wrong value: ``wrong_value`` (evidence present, wrong value).
"""

from __future__ import annotations

import pandas as pd

from pipeline.datasets.wattbot import parse_ref_ids
from pipeline.registry.answer_backends import get as get_backend
from pipeline.score.wattbot import is_blank

CLASSES = (
    "correct",
    "wrong_citation",
    "retrieval_miss",
    "abstained_answerable",
    "wrong_value",
    "answered_unanswerable",
)
QUESTION_TYPES = ("quote", "table", "figure", "calculation", "unanswerable")


def classify(
    gold_blank: bool, answered_blank: bool, value_ok: bool, ref_score: float, gold_docs: set[str], shown_docs: set[str]
) -> str:
    """The attribution class of one question (rules in the module docstring)."""
    if gold_blank:
        return "correct" if answered_blank else "answered_unanswerable"
    if value_ok:
        return "correct" if ref_score >= 1 else "wrong_citation"
    if not gold_docs & shown_docs:
        return "retrieval_miss"
    return "abstained_answerable" if answered_blank else "wrong_value"


def question_type(explanation: str, answer_value: str) -> str:
    """WattBot's train explanation names the evidence kind (Quote, Table, Figure); anything else
    is a worked calculation. Unanswerable questions are their own type."""
    if is_blank(answer_value):
        return "unanswerable"
    low = explanation.lower()
    for kind in ("table", "figure", "quote"):
        if low.startswith(kind):
            return kind
    return "calculation"


def shown_docs(record: dict, backend: str) -> set[str]:
    """Documents the answerer read: the raw hits for a backend that does not show context (extractive),
    else the expanded context when retrieval made one (an LLM prompt shows it, as pipeline.answer.run does)."""
    shows_context = get_backend(backend).shows_context
    items = (record.get("context") or record.get("hits", [])) if shows_context else record.get("hits", [])
    return {h["doc_id"] for h in items}


def attribute_variant(
    gold: pd.DataFrame, answers: list[dict], per_question: pd.DataFrame, retrieval: list[dict], backend: str
) -> pd.DataFrame:
    """One row per gold question: id, type, class. Every gold question must have an answer, a score
    row and a retrieval record (a missing one is an error, never a silent drop)."""
    by_answer = {r["id"]: r for r in answers}
    by_score = per_question.set_index("id").to_dict("index")
    by_retrieval = {r["id"]: r for r in retrieval}
    rows = []
    for g in gold.itertuples(index=False):
        for name, table in (("answer", by_answer), ("score", by_score), ("retrieval", by_retrieval)):
            if g.id not in table:
                raise ValueError(f"attribution: no {name} record for question {g.id}")
        a, s = by_answer[g.id], by_score[g.id]
        answered_blank = bool(a.get("is_blank")) or is_blank(str(a.get("answer_value", "")))
        cls = classify(
            is_blank(str(g.answer_value)),
            answered_blank,
            bool(int(s["value"])),
            float(s["ref"]),
            set(parse_ref_ids(str(g.ref_id))),
            shown_docs(by_retrieval[g.id], backend),
        )
        rows.append({"id": g.id, "type": question_type(str(g.explanation), str(g.answer_value)), "class": cls})
    return pd.DataFrame(rows, columns=["id", "type", "class"])
