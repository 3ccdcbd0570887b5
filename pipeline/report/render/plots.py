"""Figures, one function each, reproducible from the results files alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.io import atomic_write_bytes  # noqa: E402
from pipeline.report.render.figure_check import check_legible  # noqa: E402
from pipeline.report.sections import SPLIT_COLUMN  # noqa: E402

# No timestamps or version strings inside the files: reruns stay byte-identical.
PNG_META = {"Software": None}
SVG_META = {"Date": None, "Creator": None}
META = {"png": PNG_META, "svg": SVG_META}
DPI = 120  # the saved size: figure_check measures the texts at it
matplotlib.rcParams["svg.hashsalt"] = "wattbench"  # stable element ids in SVGs


def save_figure(fig, stem: str | Path, formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """Check that ``fig`` is legible at the saved size (figure_check.py: raises, naming the figure and
    its texts), then write ``<stem>.<fmt>`` for each format (free of timestamps); return the paths.
    Every figure of the report is written here, so every one is checked."""
    import io

    check_legible(fig, Path(stem).name, DPI)
    out = []
    for fmt in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=DPI, bbox_inches="tight", metadata=META[fmt])
        path = Path(f"{stem}.{fmt}")
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    plt.close(fig)
    return out


def save(fig, path: str | Path) -> None:
    """``fig`` as the one PNG ``path`` (checked, like every figure)."""
    save_figure(fig, Path(path).with_suffix(""), ("png",))


def save_png_svg(fig, stem: str | Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` (both checked and free of timestamps); return the two paths."""
    return save_figure(fig, stem)


def score_by_variant(board: pd.DataFrame, path: str | Path, comps: Sequence[str], profile: str) -> None:
    """Overall score and its components (``comps``, the score first) per answering variant: one panel per
    metric, each with its own axis, variants in the board's order (best first) down the shared rows."""
    fig, axes = plt.subplots(
        1, len(comps), figsize=(9.5, 0.28 * len(board) + 1.4), sharey=True, layout="constrained", squeeze=False
    )
    axes = axes[0]
    ys = list(range(len(board)))[::-1]
    for ax, comp in zip(axes, comps):
        ax.barh(ys, board[comp], color="tab:blue" if comp == comps[0] else "tab:grey")
        ax.set_xlim(0, 1.05)
        ax.set_title(comp, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(board["variant"], fontsize=8)
    fig.supxlabel(f"{profile} on the scored split (train)", fontsize=9)
    fig.suptitle("WattBot score and its components by answering variant", fontsize=10)
    save(fig, path)


def doc_recall_by_variant(table: pd.DataFrame, path: str | Path, ks: Sequence[int]) -> None:
    """Document recall@k of the gold ref_ids per retrieval variant (WattBot train), at the cutoffs ``ks``."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for row in table.to_dict("records"):
        ax.plot(ks, [row[f"doc_recall@{k}"] for k in ks], marker="o", label=row["retrieval"])
    ax.set_xticks(list(ks))
    ax.set_xlabel("k (distinct documents)")
    ax.set_ylabel("gold document recall@k")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: the lines stay visible
    ax.set_title("WattBot train: retrieval")
    save(fig, path)


def ie_by_variant(table: pd.DataFrame, dataset: str, path: str | Path, panels: Sequence[str]) -> None:
    """Per retrieval variant for one dataset, a panel (own axis) per measure of ``panels`` against k (the suite
    figure's: IE@k, then recall@k and precision@k)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(9.5, 3.2), sharex=True, layout="constrained", squeeze=False)
    axes = axes[0]
    for ax, metric in zip(axes, panels):
        for variant, part in table.groupby("variant", sort=True):
            ax.plot(part["k"], part[metric], marker="o", label=variant)
        ax.set_title(f"{metric}@k")
        ax.set_xlabel("k")
        ax.set_xticks(sorted(table["k"].unique()))
    axes[0].set_ylabel(dataset)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=8, loc="outside right upper")
    fig.suptitle(f"Retrieval suite: {dataset}")
    save(fig, path)


def score_by_type(table: pd.DataFrame, stem: str | Path, profile: str = "wattbot2025") -> list[Path]:
    """Small multiples of the score per question type (pipeline/report/pages/question_types.py:figure_table):
    a panel per block (row) and type (column), n in its title; variants down the shared axis (``rank`` 0 at
    the top), each a dot with its 95% interval, red where the whole interval lies below the variant's overall
    score on the block (grey tick). With no type flagged, one panel says so."""
    blocks = list(dict.fromkeys(table[SPLIT_COLUMN])) if len(table) else []
    types = list(dict.fromkeys(table["type"])) if len(table) else []
    if not blocks:
        fig, ax = plt.subplots(figsize=(5, 1.2))
        ax.set_axis_off()
        ax.text(0.5, 0.5, "the labels flag no question type", ha="center", va="center", fontsize=10)
        return save_png_svg(fig, stem)
    names = table.drop_duplicates("variant").sort_values("rank")["variant"].tolist()
    height = 0.22 * len(names) + 0.9
    fig, axes = plt.subplots(
        len(blocks),
        len(types),
        figsize=(2.1 * len(types) + 1.6, height * len(blocks) + 0.7),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    ys = {v: len(names) - 1 - i for i, v in enumerate(names)}
    for r, block in enumerate(blocks):
        for c, kind in enumerate(types):
            ax = axes[r][c]
            part = table[(table[SPLIT_COLUMN] == block) & (table["type"] == kind)]
            ns = sorted({int(n) for n in part["n"]})
            n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
            ax.set_title(f"{block}: {kind} (n={n})" if len(blocks) > 1 else f"{kind} (n={n})", fontsize=9)
            for row in part[part["n"] > 0].to_dict("records"):
                y = ys[row["variant"]]
                ax.plot([row["overall"]], [y], marker="|", markersize=9, color="grey")
                colour = "tab:red" if row["below"] else "tab:blue"
                ax.plot([row["score_lo"], row["score_hi"]], [y, y], color=colour, linewidth=1.6)
                ax.plot([row["score"]], [y], marker="o", markersize=4, color=colour)
            if not (part["n"] > 0).any():
                ax.text(0.5, 0.5, "none labelled", transform=ax.transAxes, ha="center", va="center", fontsize=9)
            ax.set_xlim(-0.02, 1.02)
            ax.set_xticks([0, 0.5, 1])
            ax.tick_params(labelsize=8)
            ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(list(ys.values()))
    axes[0][0].set_yticklabels(list(ys), fontsize=8)
    axes[0][0].set_ylim(-0.6, len(names) - 0.4)
    fig.supxlabel(
        f"{profile} score per question type: dot and 95% interval; grey tick: the variant's overall score; "
        "red: interval entirely below it",
        fontsize=8,
    )
    fig.suptitle("WattBot score by question type (labelled test questions)", fontsize=10)
    return save_png_svg(fig, stem)
