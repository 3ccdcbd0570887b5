"""The report's figures, one function each, drawn from tables the report computed from results/.

Every bar or point carries its paired bootstrap 95% interval (columns ``lo``/``hi``); A-vs-B
panels print the paired difference, its interval and the randomisation-test p-value.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap

from pipeline.report.render.plots import save_png_svg
from pipeline.score.attribution import CLASSES, QUESTION_TYPES

CLASS_COLOURS = {
    "correct": "#2ca02c",
    "wrong_citation": "#bcbd22",
    "retrieval_miss": "#d62728",
    "abstained_answerable": "#9467bd",
    "wrong_value": "#ff7f0e",
    "answered_unanswerable": "#8c564b",
}


def _err(part: pd.DataFrame) -> np.ndarray:
    return np.vstack([part["mean"] - part["lo"], part["hi"] - part["mean"]]).clip(min=0)


def diff_text(row) -> str:
    return (
        f"{row['variant']} − {row['reference']}: {row['diff']:+.3f} "
        f"[{row['diff_lo']:+.3f}, {row['diff_hi']:+.3f}], p={row['p_value']:.3g}"
    )


def ablation_bars(stats: pd.DataFrame, name: str, note: str, stem: str | Path) -> list[Path]:
    """One WattBot ablation: each metric a group, each variant a bar with its 95% interval."""
    metrics = list(dict.fromkeys(stats["metric"]))
    variants = list(dict.fromkeys(stats["variant"]))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(metrics) * max(1, len(variants) / 2) + 2), 4.2))
    width = 0.8 / len(variants)
    for j, v in enumerate(variants):
        part = stats[stats["variant"] == v].set_index("metric").loc[metrics].reset_index()
        xs = np.arange(len(metrics)) + (j - (len(variants) - 1) / 2) * width
        ax.bar(xs, part["mean"], width, yerr=_err(part), capsize=2, label=v + (" (ref)" if j == 0 else ""))
    ax.set_xticks(range(len(metrics)))
    ax.set_xticklabels(metrics)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("mean over questions (95% CI)")
    ax.set_title(f"{name}: {note}" if note else name, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside the data
    first = metrics[0]
    lines = [diff_text(r) for r in stats[(stats["metric"] == first) & stats["diff"].notna()].to_dict("records")]
    fig.text(
        0.01,
        -0.02 - 0.035 * len(lines),
        f"paired {first} differences (n={int(stats['n'].iloc[0])}):\n" + "\n".join(lines),
        fontsize=7,
        va="top",
        family="monospace",
    )
    return save_png_svg(fig, stem)


MAX_OVERLAID = 4  # more variants than this per panel overplot: one row per variant instead


def ablation_suite(stats: pd.DataFrame, title: str, stem: str | Path) -> list[Path]:
    """IE@k of retrieval variants on each suite dataset (one panel each) with 95% intervals: lines
    over k for a few variants, or, for many, one row per variant at the largest k (small multiples
    instead of nine overplotted lines)."""
    datasets = sorted(stats["dataset"].unique())
    variants = list(dict.fromkeys(stats["variant"]))
    many = len(variants) > MAX_OVERLAID
    fig, axes = plt.subplots(
        1,
        len(datasets),
        figsize=(3.4 * len(datasets) + 1, 0.3 * len(variants) + 1.6 if many else 3.3),
        squeeze=False,
        sharey=many,
    )
    for ax, d in zip(axes[0], datasets):
        part = stats[stats["dataset"] == d].copy()
        part["k"] = part["metric"].str.split("@").str[1].astype(int)
        if many:
            top = part[part["k"] == part["k"].max()].set_index("variant").loc[variants].reset_index()
            ys = np.arange(len(variants))[::-1]
            ax.errorbar(top["mean"], ys, xerr=_err(top), fmt="o", capsize=2, color="k")
            ax.set_yticks(ys)
            ax.set_yticklabels(variants, fontsize=7)
            ax.set_xlabel(f"IE@{int(part['k'].max())} (95% CI)")
        else:
            for j, v in enumerate(variants):
                pv = part[part["variant"] == v].sort_values("k")
                ax.errorbar(
                    pv["k"] + (j - (len(variants) - 1) / 2) * 0.08,
                    pv["mean"],
                    yerr=_err(pv),
                    marker="o",
                    capsize=2,
                    label=v,
                )
            ax.set_xlabel("k")
            ax.set_xticks(sorted(part["k"].unique()))
        ax.set_title(f"{d} (n={int(part['n'].iloc[0])})", fontsize=9)
    if not many:
        axes[0][0].set_ylabel("IE@k (95% CI)")
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title, fontsize=10)
    return save_png_svg(fig, stem)


def spread_labels(ax, xs, ys, labels, fontsize: int = 6, width_px: float = 90) -> None:
    """Label points to their right, nudging a label up while it would overlap one already placed
    (a thin leader line joins a moved label to its point)."""
    ax.autoscale_view()
    pts = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    to_pt = 72 / ax.figure.dpi
    gap = fontsize * 1.3 / to_pt
    placed: list[tuple[float, float]] = []
    for i in np.argsort(pts[:, 1], kind="stable"):
        x, y = pts[i]
        ly = y
        while any(abs(px - x) < width_px and abs(py - ly) < gap for px, py in placed):
            ly += gap
        placed.append((x, ly))
        ax.annotate(
            labels[i],
            (xs[i], ys[i]),
            xytext=(5, (ly - y) * to_pt),
            textcoords="offset points",
            fontsize=fontsize,
            va="center",
            arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "grey"} if ly != y else None,
        )


def _interval_rows(point, lo, hi, width: float, row_height: float, **style):
    """One row per item, top to bottom: a dot at ``point`` with its (asymmetric) 95% interval."""
    fig, ax = plt.subplots(figsize=(width, row_height * len(point) + 1.2))
    ys = np.arange(len(point))[::-1]
    ax.errorbar(point, ys, xerr=np.vstack([point - lo, hi - point]).clip(min=0), fmt="o", capsize=3, **style)
    return fig, ax, ys


def differences_forest(summary: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Every A-vs-B comparison on its headline metric: paired difference, 95% interval, p-value."""
    fig, ax, ys = _interval_rows(
        summary["diff"], summary["diff_lo"], summary["diff_hi"], width=8, row_height=0.32, color="k"
    )
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.set_yticks(ys)
    ax.set_yticklabels(
        [
            f"{r['ablation']} [{r['dataset']} {r['metric']}]: {r['variant']} − {r['reference']}"
            for r in summary.to_dict("records")
        ],
        fontsize=7,
    )
    for y, r in zip(ys, summary.to_dict("records")):
        ax.annotate(
            f"p={r['p_value']:.2g}",
            (r["diff_hi"], y),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=7,
            va="center",
        )
    ax.set_xlabel("paired difference to the reference (95% bootstrap CI)")
    ax.set_title("Ablations: variant minus reference", fontsize=10)
    return save_png_svg(fig, stem)


