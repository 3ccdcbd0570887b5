"""Render functions for the generated blocks of docs/results.md (and the README's pointer to it):
each reads one reports/ file of the last run and returns markdown, so no result number is typed
by hand. Registered in :data:`pipeline.publish.readme.REGISTRY`. Each block shows the measures of its
view in pipeline/registry/metrics.py (``docs.*``) that the file has, under their docs labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.paths import Reports
from pipeline.registry import metrics
from pipeline.registry.answer_backends import get as get_backend
from pipeline.report.render.tables import fmt, markdown_table
from pipeline.report.sections import TEST, leading_blocks, read_primary_block, section_of


def _pick(df: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """The given columns (those the file has), renamed for readers."""
    keep = [c for c in columns if c in df.columns]
    return df[keep].rename(columns=columns)


def _headers(view: str, lead: dict[str, str], ks: tuple[int, ...] = ()) -> dict[str, str]:
    """Column -> docs header of a block: ``lead``, then the view's measures at their cutoffs there (one with an
    interval as its ``<label> [95% CI]`` cell, :func:`_with_interval`)."""
    out = dict(lead)
    for m in metrics.measures(view):
        for k in m.cutoffs_in(view, ks):
            column = _interval(m) if m.interval else m.at(k)
            out[column] = m.docs_label + (f"@{k}" if k is not None else "") + (" [95% CI]" if m.interval else "")
    return out


def _interval(m: metrics.Measure) -> str:
    """The column :func:`_with_interval` writes the measure's value and interval into."""
    return f"{m.docs_label} [95% CI]"


def _with_interval(board: pd.DataFrame) -> int:
    """Adds the "score [95% CI]" column to leaderboard rows; returns the number of questions scored."""
    p = metrics.primary()
    score, lo, hi = board[p.at()], board[f"{p.at()}_lo"], board[f"{p.at()}_hi"]
    board[_interval(p)] = [f"{fmt(s)} [{fmt(a)}, {fmt(b)}]" for s, a, b in zip(score, lo, hi)]
    return int(board["n"].max()) if "n" in board else 0


def _split_line(split: str | None, n: int) -> str:
    """The line above a leaderboard block: the labelled test split leads, the score split is in-sample."""
    if split == TEST:
        return f"**Test** (held out: nothing chosen on it): {n} questions"
    if split is None:
        return f"{n} questions"
    return f"**Score split `{split}`** (in-sample: defaults chosen on it): {n} questions"


def _block_table(split: str | None, board: pd.DataFrame) -> str:
    n = _with_interval(board)
    lead = {"variant": "answering variant", "backend": "backend", "retrieval": "retrieval"}
    table = _pick(board, _headers(metrics.DOCS_LEADERBOARD, lead))
    line = f"{_split_line(split, n)}, metric profile `{metrics.primary().name}`, best first."
    return f"{line}\n\n" + markdown_table(table)


def render_leaderboard(reports_dir: Path) -> str:
    """WattBot leaderboard, the labelled test split first when there is one, then the scored split: score with
    its 95% interval, components, retrieval (docs/results.md)."""
    return "\n".join(_block_table(split, board) for split, board in leading_blocks(Reports.at(reports_dir).leaderboard))


def render_leaderboard_lead(reports_dir: Path) -> str:
    """README's leaderboard: the leading block's table alone (the labelled test split when there is one; every
    variant on both splits is docs/results.md's ``results-leaderboard``, which README's text links), so that
    README stays within its 12 KB (tests/report/test_readme.py) as the test split's table is added."""
    return _block_table(*leading_blocks(Reports.at(reports_dir).leaderboard)[0])


def render_ensembles(reports_dir: Path) -> str:
    """docs/ensembles.md: the ensemble variants' rows of the leaderboard (wattbench's vote and
    KohakuRAG's over the same members), best first."""
    board = read_primary_block(Reports.at(reports_dir).leaderboard)
    board = board[board["backend"].map(lambda b: get_backend(b).votes_members)].copy()
    if board.empty:
        return "*The last run has no ensemble variant.*\n"
    n = _with_interval(board)
    table = _pick(board, _headers(metrics.DOCS_ENSEMBLES, {"variant": "ensemble"}))
    return f"{n} questions, metric profile `{metrics.primary().name}`.\n\n" + markdown_table(table)


def render_retrieval(reports_dir: Path) -> str:
    """WattBot retrieval alone (LLM-independent): document hit/recall/precision, context size, quote."""
    t = pd.read_csv(Reports.at(reports_dir).retrieval_table)
    table = _pick(t, _headers(metrics.DOCS_RETRIEVAL, {"retrieval": "retrieval variant"}))
    n = int(t["questions"].max()) if "questions" in t else 0
    return f"{n} answerable questions.\n\n" + markdown_table(table)


def render_suite(reports_dir: Path) -> str:
    """Retrieval suite: per dataset and variant, IE@k at every k, recall and precision at the largest k, nDCG@10
    and MRR (the suite table's rows, one per k, turned into columns)."""
    t = pd.read_csv(Reports.at(reports_dir).suite_metrics)
    keys = ["dataset", "variant"]
    rows = t.drop_duplicates(keys).set_index(keys).sort_index().index
    ks = tuple(sorted(int(k) for k in t["k"].unique()))
    wide = pd.DataFrame(index=rows)
    for m in metrics.measures(metrics.DOCS_SUITE, [metrics.SUITE]):
        for k in m.cutoffs_in(metrics.DOCS_SUITE, ks):
            per_k = isinstance(m.cutoffs, str)
            column = m.name if per_k else m.at(k)
            if column in t:  # a measure the file has
                at = t[t["k"] == (k if per_k else max(ks))].set_index(keys)
                wide[m.docs_label + (f"@{k}" if k is not None else "")] = at[column].astype(float)
    wide["queries"] = t[t["k"] == max(ks)].set_index(keys)["queries"].astype(int)
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


LLM_COST = {
    "variant": "answering variant",
    "questions": "questions",
    "telemetry_calls": "LLM calls",
    "cache_hits": "cache hits",
    "tokens_per_question": "LLM tokens / question",
    "llm_latency_per_question_s": "LLM call s / question",
    "wall_s_per_question": "job wall s / question",
}


def render_llm_cost(reports_dir: Path) -> str:
    """What each LLM variant's answers cost a question on the scored split, from the answer jobs' telemetry
    (``leaderboard.telemetry.csv``): calls with their retries and samples, cache hits, tokens and the calls' own
    seconds. A cache hit keeps the latency of the call that made it, so a sampled vote's cost reads against its
    one-sample control's although the control's calls are the vote's sample 0 (its job's wall: the lookups)."""
    t = pd.read_csv(Reports.at(reports_dir).leaderboard_telemetry)
    if "telemetry_calls" not in t:  # no variant had answers to read telemetry from
        return "*The last run has no LLM variant.*\n"
    t = t[t["telemetry_calls"].fillna(0) > 0].sort_values("variant")
    if t.empty:
        return "*The last run has no LLM variant.*\n"
    n = int(t["questions"].max())
    t["tokens_per_question"] = t["tokens_per_question"].round().astype(int)
    for c in ("llm_latency_per_question_s", "wall_s_per_question"):
        t[c] = [fmt(x, 1) for x in t[c]]
    return f"{n} questions, the scored split, by variant.\n\n" + markdown_table(_pick(t, LLM_COST))
