"""The leaderboard's blocks beyond the score split: one per other labelled split (``wattbot.solutions``,
e.g. ``test``), and, where the split's labels carry Kaggle's ``Usage`` column, one per Usage value
(``test/Public``, ``test/Private``), as Kaggle shows its two leaderboards. A Usage value with no labelled
question (the Private rows are not shipped) is a block of n=0 rows, reported, not hidden.

The blocks share the leaderboard's columns (:func:`score_cells`), plus ``split`` (first) and ``unlabelled``
(the split's answered questions without a label): a run without other labelled splits writes the table exactly
as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline.registry import metrics
from pipeline.registry.metrics import ANSWERS, Pick
from pipeline.report.params import Leaderboard, Resampling
from pipeline.report.sections import SPLIT_COLUMN
from pipeline.report.stats.resampling import bootstrap_mean
from pipeline.score.wattbot import FLAG_COLS
from pipeline.score.wattbot import SPLITS as USAGES


def score_cells(res: dict, usage: str, interval: dict[str, float | None], pick: Pick) -> dict[str, float | None]:
    """A leaderboard row's scores from a variant's scores JSON (``usage``: all, public or private), rounded:
    the primary profile's score and its parts, its ``interval``, then every other registered profile's score."""
    p = metrics.primary()
    block = [p, *(metrics.find(n) for n in p.parts)]

    def value(m: metrics.Measure) -> float | None:
        owner = metrics.profile_of(m)
        return _round(res[owner.name][usage]["score" if m.name == owner.name else m.name])

    rest = [m for m in metrics.in_order([ANSWERS]) if m not in block and pick.picks(m)]
    cells = {m.at(): value(m) for m in block if pick.picks(m)} | interval
    return cells | {m.at(): value(m) for m in rest}


def primary_scores(res: dict, usage: str) -> dict:
    """The primary profile's summary of ``usage`` (n, score, components) in a scores JSON."""
    return res[metrics.primary().name][usage]


def by_split(named: dict[str, str]) -> dict[str, dict[str, str]]:
    """``SPLIT:VARIANT -> path`` (the verbs' named files) as split -> variant -> path."""
    out: dict[str, dict[str, str]] = {}
    for name, path in named.items():
        split, av = name.split(":", 1)
        out.setdefault(split, {})[av] = path
    return out


def _unlabelled(path: str) -> int:
    return int(json.loads(Path(path).read_text()).get("unlabelled_questions", 0))


def with_split(block: pd.DataFrame, split: str, scores: dict[str, str]) -> pd.DataFrame:
    """A leaderboard block with its ``split`` label first and each variant's unlabelled count."""
    block = block.copy()
    block.insert(0, SPLIT_COLUMN, split)
    block["unlabelled"] = [_unlabelled(scores[v]) for v in block["variant"]]
    return block


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def usage_block(board: Leaderboard, split: str, usage: str, scores: dict[str, str], pq: dict[str, str]) -> pd.DataFrame:
    """One Usage value's rows (``usage``: public | private): n, the score, its components and 95% interval
    from the questions of that Usage; a variant with none has n=0 and empty scores."""
    rows = []
    score = metrics.PRIMARY
    for name, path in sorted(scores.items()):
        res, v = json.loads(Path(path).read_text()), board.variants[name]["answering"]
        per_q = pd.read_csv(pq[name], dtype={"Usage": str})
        part = per_q[per_q["Usage"].str.strip().str.lower() == usage][score].to_numpy(dtype=float)
        ci = bootstrap_mean(part, board.resampling.bootstrap, board.resampling.seed) if len(part) else None
        interval = {f"{score}_lo": _round(ci.lo if ci else None), f"{score}_hi": _round(ci.hi if ci else None)}
        rows.append(
            {
                SPLIT_COLUMN: f"{split}/{usage.capitalize()}",
                "variant": name,
                "backend": v["backend"],
                "retrieval": v["retrieval"],
                "indexes": "+".join(sorted(board.variants[name]["upstream"]["indexes"])),
                **score_cells(res, usage, interval, board.metrics),
                "n": primary_scores(res, usage)["n"],
            }
        )
    table = pd.DataFrame(rows).sort_values(
        [score, "variant"], ascending=[False, True], kind="stable", na_position="last"
    )
    return table.reset_index(drop=True)


def type_rows(split: str, name: str, per_q: pd.DataFrame, rep: Resampling) -> list[dict]:
    """One row per question type the labels flag (Quote, Table, Figure, Math, is_NA): n, the score with its
    95% interval and its components, over the split's questions of that type (n=0: empty scores)."""
    rows = []
    score, *parts = metrics.primary_columns()
    for flag in (f for f in FLAG_COLS if f in per_q):
        part = per_q[pd.to_numeric(per_q[flag], errors="coerce") == 1]
        ci = bootstrap_mean(part[score].to_numpy(dtype=float), rep.bootstrap, rep.seed) if len(part) else None
        rows.append(
            {
                SPLIT_COLUMN: split,
                "variant": name,
                "type": flag,
                "n": len(part),
                score: _round(ci.mean if ci else None),
                f"{score}_lo": _round(ci.lo if ci else None),
                f"{score}_hi": _round(ci.hi if ci else None),
                **{c: _round(float(part[c].mean()) if len(part) else None) for c in parts},
            }
        )
    return rows


def type_blocks(split: str, per_q: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The split's questions as the leaderboard's blocks cut them: the whole split, then, where the labels
    carry Kaggle's ``Usage``, each Usage value's (``test/Public``, ``test/Private``: none labelled, n=0)."""
    blocks = [(split, per_q)]
    if "Usage" in per_q:
        usage = per_q["Usage"].astype(str).str.strip().str.lower()
        blocks += [(f"{split}/{u.capitalize()}", per_q[usage == u]) for u in USAGES]
    return blocks


def by_type(board: Leaderboard, per_question: dict[str, dict[str, str]]) -> pd.DataFrame:
    """reports/wattbot/leaderboard_by_type.csv: per labelled split (besides the score split) and its Usage
    blocks, and per variant, the score and its components per question type, with n and intervals (empty
    when the labels flag no type)."""
    blocks: dict[str, list[dict]] = {}  # block -> its rows, variant by variant (the leaderboard's order)
    for split, files in sorted(per_question.items()):
        for name, path in sorted(files.items()):
            for label, part in type_blocks(split, pd.read_csv(path, dtype={"Usage": str})):
                blocks.setdefault(label, []).extend(type_rows(label, name, part, board.resampling))
    rows = [r for part in blocks.values() for r in part]
    score, *parts = metrics.primary_columns()
    cols = [SPLIT_COLUMN, "variant", "type", "n", score, f"{score}_lo", f"{score}_hi", *parts]
    return pd.DataFrame(rows, columns=cols)


def has_usage(scores: dict[str, str]) -> bool:
    """Whether the split's labels had a Usage column (the scorer then reports public and private)."""
    return any(USAGES[0] in json.loads(Path(p).read_text())[metrics.primary().name] for p in scores.values())


def split_notes(blocks: pd.DataFrame) -> list[str]:
    """index.md's line per block: n scored and, for a whole split, how many answered questions had no label."""
    lines = []
    for split, part in blocks.groupby(SPLIT_COLUMN, sort=False):
        n = int(part["n"].max()) if len(part) else 0
        unl = part["unlabelled"].dropna()
        extra = f"; {int(unl.max())} answered question(s) unlabelled" if len(unl) and unl.max() > 0 else ""
        lines.append(f"- block `{split}`: n={n} labelled question(s){extra}")
    return lines