def attribution_grid(classes: pd.DataFrame, types: pd.Series, stem: str | Path) -> list[Path]:
    """Question x variant grid coloured by attribution class: which variant fixed which question."""
    codes = classes.apply(lambda col: col.map({c: i for i, c in enumerate(CLASSES)}))
    fig, ax = plt.subplots(figsize=(1.0 * classes.shape[1] + 3.5, 0.16 * len(classes) + 1.6))
    ax.imshow(
        codes.to_numpy(),
        aspect="auto",
        interpolation="nearest",
        cmap=ListedColormap([CLASS_COLOURS[c] for c in CLASSES]),
        vmin=-0.5,
        vmax=len(CLASSES) - 0.5,
    )
    ax.set_xticks(range(classes.shape[1]))
    ax.set_xticklabels(classes.columns, rotation=35, ha="right", fontsize=7)
    ax.set_yticks(range(len(classes)))
    ax.set_yticklabels([f"{q} ({types[q]})" for q in classes.index], fontsize=6)
    handles = [plt.Rectangle((0, 0), 1, 1, color=CLASS_COLOURS[c]) for c in CLASSES]
    ax.legend(handles, CLASSES, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title("Per-question attribution", fontsize=10)
    return save_png_svg(fig, stem)


def attribution_counts(counts: pd.DataFrame, by_type: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Left: attribution class counts per variant (stacked); right: share of each class per
    question type, over all (question, variant) outcomes."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 0.35 * len(counts) + 2.0))
    left = np.zeros(len(counts))
    for c in CLASSES:
        a1.barh(counts.index, counts[c], left=left, color=CLASS_COLOURS[c], label=c)
        left += counts[c].to_numpy()
    a1.invert_yaxis()
    a1.set_xlabel("questions")
    a1.set_title("attribution per variant", fontsize=10)
    a1.tick_params(axis="y", labelsize=7)
    fig.legend(
        handles=[plt.Rectangle((0, 0), 1, 1, color=CLASS_COLOURS[c]) for c in CLASSES],
        labels=list(CLASSES),
        fontsize=7,
        ncol=len(CLASSES),
        loc="lower center",
        bbox_to_anchor=(0.5, -0.06),
    )
    types = [t for t in QUESTION_TYPES if t in by_type.index]
    share = by_type.loc[types, list(CLASSES)]
    share = share.div(share.sum(axis=1).replace(0, 1), axis=0)
    left = np.zeros(len(types))
    for c in CLASSES:
        a2.barh(types, share[c], left=left, color=CLASS_COLOURS[c])
        left += share[c].to_numpy()
    a2.invert_yaxis()
    a2.tick_params(axis="y", labelsize=8)
    a2.set_xlabel("share of (question, variant) outcomes")
    a2.set_title(
        "per question type (questions: " + ", ".join(f"{t} {int(by_type.loc[t, 'questions'])}" for t in types) + ")",
        fontsize=8,
    )
    return save_png_svg(fig, stem)


def pareto(cost: pd.DataFrame, front_tokens: pd.DataFrame, front_context: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Score (95% CI) against LLM tokens per question and against context tokens shown, with the
    Pareto fronts (extractive variants spend 0 LLM tokens)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, x, front, label in (
        (axes[0], "tokens_per_question", front_tokens, "LLM tokens per question"),
        (axes[1], "context_tokens", front_context, "context tokens per question"),
    ):
        ax.errorbar(
            cost[x],
            cost["score"],
            yerr=np.vstack([cost["score"] - cost["score_lo"], cost["score_hi"] - cost["score"]]).clip(min=0),
            fmt="o",
            capsize=2,
            color="tab:blue",
        )
        ax.step(front[x], front["score"], where="post", color="tab:red", lw=1, label="Pareto front")
        if x == "tokens_per_question":  # LLM tokens span 0 (extractive) to thousands
            ax.set_xscale("symlog", linthresh=100)
            ax.set_xlim(-10, max(1000.0, float(cost[x].max()) * 1.5))
        ax.set_xlabel(label)
        spread_labels(ax, cost[x].to_numpy(), cost["score"].to_numpy(), list(cost["variant"]))
    axes[0].set_ylabel("wattbot2025 score (95% CI)")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle("Accuracy versus tokens", fontsize=10)
    return save_png_svg(fig, stem)


def leaderboard_ci(board: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Score per answering variant with its 95% interval, best first."""
    fig, ax, ys = _interval_rows(board["score"], board["score_lo"], board["score_hi"], width=7, row_height=0.35)
    ax.set_yticks(ys)
    ax.set_yticklabels(board["variant"], fontsize=8)
    ax.set_xlabel("wattbot2025 score on train (95% bootstrap CI over questions)")
    ax.set_xlim(0, 1)
    return save_png_svg(fig, stem)


def embedding_map(meta: pd.DataFrame, xy: np.ndarray, variance: list[float], levels, stem: str | Path) -> list[Path]:
    """PCA map of the tree index, one panel per level, colours by document (same axes everywhere)."""
    docs = sorted(meta["doc_id"].unique())
    palette = [plt.get_cmap(c)(i) for c in ("tab20", "tab20b") for i in range(20)]
    colour = {d: palette[i % len(palette)] for i, d in enumerate(docs)}
    fig, axes = plt.subplots(1, len(levels), figsize=(4 * len(levels), 4.2), sharex=True, sharey=True)
    for ax, level in zip(np.atleast_1d(axes), levels):
        m = (meta["level"] == level).to_numpy()
        ax.scatter(
            xy[m, 0],
            xy[m, 1],
            s=60 if level == "document" else (12 if level == "section" else 3),
            c=[colour[d] for d in meta.loc[m, "doc_id"]],
            alpha=0.9 if level == "document" else 0.5,
            linewidths=0,
        )
        ax.set_title(f"{level} (n={int(m.sum())})", fontsize=9)
        ax.set_xlabel(f"PC1 ({variance[0]:.1%})")
    np.atleast_1d(axes)[0].set_ylabel(f"PC2 ({variance[1]:.1%})")
    handles = [plt.Line2D([], [], marker="o", ls="", color=colour[d], label=d) for d in docs]
    fig.legend(handles=handles, fontsize=6, ncol=8, loc="lower center", bbox_to_anchor=(0.5, -0.18))
    fig.suptitle("Embedding map of the tree index (PCA, coloured by document)", fontsize=10)
    return save_png_svg(fig, stem)
