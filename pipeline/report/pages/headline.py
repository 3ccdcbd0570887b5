"""The page's first section, the answer to "what won, and by how much": the best answering variant,
chosen on the score split (train) and reported on test where test is labelled, with its 95% interval
and n; the variants statistically tied with it; the claims' verdict counts.

Tied means the paired comparison of the ablations and claims (:func:`pipeline.report.stats.ablation.compare`:
the paired sign-flip test's 95% interval of other − best on the questions both have) includes 0. The best is ranked
within the leaderboard's score-split block (:func:`pipeline.report.sections.primary_block`: the whole
table when it has one block); the test split is read from the same leaderboard: its ``split`` block named
``test`` (pipeline/report/pages/split_blocks.py; not its ``test/Public``/``test/Private`` parts) with a
score; without it the train score is the one reported, and the headline says that test is unlabelled.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import pandas as pd

from pipeline.report.params import Resampling
from pipeline.report.render.tables import fmt
from pipeline.report.sections import SPLIT_COLUMN, TEST, primary_block
from pipeline.report.stats.ablation import compare

TIE_RULE = "the paired 95% bootstrap interval of the score difference to the best includes 0"


@dataclass(frozen=True)
class Headline:
    best: str
    chosen_on: str  # the split the best was chosen on (the score split)
    reported_on: str  # the split its score comes from: test when labelled, else the score split
    score: float
    lo: float
    hi: float
    n: int
    ties: tuple[str, ...]  # variants tied with the best (on the score split)
    verdicts: dict[str, int] | None  # claims' verdict -> claims, each once (None: no claims apply, a corpus's page)
    unlabelled: str = "test unlabelled"  # said when the score is the score split's own
    rivals: int = 0  # the other variants it was compared with


def tied_with(tables: dict[str, pd.DataFrame], best: str, others: list[str], rep: Resampling) -> tuple[str, ...]:
    """The ``others`` whose paired score difference to ``best`` has a 95% interval including 0."""
    out = []
    for v in others:
        diff = compare(tables, [best, v], "score", rep)[1]
        if diff["diff_lo"] <= 0 <= diff["diff_hi"]:
            out.append(v)
    return tuple(out)


def best_variant(
    board: pd.DataFrame,
    tables: dict[str, pd.DataFrame],
    rep: Resampling,
    verdicts: dict[str, int] | None,
    score_split: str = "train",
    unlabelled: str = "test unlabelled",
) -> Headline:
    """The headline of a leaderboard (best first) and the per-question score tables of its variants."""
    train = primary_block(board).sort_values(["score", "variant"], ascending=[False, True], kind="stable")
    if train.empty:
        raise ValueError(f"the leaderboard has no row of the score split '{score_split}'")
    best = str(train["variant"].iloc[0])
    row = train.iloc[0]
    test = board[board[SPLIT_COLUMN] == TEST] if SPLIT_COLUMN in board.columns else board.iloc[0:0]
    test = test[(test["variant"] == best) & test["score"].notna()]
    if not test.empty:
        row = test.iloc[0]
    others = [str(v) for v in train["variant"].iloc[1:] if v in tables]
    return Headline(
        best=best,
        chosen_on=score_split,
        reported_on=TEST if not test.empty else score_split,
        score=float(row["score"]),
        lo=float(row["score_lo"]),
        hi=float(row["score_hi"]),
        n=int(row["n"] if "n" in row else row["questions"]),  # the cost table (no leaderboard given) counts answers
        ties=tied_with(tables, best, others, rep) if best in tables else (),
        verdicts=verdicts,
        unlabelled=unlabelled,
        rivals=len(others),
    )


def headline_html(h: Headline) -> str:
    """The headline as the page's first lines (``id="headline"``: the browser check looks for it)."""
    where = html.escape(  # split names come from the config: text, never markup
        f"on {h.reported_on} (chosen on {h.chosen_on})"
        if h.reported_on != h.chosen_on
        else f"on {h.chosen_on}, where it was chosen" + (f"; {h.unlabelled}" if h.unlabelled else ""),
        quote=False,
    )
    if h.ties:
        ties = f"Tied with it ({TIE_RULE}): {', '.join(f'<b>{html.escape(t)}</b>' for t in h.ties)}."
    elif h.rivals:
        ties = (
            f"No other variant is tied with it (of {h.rivals}, each paired 95% interval of the difference excludes 0)."
        )
    else:
        ties = "It is the only variant."
    claims = ""
    if h.verdicts is not None:
        counts = ", ".join(f"{n} {html.escape(v)}" for v, n in h.verdicts.items()) or "none"
        claims = (
            f'<p>Published claims, one verdict each (<a href="claims.csv">claims.csv</a>, <a href="#claims">below</a>): '
            f"{counts}.</p>"
        )
    return (
        f'<div class="headline" id="headline"><p>Best answering variant: <b>{html.escape(h.best)}</b>, score '
        f"<b>{fmt(h.score)}</b> [95% CI {fmt(h.lo)}, {fmt(h.hi)}], n = {h.n} questions, {where}.</p>"
        f"<p>{ties}</p>{claims}</div>"
    )
