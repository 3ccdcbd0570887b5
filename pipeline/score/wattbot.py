"""The WattBot metric (../shared/docs/wattbot-metric.md), both published profiles.

`wattbot2025` reproduces the Kaggle metric code (OFFICIAL in ../shared/docs/kohakurag.md §1.2) rule by rule,
quirks included ("nan" is not blank, "13,900" is wrong, answering an unanswerable question costs no
value points), so our numbers are comparable with the 2025 leaderboard. `wattbot2026` is the revised
metric. A `Profile` holds only what differs; every parsing rule lives once, in the helpers below.

Id sets follow Kaggle, not the metric function's inner join: every solution id is scored, a missing
one as 0 on every component (reported as ``n_missing``), and ``strict`` rejects a submission whose
id set differs, as Kaggle's upload check does.

Each profile is a measure of pipeline/registry/metrics.py (registered below, its components with it): the
evaluate stage scores every registered profile, and the leaderboards, pages and docs read their columns there.
A third profile is one more registration. pandas is imported where frames are made, so registering the
profiles (every CLI start: pipeline/register_builtins.py) loads none.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

from pipeline.registry import metrics
from pipeline.registry.metrics import ANSWERS, Measure, register

if TYPE_CHECKING:
    import pandas as pd

PROFILES = ("wattbot2025", "wattbot2026")  # the published profiles (PROFILE_RULES); others may register
KEY_COLS = ("id", "answer_value", "answer_unit", "ref_id")
SUBMISSION_COLS = (*KEY_COLS, "explanation")
EVIDENCE_COLS = ("answer_value", "ref_id", "ref_url", "supporting_materials")  # 2026 abstention
FLAG_COLS = ("Quote", "Table", "Figure", "Math", "is_NA")
SPLITS = ("public", "private")  # values of the solution's Usage column, case-insensitive
UNABLE = "unable to answer with confidence based on the provided documents"
TOL = 1e-3  # relative and absolute tolerance of numeric answers, and the slack of a range

# ---------------------------------------------------------------- parsing helpers (both profiles)


def is_blank(s: str) -> bool:
    """The metric's abstention test. "nan" (an empty CSV cell read by pandas) is NOT blank."""
    t = s.strip().lower()
    return t in ("", "na", "n/a", "is_blank") or t.startswith(UNABLE)


def to_float(x: object) -> float | None:
    """Python float() decides what a number is: "1e3" and "1_000" are, "13,900" is not."""
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def wrapped(s: str, brackets: str) -> bool:
    """True when s (stripped) is enclosed by one of the bracket pairs in `brackets`, e.g. "[]()"."""
    s = s.strip()
    return len(s) >= 2 and any(s[0] == o and s[-1] == c for o, c in zip(brackets[::2], brackets[1::2]))


def parse_list(s: str) -> list[float | str]:
    """A bracketed list: JSON after ' -> ", else split on commas; floats where they parse, else
    lower-cased strings. "(a, b)" is read the same way as "[a, b]"."""
    inner = s.strip()[1:-1]
    try:
        items = json.loads(f"[{inner}]".replace("'", '"'))
    except ValueError:
        items = inner.split(",") if inner.strip() else []
    out: list[float | str] = []
    for x in items:
        f = None if isinstance(x, (list, dict)) else to_float(x)
        out.append(f if f is not None else str(x).strip().lower())
    return out


def numeric(xs: list[float | str]) -> bool:
    return all(isinstance(x, float) for x in xs)


def lists_match(gold: list[float | str], sub: list[float | str], text: Callable[[str], str]) -> bool:
    """Equal-length numeric lists: sorted, pairwise within tolerance; otherwise sorted strings equal."""
    if len(gold) == len(sub) and numeric(gold) and numeric(sub):
        return all(close(a, b) for a, b in zip(sorted(gold), sorted(sub)))  # type: ignore[arg-type]
    return sorted(text(str(x)) for x in gold) == sorted(text(str(x)) for x in sub)


