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
from matplotlib.text import Text

from pipeline.registry.metrics import primary
from pipeline.report.render.plots import save_png_svg
from pipeline.report.sections import is_labelled
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
    """One WattBot ablation: a panel per metric (each its own axis), a bar per variant with its 95%
    interval, the reference on top; the paired differences on the first metric printed below."""
    metrics = list(dict.fromkeys(stats["metric"]))
    variants = list(dict.fromkeys(stats["variant"]))
    first = metrics[0]
    lines = [diff_text(r) for r in stats[(stats["metric"] == first) & stats["diff"].notna()].to_dict("records")]
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(9.5, 0.3 * len(variants) + 1.5), sharey=True, squeeze=False, layout="constrained"
    )
    ys = np.arange(len(variants))[::-1]
    for ax, metric in zip(axes[0], metrics):
        part = stats[stats["metric"] == metric].set_index("variant").loc[variants].reset_index()
        ax.barh(ys, part["mean"], xerr=_err(part), capsize=2, color=[f"C{j}" for j in range(len(variants))])
        ax.set_xlim(0, 1.05)
        ax.set_title(metric, fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(ys, [v + (" (ref)" if j == 0 else "") for j, v in enumerate(variants)], fontsize=8)
    fig.suptitle(f"{name}: {note}" if note else name, fontsize=10)
    fig.supxlabel("mean over questions (95% CI)", fontsize=9)
    fig.text(  # below the figure's lower edge: bbox_inches="tight" keeps it
        0.01,
        0.0,
        f"paired {first} differences (n={int(stats['n'].iloc[0])}):\n" + "\n".join(lines),
        fontsize=8,
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
        figsize=(2.1 * len(datasets) + 1.5, 0.3 * len(variants) + 1.6 if many else 3.3),
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
            ax.set_yticklabels(variants, fontsize=8)
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
        axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title, fontsize=10)
    return save_png_svg(fig, stem)


def spread_labels(ax, xs, ys, labels, fontsize: int = 8, gap_pt: float = 2.0) -> None:
    """Label points to their right; a label that would overlap one already placed (measured from its
    drawn extent) moves up or down, nearest free place first, with a thin leader line to its point."""
    ax.autoscale_view()
    renderer = ax.figure.canvas.get_renderer()
    placed: list = []
    step = fontsize + gap_pt
    pts = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    for i in np.argsort(pts[:, 1], kind="stable"):
        style = {"xytext": (5, 0), "textcoords": "offset points", "fontsize": fontsize, "va": "center"}
        ann = ax.annotate(labels[i], (xs[i], ys[i]), **style)
        for n in range(1, 60):
            ann.update_positions(renderer)  # the text alone (not its leader line) must be clear
            if not any(Text.get_window_extent(ann, renderer).overlaps(p) for p in placed):
                break
            ann.xyann = (5, step * ((n + 1) // 2) * (1 if n % 2 else -1))
        if ann.xyann[1]:  # moved: drawn again with a leader line to its point
            offset = ann.xyann
            ann.remove()
            arrow = {"arrowstyle": "-", "lw": 0.4, "color": "grey"}
            ann = ax.annotate(labels[i], (xs[i], ys[i]), **{**style, "xytext": offset}, arrowprops=arrow)
        ann.update_positions(renderer)
        placed.append(Text.get_window_extent(ann, renderer).padded(2))


def _interval_rows(point, lo, hi, width: float, row_height: float, **style):
    """One row per item, top to bottom: a dot at ``point`` with its (asymmetric) 95% interval."""
    fig, ax = plt.subplots(figsize=(width, row_height * len(point) + 1.2))
    ys = np.arange(len(point))[::-1]
    ax.errorbar(point, ys, xerr=np.vstack([point - lo, hi - point]).clip(min=0), fmt="o", capsize=3, **style)
    return fig, ax, ys


ROW_INCHES = 0.22  # one comparison per row: room for an 8 pt label


def _difference_panel(ax, part: pd.DataFrame, nrows: int, title: str) -> None:
    """One panel of the forest: a row per comparison, top-aligned in ``nrows`` rows, p-values on the right."""
    ys = np.arange(len(part))[::-1] + nrows - len(part)
    d = part["diff"].to_numpy()
    err = np.vstack([d - part["diff_lo"], part["diff_hi"] - d]).clip(min=0)
    ax.errorbar(d, ys, xerr=err, fmt="o", capsize=3, color="k")
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.set_ylim(-0.7, nrows - 0.3)
    ax.set_yticks(ys, [f"{r['ablation']}: {r['variant']} − {r['reference']}" for r in part.to_dict("records")])
    ax.tick_params(labelsize=8)
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(ys, [f"p={p:.2g}" for p in part["p_value"]], fontsize=8)
    ax.set_title(title, fontsize=9)


def differences_forest(summary: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Every A-vs-B comparison on its headline metric: paired difference, 95% interval, p-value (on the
    right). One panel per dataset and metric, each with its own axis (a score and an IE@k do not share a
    scale), two panels a row, the labelled set's first."""
    keys = list(dict.fromkeys(zip(summary["dataset"], summary["metric"])))
    keys = [k for k in keys if is_labelled(k[0])] + [k for k in keys if not is_labelled(k[0])]
    parts = [summary[(summary["dataset"] == d) & (summary["metric"] == m)] for d, m in keys]
    if not parts:  # the figure is planned from the config: say why it is empty
        fig, ax = plt.subplots(figsize=(6, 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no paired comparison on a headline metric", ha="center", va="center")
        return save_png_svg(fig, stem)
    ncols = min(2, len(parts))
    rows = [max(len(p) for p in parts[r : r + ncols]) for r in range(0, len(parts), ncols)]
    fig = plt.figure(figsize=(9.6, ROW_INCHES * sum(rows) + 0.9 * len(rows) + 0.6), layout="constrained")
    grid = fig.add_gridspec(len(rows), ncols, height_ratios=[n + 3 for n in rows])
    for j, ((dataset, metric), part) in enumerate(zip(keys, parts)):
        _difference_panel(fig.add_subplot(grid[j // ncols, j % ncols]), part, rows[j // ncols], f"{dataset}: {metric}")
    fig.supxlabel("variant minus reference: paired difference (95% bootstrap CI)", fontsize=9)
    fig.suptitle("Ablations: variant minus reference, one panel per dataset and metric", fontsize=10)
    return save_png_svg(fig, stem)


def attribution_grid(classes: pd.DataFrame, types: pd.Series, stem: str | Path) -> list[Path]:
    """Question x variant grid coloured by attribution class: which variant fixed which question."""
    codes = classes.apply(lambda col: col.map({c: i for i, c in enumerate(CLASSES)}))
    fig, ax = plt.subplots(figsize=(0.4 * classes.shape[1] + 3.5, 0.2 * len(classes) + 1.6))
    ax.imshow(
        codes.to_numpy(),
        aspect="auto",
        interpolation="nearest",
        cmap=ListedColormap([CLASS_COLOURS[c] for c in CLASSES]),
        vmin=-0.5,
        vmax=len(CLASSES) - 0.5,
    )
    ax.set_xticks(range(classes.shape[1]))
    ax.set_xticklabels(classes.columns, rotation=90, fontsize=8)
    ax.set_yticks(range(len(classes)))
    ax.set_yticklabels([f"{q} ({types[q]})" for q in classes.index], fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, color=CLASS_COLOURS[c]) for c in CLASSES]
    ax.legend(handles, CLASSES, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title("Per-question attribution", fontsize=10)
    return save_png_svg(fig, stem)


def attribution_counts(counts: pd.DataFrame, by_type: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Left: attribution class counts per variant (stacked); right: share of each class per
    question type, over all (question, variant) outcomes."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 0.35 * len(counts) + 2.4), layout="constrained")
    left = np.zeros(len(counts))
    for c in CLASSES:
        a1.barh(counts.index, counts[c], left=left, color=CLASS_COLOURS[c], label=c)
        left += counts[c].to_numpy()
    a1.invert_yaxis()
    a1.set_xlabel("questions")
    a1.set_title("attribution per variant", fontsize=10)
    a1.tick_params(axis="y", labelsize=8)
    fig.legend(
        handles=[plt.Rectangle((0, 0), 1, 1, color=CLASS_COLOURS[c]) for c in CLASSES],
        labels=list(CLASSES),
        fontsize=8,
        ncol=len(CLASSES) // 2,
        loc="outside lower center",  # below the axis labels, whatever the height
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
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4), sharey=True)
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
    axes[0].set_ylabel(f"{primary().name} score (95% CI)")
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle("Accuracy versus tokens", fontsize=10)
    return save_png_svg(fig, stem)


def leaderboard_ci(board: pd.DataFrame, stem: str | Path) -> list[Path]:
    """Score per answering variant with its 95% interval, best first."""
    fig, ax, ys = _interval_rows(board["score"], board["score_lo"], board["score_hi"], width=7, row_height=0.35)
    ax.set_yticks(ys)
    ax.set_yticklabels(board["variant"], fontsize=8)
    ax.set_xlabel(f"{primary().name} score on train (95% bootstrap CI over questions)")
    ax.set_xlim(0, 1)
    ax.grid(axis="x", alpha=0.3)
    return save_png_svg(fig, stem)


def embedding_map(meta: pd.DataFrame, xy: np.ndarray, variance: list[float], levels, stem: str | Path) -> list[Path]:
    """PCA map of the tree index, one panel per level, colours by document (same axes everywhere)."""
    docs = sorted(meta["doc_id"].unique())
    palette = [plt.get_cmap(c)(i) for c in ("tab20", "tab20b") for i in range(20)]
    colour = {d: palette[i % len(palette)] for i, d in enumerate(docs)}
    fig, axes = plt.subplots(
        1, len(levels), figsize=(2.4 * len(levels) + 0.6, 4.2), sharex=True, sharey=True, layout="constrained"
    )
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
    fig.legend(handles=handles, fontsize=8, ncol=6, loc="outside lower center")
    fig.suptitle("Embedding map of the tree index (PCA, coloured by document)", fontsize=10)
    return save_png_svg(fig, stem)
