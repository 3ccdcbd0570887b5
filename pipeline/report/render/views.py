"""Tables as a reader sees them on the page. A leaderboard: human column names, numbers to 3 decimals, the score
with its interval in one cell, @k columns in numeric order, ranks with ties marked. The CSV keeps
every column as computed (reports/wattbot/leaderboard.csv); this is only its view: the measures a view of
pipeline/registry/metrics.py shows, between the variant's names and the counts.
"""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd

from pipeline.registry import metrics
from pipeline.registry.metrics import EVERYTHING, LEADERBOARD_PAGE, Pick
from pipeline.report.render.tables import fmt
from pipeline.report.sections import SPLIT_COLUMN, in_primary_block

DIGITS = 3
# What a leaderboard shows besides its measures: which variant a row is (first) and how many questions it counts.
LEAD = ("split", "rank", "variant", "backend", "retrieval")
TRAIL = ("asked", "answered", "blank", "questions", "n")
VS_BEST = "vs_best"  # beside the score that ranks the rows
# Shown as columns only where they differ between rows of one block, else said in the caption (per block, where
# other labelled splits add blocks: each split's n is its own, and two columns fewer keep the table one screen wide).
CAPTIONED = ("n", "questions")


def names(view: str = LEADERBOARD_PAGE, pick: Pick = EVERYTHING) -> dict[str, str]:
    """CSV column -> page header of ``view``'s leaderboard, in the page's order: the lead, the view's measures
    (one with an interval as ``<label> [95% CI]``, 'vs best' after it), the counts."""
    out = {c: c for c in LEAD}
    for m in metrics.measures(view, pick=pick):
        for k in pick.cutoffs(m, view):
            out[m.at(k)] = m.page_label + (f"@{k}" if k is not None else "") + (" [95% CI]" if m.interval else "")
            if m.interval:
                out[VS_BEST] = "vs best"
    return out | {c: c for c in TRAIL}


def counts() -> set[str]:
    """Columns shown as whole numbers: the counts, and the measures that are counts."""
    return set(TRAIL) | {m.at() for m in metrics.in_order() if m.whole}


def ranks(scores: pd.Series) -> list[str]:
    """Competition ranks of scores at the shown precision; equal scores share a rank marked '=' ('1=', '1=', '3')."""
    shown = scores.round(DIGITS)
    rank = shown.rank(method="min", ascending=False)
    counts = shown.value_counts()
    return [
        "" if pd.isna(r) else f"{int(r)}{'=' if counts.get(s, 0) > 1 else ''}" for r, s in zip(rank, shown, strict=True)
    ]


def score_cell(row: dict) -> str:
    if pd.isna(row.get("score")):
        return ""
    if "score_lo" in row and not pd.isna(row["score_lo"]):
        return f"{fmt(row['score'], DIGITS)} [{fmt(row['score_lo'], DIGITS)}, {fmt(row['score_hi'], DIGITS)}]"
    return fmt(row["score"], DIGITS)


def cell(column: str, value, whole: Collection[str]) -> object:
    if column in whole and not pd.isna(value):
        return str(int(round(float(value))))
    if isinstance(value, float):
        return fmt(value, DIGITS)
    return value


def block_ranks(board: pd.DataFrame) -> list[str]:
    """:func:`ranks` within each ``split`` block (pipeline/report/pages/split_blocks.py): a block is its own
    leaderboard, never ranked against another split's rows."""
    if SPLIT_COLUMN not in board.columns:
        return ranks(board["score"])
    by_row = pd.concat(
        pd.Series(ranks(part["score"]), index=part.index) for _, part in board.groupby(SPLIT_COLUMN, sort=False)
    )
    return list(by_row.loc[board.index])


def varies_within_blocks(board: pd.DataFrame, column: str) -> bool:
    """Whether ``column`` takes more than one value inside any ``split`` block (the whole table when it has none)."""
    if SPLIT_COLUMN not in board.columns:
        return board[column].nunique() > 1
    return bool((board.groupby(SPLIT_COLUMN, sort=False)[column].nunique() > 1).any())