def set_terms(s: str, text: Callable[[str], str]) -> set[str]:
    """Terms of "{a, b}" (outer brackets optional on the submitted side)."""
    s = s.strip()
    if wrapped(s, "{}[]()"):
        s = s[1:-1]
    return {text(t) for t in s.split(",") if t.strip()}


def parse_refs(s: str) -> set[str]:
    """ref_id as an id set: "[...]" is JSON after ' -> "; anything else is ONE id ("a,b", "is_blank")."""
    s = s.strip()
    if s.startswith("["):
        try:
            items = json.loads(s.replace("'", '"'))
            if isinstance(items, list):
                return {str(x).strip().lower() for x in items}
        except ValueError:
            pass
    return {s.lower()}


def ref_overlap(gold: set[str], sub: set[str]) -> dict[str, float]:
    """Jaccard, precision, recall and F1 of two id sets. Both empty is a perfect match, one empty none."""
    if not gold and not sub:
        return {"jaccard": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    inter = len(gold & sub)
    if not inter:
        return {"jaccard": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    p, r = inter / len(sub), inter / len(gold)
    return {"jaccard": inter / len(gold | sub), "precision": p, "recall": r, "f1": 2 * p * r / (p + r)}


def lower_strip(s: str) -> str:
    return s.strip().lower()


def normalise_text(s: str) -> str:
    """2026 text: lower-case, drop (Unicode) punctuation, collapse spaces, drop one leading article.
    A decimal point between digits is kept, so "3.5" never becomes "35"."""
    s = re.sub(r"(?<=\d)\.(?=\d)", "\0", s.lower())  # protect decimal points with a placeholder
    s = "".join(ch for ch in s if not unicodedata.category(ch).startswith("P")).replace("\0", ".")
    return re.sub(r"^(?:the|a|an) ", "", " ".join(s.split()))


# Spellings of the SAME unit only: nothing here converts scale (kWh stays apart from MWh).
UNIT_SYNONYMS = {
    "%": "percent",
    "pct": "percent",
    "per cent": "percent",
    "percentage": "percent",
    "x": "multiplier",
    "×": "multiplier",
    "time": "multiplier",
    "fold": "multiplier",
    "lb": "lbs",
    "pound": "lbs",
    "tonne": "metric ton",
    "metric tonne": "metric ton",
    "$": "usd",
    "dollar": "usd",
    "us dollar": "usd",
    "watt": "w",
    "litre": "liter",
    "l": "liter",
}


def canon_unit(u: str) -> str:
    """2026 unit: case, dots, spaces, one final plural "s" (not "ss", not 2-letter units like "ms")
    and UNIT_SYNONYMS; every blank spelling is ""."""
    if is_blank(u):
        return ""
    u = " ".join(u.lower().replace(".", "").split())
    if len(u) >= 3 and u.endswith("s") and u[-2].isalpha() and u[-2] != "s":
        u = u[:-1]
    return UNIT_SYNONYMS.get(u, u)


def unit_forms(unit: str) -> set[str]:
    """Lower-case surface forms of a unit (itself, its canonical form, synonyms, plurals)."""
    c = canon_unit(unit)
    base = {unit.strip().lower(), c} | {k for k, v in UNIT_SYNONYMS.items() if v == c}
    return {f for b in base for f in (b, b + "s")}


def strip_unit_words(value: str, unit: str) -> str:
    """2026: "43 percent" / "43%" with unit "percent" is compared as "43" (prefix or suffix)."""
    v = value.strip()
    if not canon_unit(unit):
        return v
    low = v.lower()
    for f in sorted(unit_forms(unit), key=len, reverse=True):
        if low.endswith(f) and not v[: -len(f)][-1:].isalpha() and v[: -len(f)].strip():
            return v[: -len(f)].strip()
        if low.startswith(f) and not v[len(f) :][:1].isalpha() and v[len(f) :].strip():
            return v[len(f) :].strip()
    return v


# ---------------------------------------------------------------- profiles


@dataclass(frozen=True)
class Profile:
    """What one published version of the metric decides; everything else is shared."""

    name: str
    weights: dict[str, float]
    answering_na_is_free: bool  # an unanswerable question answered with a value still earns value 1
    abstain_fields: tuple[str, ...]  # submission fields that must all be blank to earn na
    ref_metric: str  # key of ref_overlap(): "jaccard" or "f1"
    text: Callable[[str], str]  # free-text normalisation before comparing
    unit: Callable[[str], str]  # unit normalisation before comparing
    strip_unit_words: bool  # drop the expected unit's words from the submitted value
    tuples: bool  # "(a, b)" is a list whose every element is required

    @property
    def components(self) -> tuple[str, ...]:
        """Per-question columns; F1 also reports its precision and recall."""
        extra = ("ref_precision", "ref_recall") if self.ref_metric == "f1" else ()
        return ("value", "ref", "na", "unit", *extra)


PROFILE_RULES = {
    "wattbot2025": Profile(
        "wattbot2025",
        {"value": 0.75, "ref": 0.15, "na": 0.10, "unit": 0.0},
        answering_na_is_free=True,
        abstain_fields=("answer_value",),
        ref_metric="jaccard",
        text=lower_strip,
        unit=lower_strip,
        strip_unit_words=False,
        tuples=False,
    ),
    "wattbot2026": Profile(
        "wattbot2026",
        {"value": 0.75, "ref": 0.20, "na": 0.05, "unit": 0.0},
        answering_na_is_free=False,
        abstain_fields=EVIDENCE_COLS,
        ref_metric="f1",
        text=normalise_text,
        unit=canon_unit,
        strip_unit_words=True,
        tuples=True,
    ),
}

# The profiles as measures. wattbot2025's score is the leaderboard's `score` (with its interval and components),
# the one the ablations, claims and kept runs compare; another profile's score stands beside it.
_COMPONENT_VIEWS = (
    *(metrics.LEADERBOARD, metrics.LEADERBOARD_PAGE, metrics.LEADERBOARD_FIGURE, metrics.CORPUS_PAGE),
    *(metrics.ABLATIONS_ANSWERING, metrics.MLFLOW, metrics.CLAIMS, metrics.DOCS_LEADERBOARD, metrics.DOCS_ENSEMBLES),
)
register(
    Measure(
        "wattbot2025",
        ANSWERS,
        "WattBot's 2025 metric profile (the Kaggle leaderboard's)",
        metrics.everywhere(
            *_COMPONENT_VIEWS, metrics.CORPUS_GIST, metrics.HEADLINE, metrics.KEPT, metrics.DOCS_ABLATIONS
        ),
        column="score",
        label="score",
        parts=("value", "ref", "na"),
        interval=True,
        compute=PROFILE_RULES["wattbot2025"],
    )
)
for _name, _what, _label in (
    ("value", "the answer value is right (rules 1-5 of docs/wattbot-metric.md)", ""),
    ("ref", "the cited documents against the gold ref ids (Jaccard)", ""),
    ("na", "an unanswerable question is abstained on", "NA"),
):
    _views = metrics.everywhere(*_COMPONENT_VIEWS)
    register(Measure(_name, ANSWERS, f"wattbot2025's component: {_what}", _views, label=_label, doc_label=_name))
register(
    Measure(
        "wattbot2026",
        ANSWERS,
        "WattBot's 2026 metric profile",
        metrics.everywhere(metrics.LEADERBOARD, metrics.LEADERBOARD_PAGE, metrics.MLFLOW, metrics.DOCS_LEADERBOARD),
        column="score_2026",
        label="score 2026",
        doc_label="`wattbot2026`",
        compute=PROFILE_RULES["wattbot2026"],
    )
)


def value_ok(gold: str, sub: str, unit: str, p: Profile) -> bool:
    """The value component (rules 1-5 of the metric doc, in order)."""
    if is_blank(gold):
        return p.answering_na_is_free or is_blank(sub)
    if p.strip_unit_words:
        sub = strip_unit_words(sub, unit)
    sub_is_list = wrapped(sub, "[]()" if p.tuples else "[]")
    if wrapped(gold, "[]"):
        g = parse_list(gold)
        if sub_is_list:
            return lists_match(g, parse_list(sub), p.text)
        x = to_float(sub)  # a scalar against a numeric 2-list: the list is a range [lo, hi]
        if x is None or len(g) != 2 or not numeric(g):
            return False
        lo, hi = g
        return lo - TOL <= x <= hi + TOL  # type: ignore[operator]
    if p.tuples and wrapped(gold, "()"):
        return sub_is_list and lists_match(parse_list(gold), parse_list(sub), p.text)
    if wrapped(gold, "{}"):
        return set_terms(gold, p.text) == set_terms(sub, p.text)
    a, b = to_float(gold), to_float(sub)
    if a is not None:  # a numeric gold needs a number ("13,900" is wrong under both profiles)
        return b is not None and close(a, b)
    return p.text(gold) == p.text(sub)


def score_row(gold: dict[str, str], sub: dict[str, str], p: Profile) -> dict[str, float]:
    """All components of one matched question, plus its weighted score."""
    refs = ref_overlap(parse_refs(gold["ref_id"]), parse_refs(sub["ref_id"]))
    row: dict[str, float] = {
        "value": int(value_ok(gold["answer_value"], sub["answer_value"], gold["answer_unit"], p)),
        "ref": refs[p.ref_metric],
        "na": int(not is_blank(gold["answer_value"]) or all(is_blank(sub[f]) for f in p.abstain_fields)),
        "unit": int(p.unit(gold["answer_unit"]) == p.unit(sub["answer_unit"])),
    }
    if p.ref_metric == "f1":
        row |= {"ref_precision": refs["precision"], "ref_recall": refs["recall"]}
    row["score"] = math.fsum(w * row[c] for c, w in p.weights.items())
    return row


# ---------------------------------------------------------------- frames: validation, join, summary


def _profile(name: str) -> Profile:
    """A registered profile's rules (the published ones and any other registered: pipeline/registry/metrics.py)."""
    rules = {m.name: m.compute for m in metrics.profiles()}
    if name not in rules:
        raise ValueError(f"unknown WattBot profile {name!r}; expected one of {tuple(rules)}")
    return rules[name]


def _as_str(df: pd.DataFrame, cols: tuple[str, ...]) -> pd.DataFrame:
    """Cast like the official code's astype(str): NaN -> "nan", 1.0 -> "1.0". (pandas 3's
    astype(str) keeps NaN, hence the detour through object.)"""
    out = df.copy()
    for c in cols:
        out[c] = out[c].astype(object).map(str)
    return out


def _validate(df: pd.DataFrame, cols: tuple[str, ...], name: str) -> pd.DataFrame:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)}")
    df = _as_str(df, cols)
    dup = df["id"][df["id"].duplicated()].unique().tolist()
    if dup:
        raise ValueError(f"{name}: duplicate id(s) {', '.join(dup)}")
    if "explanation" in cols:
        empty = df["id"][df["explanation"].str.strip() == ""].tolist()
        if empty:
            raise ValueError(f"{name}: empty explanation for id(s) {', '.join(empty)}")
    return df


