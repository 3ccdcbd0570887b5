"""Render functions for the generated blocks of docs/results.md (and the README's pointer to it):
each reads one reports/ file of the last run and returns markdown, so no result number is typed
by hand. Registered in :data:`pipeline.publish.readme.REGISTRY`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.paths import Reports
from pipeline.registry.answer_backends import get as get_backend
from pipeline.report.render.tables import fmt, markdown_table
from pipeline.report.sections import TEST, leading_blocks, read_primary_block, section_of


def _pick(df: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """The given columns (those the file has), renamed for readers."""
    keep = [c for c in columns if c in df.columns]
    return df[keep].rename(columns=columns)


def _with_interval(board: pd.DataFrame) -> int:
    """Adds the "score [95% CI]" column to leaderboard rows; returns the number of questions scored."""
    board["score [95% CI]"] = [f"{fmt(r.score)} [{fmt(r.score_lo)}, {fmt(r.score_hi)}]" for r in board.itertuples()]
    return int(board["n"].max()) if "n" in board else 0


LEADERBOARD_COLUMNS = {
    "variant": "answering variant",
    "backend": "backend",
    "retrieval": "retrieval",
    "score [95% CI]": "score [95% CI]",
    "value": "value",
    "ref": "ref",
    "na": "na",
    "score_2026": "`wattbot2026`",
    "doc_hit@1": "doc hit@1",
    "doc_recall@5": "doc recall@5",
    "abstained": "abstained",
    "failures": "failures",
}


def _split_line(split: str | None, n: int) -> str:
    """The line above a leaderboard block: the labelled test split leads, the score split is in-sample."""
    if split == TEST:
        return f"**Test** (labelled, held out: nothing was chosen on it): {n} questions"
    if split is None:
        return f"{n} questions"
    return f"**Score split `{split}`** (defaults and weights were chosen on it: in-sample): {n} questions"


def _block_table(split: str | None, board: pd.DataFrame) -> str:
    n = _with_interval(board)
    line = f"{_split_line(split, n)}, metric profile `wattbot2025`, best first."
    return f"{line}\n\n" + markdown_table(_pick(board, LEADERBOARD_COLUMNS))


def render_leaderboard(reports_dir: Path) -> str:
    """WattBot leaderboard, the labelled test split first when there is one, then the scored split: score with
    its 95% interval, components, retrieval (docs/results.md)."""
    return "\n".join(_block_table(split, board) for split, board in leading_blocks(Reports.at(reports_dir).leaderboard))


def render_leaderboard_lead(reports_dir: Path) -> str:
    """README's leaderboard: the leading block's table (the labelled test split when there is one) and the score
    split's best in one line (every variant on both splits: docs/results.md's ``results-leaderboard``)."""
    blocks = leading_blocks(Reports.at(reports_dir).leaderboard)
    text = _block_table(*blocks[0])
    if len(blocks) > 1:
        split, board = blocks[1]
        best = board.iloc[0]
        text += (
            f"\n{_split_line(split, int(board['n'].max()) if 'n' in board else 0)}: best `{best['variant']}` "
            f"{fmt(best['score'])} [{fmt(best['score_lo'])}, {fmt(best['score_hi'])}] "
            "(every variant on both splits: [docs/results.md](docs/results.md)).\n"
        )
    return text


def render_ensembles(reports_dir: Path) -> str:
    """docs/ensembles.md: the ensemble variants' rows of the leaderboard (wattbench's vote and
    KohakuRAG's over the same members), best first."""
    board = read_primary_block(Reports.at(reports_dir).leaderboard)
    board = board[board["backend"].map(lambda b: get_backend(b).votes_members)].copy()
    if board.empty:
        return "*The last run has no ensemble variant.*\n"
    n = _with_interval(board)
    table = _pick(
        board,
        {
            "variant": "ensemble",
            "score [95% CI]": "score [95% CI]",
            "value": "value",
            "ref": "ref",
            "na": "na",
            "abstained": "abstained",
        },
    )
    return f"{n} questions, metric profile `wattbot2025`.\n\n" + markdown_table(table)


def render_retrieval(reports_dir: Path) -> str:
    """WattBot retrieval alone (LLM-independent): document hit/recall/precision, context size, quote."""
    t = pd.read_csv(Reports.at(reports_dir).retrieval_table)
    table = _pick(
        t,
        {
            "retrieval": "retrieval variant",
            "doc_hit@1": "doc hit@1",
            "doc_recall@5": "doc recall@5",
            "doc_precision@5": "doc precision@5",
            "context_tokens": "context tokens",
            "quote_in_context": "quote in context",
        },
    )
    n = int(t["questions"].max()) if "questions" in t else 0
    return f"{n} answerable questions.\n\n" + markdown_table(table)


def render_suite(reports_dir: Path) -> str:
    """Retrieval suite: IE@k per dataset and variant, with recall/precision at the largest k."""
    t = pd.read_csv(Reports.at(reports_dir).suite_metrics)
    wide = t.pivot_table(index=["dataset", "variant"], columns="k", values="ie").rename(columns=lambda k: f"IE@{k}")
    top = t[t["k"] == t["k"].max()].set_index(["dataset", "variant"])
    kmax = int(t["k"].max())
    wide[f"R@{kmax}"], wide[f"P@{kmax}"] = top["recall"], top["precision"]
    wide["nDCG@10"], wide["MRR"], wide["queries"] = top["ndcg@10"], top["mrr"], top["queries"].astype(int)
    return markdown_table(wide.reset_index())


def render_ablations(reports_dir: Path) -> str:
    """Every A-vs-B comparison on its headline metrics: paired difference, 95% interval, p."""
    t = pd.read_csv(Reports.at(reports_dir).ablation_differences)
    listed = [m in section_of(d).results for d, m in zip(t["dataset"], t["metric"], strict=True)]
    keep = t[pd.Series(listed, index=t.index, dtype=bool)]
    rows = [
        {
            "ablation": r.ablation,
            "variant − reference": f"{r.variant} − {r.reference}",
            "dataset": r.dataset,
            "metric": r.metric,
            "n": int(r.n),
            "Δ [95% CI]": f"{fmt(r.diff, signed=True)} [{fmt(r.diff_lo, signed=True)}, {fmt(r.diff_hi, signed=True)}]",
            "p": f"{r.p_value:.3g}",
        }
        for r in keep.itertuples()
    ]
    return markdown_table(pd.DataFrame(rows))


def render_attribution(reports_dir: Path) -> str:
    """Per-question attribution class counts per answering variant."""
    t = pd.read_csv(Reports.at(reports_dir).attribution_counts)
    return markdown_table(t.astype({c: int for c in t.columns if c != "variant"}))
