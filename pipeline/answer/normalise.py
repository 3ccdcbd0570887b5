"""Answer values into the scorer's format, defensively (JSON in replies: :mod:`pipeline.llm.replies`).

Why: the WattBot metric compares strings and floats strictly ("13,900" is wrong, "True" is
wrong, "about 80" is wrong), so format slips would cost points that the model earned.
"""

from __future__ import annotations

import re

HEDGE = re.compile(
    r"^(?:about|approximately|approx\.?|around|roughly|nearly|almost|circa|ca\.|an estimated|"
    r"estimated|~|≈|≃)\s*",
    re.I,
)
NUMBER = r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+"
RANGE = re.compile(rf"^\s*({NUMBER})\s*(?:%|[A-Za-z]+)?\s*(?:-|–|—|to)\s*({NUMBER})\s*(?:\S.*)?$")
NUM_WITH_UNIT = re.compile(rf"^\s*({NUMBER})\s*(%|[A-Za-z][A-Za-z0-9/²₂ .\-]{{0,30}})?$")
TRUE_WORDS, FALSE_WORDS = ("true", "yes"), ("false", "no")


def is_true_false(question: str) -> bool:
    return question.strip().lower().startswith("true or false")


def _num(s: str) -> str:
    return s.replace(",", "")


def _as_text(value) -> str:
    """A JSON value as the text it is compared by: booleans 1/0, floats by repr, lists bracketed."""
    if isinstance(value, bool):
        value = "1" if value else "0"
    if isinstance(value, (int, float)):
        value = repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, list):
        value = "[" + ",".join(str(v) for v in value) + "]"
    return str(value or "").strip().strip('"').strip()


def _truth(value: str) -> str | None:
    """1 or 0 for a true/false answer's words, None when they say neither."""
    low = value.lower().strip(".! ")
    if low in ("1", "1.0") or any(low.startswith(w) for w in TRUE_WORDS):
        return "1"
    if low in ("0", "0.0") or any(low.startswith(w) for w in FALSE_WORDS):
        return "0"
    return None


def normalise_value(value, question: str = "", answer_unit: str = "") -> str:
    """True/False -> 1/0 (for "True or false" questions); hedges removed; "80-90" / "80 to 90"
    -> [80.0,90.0]; thousands separators, units and percent signs dropped from a number;
    lists written without spaces. Text answers keep their words (a parenthetical abbreviation
    after a name is dropped)."""
    value = _as_text(value)
    if not value or value.lower() in ("is_blank", "n/a", "na", "none", "null", "unknown"):
        return "is_blank"
    truth = _truth(value) if is_true_false(question) else None
    if truth is not None:
        return truth
    value = HEDGE.sub("", value).strip()
    if value.startswith("[") and value.endswith("]"):
        items = [i.strip().strip("'\"") for i in value[1:-1].split(",") if i.strip()]
        return "[" + ",".join(_num(i) if re.fullmatch(NUMBER, i) else i for i in items) + "]"
    m = RANGE.match(value)
    if m and not re.search(r"[A-Za-z]-\d", value):  # "GPT-3" is a name, not a range
        return f"[{float(_num(m.group(1)))},{float(_num(m.group(2)))}]"
    m = NUM_WITH_UNIT.match(value)
    if m and (m.group(2) is None or answer_unit != "is_blank"):
        return _num(m.group(1))
    return re.sub(r"\s*\([A-Z][A-Za-z0-9]{1,9}s?\)$", "", value)  # "Power usage effectiveness (PUE)"


def parse_refs(refs) -> list[str]:
    """A string ref becomes a one-item list (comma lists split); a ``ref_id=`` prefix is stripped."""
    if isinstance(refs, str):
        refs = [r for r in re.split(r"[,;]", refs.strip().strip("[]"))]
    if not isinstance(refs, list):
        return []
    out = []
    for r in refs:
        r = re.sub(r"^ref_id\s*=\s*", "", str(r).strip().strip("'\"")).strip()
        if r and r.lower() != "is_blank":
            out.append(r)
    return out