@dataclass
class _Scored:
    profile: Profile
    table: pd.DataFrame  # per solution id: id, components, score, and the solution's Usage/flags
    missing_ids: list[str]
    extra_ids: list[str]


def missing_row(p: Profile) -> dict[str, float]:
    """A solution id the submission lacks: 0 on every component, as Kaggle scores it. A partial
    run must not be flattered by a smaller denominator, and a missing row is not an abstention."""
    return {**{c: 0 for c in p.components}, "score": 0.0}


def _score(
    solution: pd.DataFrame,
    submission: pd.DataFrame,
    profile: str,
    sol_name: str = "solution",
    sub_name: str = "submission",
    strict: bool = False,
) -> _Scored:
    p = _profile(profile)
    sub_cols = SUBMISSION_COLS + tuple(c for c in p.abstain_fields if c not in SUBMISSION_COLS)
    sol = _validate(solution, KEY_COLS, sol_name)
    sub = _validate(submission, sub_cols, sub_name)
    sub_rows = sub.set_index("id").to_dict("index")
    sol_ids = set(sol["id"])
    missing = [i for i in sol["id"] if i not in sub_rows]
    extra = [i for i in sub["id"] if i not in sol_ids]
    if strict and (missing or extra):
        raise ValueError(
            f"{sub_name}: id set differs from {sol_name} ({len(missing)} missing, e.g. "
            f"{', '.join(missing[:5]) or '-'}; {len(extra)} extra, e.g. {', '.join(extra[:5]) or '-'})"
        )
    extras = [c for c in ("Usage", *FLAG_COLS) if c in sol.columns]
    rows = [
        {
            "id": g["id"],
            **(score_row(g, sub_rows[g["id"]], p) if g["id"] in sub_rows else missing_row(p)),
            **{c: g[c] for c in extras},
        }
        for g in sol.to_dict("records")
    ]
    cols = ["id", *p.components, "score", *extras]
    import pandas as pd

    return _Scored(p, pd.DataFrame(rows, columns=cols), missing_ids=missing, extra_ids=extra)


