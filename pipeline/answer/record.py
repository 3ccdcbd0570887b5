"""The answer record every answering backend returns (one per question)."""

from __future__ import annotations

from dataclasses import dataclass, field


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
