"""The ensemble-size curve: how the score of a sampled LLM variant's vote grows with its number of samples.

KohakuRAG's ensemble is N sampled LLM answers voted with a blank filter (issue #33 item 4), so the
members are a variant's samples (``samples: n``, temperature > 0; pipeline/answer/ensemble.py's
``sample_members``). For every size k = 1..n, sub-ensembles of k samples are voted with the
variant's own rule (samples kept in sample order, so ties still go to the earlier sample; values
compared normalised, as the variant compares them) and scored per question with the WattBot metric.
When there are more k-subsets than ``max_subsets`` a seeded sample of distinct subsets is drawn. A
question's score at size k is its mean over the subsets, so the curve is the expected score of a vote of k
random samples; each
size's interval is the percentile bootstrap 95% over questions (pipeline/report/stats/resampling.py), its
difference against k = 1 the paired sign-flip test's p and the interval that is its inversion
(pipeline/report/stats/signflip.py).
"""

from __future__ import annotations

import io
from dataclasses import asdict
from itertools import combinations
from math import comb
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import markdown
from pipeline.answer.ensemble import Member, vote_config, vote_members
from pipeline.answer.submission import COLUMNS as KAGGLE_COLUMNS
from pipeline.answer.submission import submission_frame
from pipeline.answer.vote import VoteConfig, VoteSettings
from pipeline.paths import Reports
from pipeline.registry import metrics
from pipeline.report.params import Resampling
from pipeline.report.render.plots import save_png_svg
from pipeline.report.stats.ablation import flip_settings
from pipeline.report.stats.resampling import bootstrap_mean
from pipeline.report.stats.signflip import paired_test
from pipeline.score.wattbot import per_question

COLUMNS = [
    "ensemble",
    "k",
    "subsets",
    "score",
    "lo",
    "hi",
    "diff_vs_k1",
    "diff_lo",
    "diff_hi",
    "p_vs_k1",
    "subset_min",
    "subset_max",
]


def subsets_of_size(n: int, k: int, max_subsets: int, seed: int) -> list[tuple[int, ...]]:
    """Every k-subset of range(n) when there are at most ``max_subsets``, else that many distinct
    ones drawn with a generator seeded by (seed, n, k); each subset sorted (config order)."""
    if not 1 <= k <= n:
        raise ValueError(f"subset size {k} not in 1..{n}")
    if comb(n, k) <= max_subsets:
        return list(combinations(range(n), k))
    rng = np.random.default_rng([seed, n, k])
    seen: dict[tuple[int, ...], None] = {}
    while len(seen) < max_subsets:
        seen.setdefault(tuple(sorted(int(i) for i in rng.choice(n, size=k, replace=False))), None)
    return sorted(seen)


def score_votes(members: list[Member], cfg: VoteConfig, gold: pd.DataFrame) -> pd.Series:
    """Per-question WattBot score (indexed by id) of ``members`` voted with ``cfg``; the submission
    goes through CSV text and pandas defaults, exactly as the ``evaluate`` rule reads it."""
    voted = vote_members(members, cfg)
    if voted and voted[0].row is not None:  # KohakuRAG's vote: its rows are the submission
        return _score_submission(pd.DataFrame([v.row for v in voted], columns=list(KAGGLE_COLUMNS)), gold)
    first = members[0].rows
    questions = pd.DataFrame(
        [
            {"id": v.id, "question": first[v.id].get("question", ""), "answer_unit": first[v.id].get("answer_unit", "")}
            for v in voted
        ]
    )
    return _score_submission(submission_frame(questions, [{"id": v.id, **asdict(v.answer)} for v in voted], {}), gold)


def _score_submission(sub: pd.DataFrame, gold: pd.DataFrame) -> pd.Series:
    text = sub.to_csv(index=False, lineterminator="\n")
    pq = per_question(gold, pd.read_csv(io.StringIO(text)), metrics.primary().name)
    return pq.set_index(pq["id"].astype(str))[metrics.PRIMARY]


def size_curve(
    name: str, members: list[Member], vote: VoteSettings, gold: pd.DataFrame, rep: Resampling, max_subsets: int
) -> pd.DataFrame:
    """One row per size k = 1..n (see the module docstring); ``gold`` read with pandas defaults."""
    cfg = vote_config(vote, normalise_default=True)  # as a sampled variant votes (VoteSettings.normalise)
    n = len(members)
    ids = [str(i) for i in gold["id"]]
    per_k, spread = [], []
    for k in range(1, n + 1):
        subsets = subsets_of_size(n, k, max_subsets, rep.seed)
        scores = np.column_stack(
            [score_votes([members[i] for i in s], cfg, gold).reindex(ids).to_numpy(float) for s in subsets]
        )
        if np.isnan(scores).any():
            raise ValueError(f"ensemble '{name}': a member does not answer every scored question")
        # rounded: a mean of equal scores (0.1 three times) is not always that score in floats, and the
        # paired test would read that last-bit noise as a difference of one sign on every question
        per_k.append((len(subsets), scores.mean(axis=1).round(12)))
        spread.append((float(scores.mean(axis=0).min()), float(scores.mean(axis=0).max())))
    matrix = np.column_stack([s for _, s in per_k])
    rows = []
    for j, ((count, col), (lo_s, hi_s)) in enumerate(zip(per_k, spread)):
        ci = bootstrap_mean(col, rep.bootstrap, rep.seed)
        d = paired_test(col, matrix[:, 0], settings=flip_settings(rep))  # k = 1 against itself: 0, p = 1
        rows.append([name, j + 1, count, ci.mean, ci.lo, ci.hi, d.estimate, d.lo, d.hi, d.p, lo_s, hi_s])
    return pd.DataFrame(rows, columns=COLUMNS).round(4)


def draw_curve(curve: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Score against ensemble size with the 95% interval, and the range of single subsets."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    k = curve["k"].to_numpy()
    ax.fill_between(k, curve["subset_min"], curve["subset_max"], color="#ddd", label="range over subsets")
    ax.errorbar(
        k,
        curve["score"],
        yerr=[curve["score"] - curve["lo"], curve["hi"] - curve["score"]],
        marker="o",
        capsize=3,
        color="#1f77b4",
        label="mean over subsets, 95% CI",
    )
    ax.set_xticks(k)
    ax.set_xlabel("samples in the vote (k)")
    ax.set_ylabel("WattBot score (train)")
    ax.set_title(f"Ensemble size: {curve['ensemble'].iloc[0]}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return save_png_svg(fig, stem)


def render(reports_dir: Path) -> str:
    """The generated block of docs/ensembles.md: the curve table from reports/wattbot/ensemble_size.csv."""
    path = Path(Reports.at(reports_dir).ensemble_size)
    if not path.exists():
        return f"(no {path} yet: run the `figures` rule)"
    df = pd.read_csv(path)
    if df.empty:
        return "(no sampled LLM variant (samples > 1) in the grid)"
    rows = (
        [
            r.ensemble,
            r.k,
            r.subsets,
            f"{r.score:.3f} [{r.lo:.3f}, {r.hi:.3f}]",
            f"{r.diff_vs_k1:+.3f} [{r.diff_lo:+.3f}, {r.diff_hi:+.3f}]",
            f"{r.p_vs_k1:.3g}",
        ]
        for r in df.itertuples(index=False)
    )
    return markdown.table(["ensemble", "k", "subsets", "score [95% CI]", "vs k=1 [95% CI]", "p"], rows)
