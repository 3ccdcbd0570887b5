"""The answer record every answering backend returns (one per question), and the Kaggle submission's
cells it becomes (pipeline/answer/submission.py writes them; standard library only, so a backend's module
names them without loading pandas)."""

from __future__ import annotations

from dataclasses import dataclass, field

COLUMNS = (  # the 9 columns of test_Q.csv, in order
    "id",
    "question",
    "answer",
    "answer_value",
    "answer_unit",
    "ref_id",
    "ref_url",
    "supporting_materials",
    "explanation",
)
BLANK = "is_blank"  # an abstention's value and evidence cells (the WattBot convention)


@dataclass
class Answer:
    answer: str  # human-readable, e.g. "4.3 tCO2e"
    answer_value: str  # the scored value, or "is_blank"
    ref_id: list[str] = field(default_factory=list)  # cited document ids; [] when abstaining
    explanation: str = ""  # never empty: says which evidence was used, or why it abstained
    supporting_materials: str = "is_blank"
    is_blank: bool = False


def blank_answer(explanation: str) -> Answer:
    """An explicit abstention (the WattBot convention: every evidence field is is_blank)."""
    return Answer(
        "Unable to answer with confidence based on the provided documents.",
        "is_blank",
        [],
        explanation or "abstained",
        "is_blank",
        True,
    )
