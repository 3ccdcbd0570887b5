"""Render functions for the generated blocks of docs/results.md (and the README's pointer to it):
each reads one reports/ file of the last run and returns markdown, so no result number is typed
by hand. Registered in :data:`pipeline.publish.readme.REGISTRY`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.paths import Reports
from pipeline.registry.answer_backends import get as get_backend
from pipeline.report.render.tables import fmt, markdown_table
from pipeline.report.sections import read_primary_block, section_of


def _pick(df: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """The given columns (those the file has), renamed for readers."""
    keep = [c for c in columns if c in df.columns]
    return df[keep].rename(columns=columns)


def _with_interval(board: pd.DataFrame) -> int:
    """Adds the "score [95% CI]" column to leaderboard rows; returns the number of questions scored."""
    board["score [95% CI]"] = [f"{fmt(r.score)} [{fmt(r.score_lo)}, {fmt(r.score_hi)}]" for r in board.itertuples()]
    return int(board["n"].max()) if "n" in board else 0


def render_leaderboard(reports_dir: Path) -> str:
    """WattBot leaderboard on the scored split: score with its 95% interval, components, retrieval."""
    board = read_primary_block(Reports.at(reports_dir).leaderboard)
    n = _with_interval(board)
    table = _pick(
        board,
        {
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
        },
    )
    return f"{n} questions, metric profile `wattbot2025`, best first.\n\n" + markdown_table(table)


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