def _summary(t: pd.DataFrame, p: Profile) -> dict:
    """n, weighted score and the mean of each component (None when there are no rows)."""
    if not len(t):
        return {"n": 0, "score": None, **{c: None for c in p.components}}
    means = {c: float(t[c].mean()) for c in p.components}
    return {"n": len(t), "score": math.fsum(w * means[c] for c, w in p.weights.items()), **means}


def _by_type(t: pd.DataFrame, p: Profile) -> dict:
    import pandas as pd

    return {f: _summary(t[pd.to_numeric(t[f], errors="coerce") == 1], p) for f in FLAG_COLS if f in t}


def _report(s: _Scored) -> dict:
    """all, then public/private when the solution has Usage (each with its own by_type), then the
    unmatched ids, then by_type over all rows when the solution has flag columns."""
    t, p = s.table, s.profile
    out: dict = {"profile": p.name, "weights": dict(p.weights), "all": _summary(t, p)}
    if "Usage" in t:
        usage = t["Usage"].astype(object).map(str).str.strip().str.lower()
        for split in SPLITS:
            part = t[usage == split]
            types = _by_type(part, p)
            out[split] = _summary(part, p) | ({"by_type": types} if types else {})
    out["n_missing"], out["missing_ids"], out["extra_ids"] = len(s.missing_ids), s.missing_ids, s.extra_ids
    types = _by_type(t, p)
    if types:
        out["by_type"] = types
    return out