def board_view(
    board: pd.DataFrame,
    best: str | None = None,
    ties: Collection[str] = (),
    view: str = LEADERBOARD_PAGE,
    pick: Pick = EVERYTHING,
) -> pd.DataFrame:
    """The page's leaderboard of ``board`` (best first, as the CSV; one block per split, each ranked on its
    own) with the columns of ``view``: ``best`` and its statistical ``ties`` marked in a 'vs best' column when
    given, on the score split's rows (its first block), where they were chosen."""
    df = board.copy()
    if "score" in df:
        df.insert(0, "rank", block_ranks(board))
        df["score"] = [score_cell(r) for r in board.to_dict("records")]
    if best is not None:
        df["vs_best"] = [
            ("best" if v == best else ("tied" if v in ties else "")) if scored else ""
            for v, scored in zip(df["variant"], in_primary_block(board), strict=True)
        ]
    headers, whole = names(view, pick), counts()
    order = [c for c in headers if c in df.columns]
    order = [c for c in order if c not in CAPTIONED or varies_within_blocks(df, c)]  # else in the caption
    shown = pd.DataFrame({headers[c]: [cell(c, v, whole) for v in df[c]] for c in order})
    return shown.astype(object).where(shown.notna(), "")


def board_caption(board: pd.DataFrame, tie_rule: str = "") -> str:
    """What the columns mean: the ranks' '=' and the tie rule, and why ``questions`` and ``n`` differ."""
    blocks = SPLIT_COLUMN in board.columns
    parts = ["rank: '=' where scores are equal to 3 decimals" + (", within each split's block" if blocks else "")]
    if tie_rule:
        parts.append(f"vs best: tied where {tie_rule}" + (", on the score split's block" if blocks else ""))
    primary = board[in_primary_block(board)]  # n and questions of the score split (each block has its own n)
    if {"n", "questions"} <= set(primary.columns) and len(primary):
        n, q = int(primary["n"].max()), int(primary["questions"].max())
        parts.append(
            f"n: questions scored ({n}); questions: those with a gold document ({q}), over which doc hit@k and "
            f"doc recall@k are averaged"
            + (f"; the other {n - q} are unanswerable (no gold document, ref_id is_blank)" if n > q else "")
        )
    if blocks and len(board):
        parts.append("per block, " + ", ".join(block_counts(board)))
    return "; ".join(parts) + "."


def block_counts(board: pd.DataFrame) -> list[str]:
    """Each ``split`` block's n and questions ('test n=41 questions=39', 'test/Public n=41'), where the same on
    every row of the block (the page then shows them here, not as columns)."""
    out = []
    for split, part in board.groupby(SPLIT_COLUMN, sort=False):
        counts = [f"{c}={int(part[c].max())}" for c in CAPTIONED if c in part and part[c].nunique() == 1]
        out.append(" ".join([str(split), *counts]))
    return out


SIGN = "Δ (treatment − control)"


def differences_view(summary: pd.DataFrame) -> pd.DataFrame:
    """The ablations' paired differences (wattbot/ablation_differences.csv rows) in the claims' sign
    convention: an ablation's first variant is the control, each other variant a treatment."""
    rows = [
        {
            "ablation": r["ablation"],
            "dataset": r["dataset"],
            "metric": r["metric"],
            "treatment − control": f"{r['variant']} − {r['reference']}",
            "n": str(int(r["n"])),
            f"{SIGN} [95% CI]": f"{fmt(r['diff'], DIGITS, signed=True)} "
            f"[{fmt(r['diff_lo'], DIGITS, signed=True)}, {fmt(r['diff_hi'], DIGITS, signed=True)}]",
            "p": f"{r['p_value']:.3g}",
        }
        for r in summary.to_dict("records")
    ]
    return pd.DataFrame(
        rows, columns=["ablation", "dataset", "metric", "treatment − control", "n", f"{SIGN} [95% CI]", "p"]
    )