# ---------------------------------------------------------------- public API


def score_frames(
    solution: pd.DataFrame, submission: pd.DataFrame, profile: str = "wattbot2025", strict: bool = False
) -> dict:
    """Score a submission against a solution: a JSON-able dict (all / public / private / by_type).
    Every solution id counts; a missing one scores 0 (``n_missing``), ``strict`` rejects any id
    set that differs from the solution's, as Kaggle does."""
    return _report(_score(solution, submission, profile, strict=strict))


def score_files(
    solution_path: str | PathLike, submission_path: str | PathLike, profile: str = "wattbot2025", strict: bool = False
) -> dict:
    """Like score_frames, reading both CSVs with pandas defaults as the official metric does."""
    import pandas as pd

    s = _score(
        pd.read_csv(solution_path),
        pd.read_csv(submission_path),
        profile,
        str(solution_path),
        str(submission_path),
        strict,
    )
    return _report(s)


def per_question(solution: pd.DataFrame, submission: pd.DataFrame, profile: str = "wattbot2025") -> pd.DataFrame:
    """One row per solution id (a missing one all zeros): id, value, ref, na, unit (2026:
    ref_precision, ref_recall), score, then the solution's Usage and question-type flags where it has
    them (Kaggle's test labels: the report's Public/Private and per-type intervals)."""
    return _score(solution, submission, profile).table.reset_index(drop=True)
