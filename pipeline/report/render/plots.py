"""Figures, one function each, reproducible from the results files alone."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.io import atomic_write_bytes  # noqa: E402
from pipeline.report.render.figure_check import check_legible  # noqa: E402

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


def score_by_variant(board: pd.DataFrame, path: str | Path, profile: str = "wattbot2025") -> None:
    """Overall score and its components per answering variant: one panel per metric, each with its own
    axis, variants in the board's order (best first) down the shared rows."""
    comps = ["score", "value", "ref", "na"]
    fig, axes = plt.subplots(1, len(comps), figsize=(9.5, 0.28 * len(board) + 1.4), sharey=True, layout="constrained")
    ys = list(range(len(board)))[::-1]
    for ax, comp in zip(axes, comps):
        ax.barh(ys, board[comp], color="tab:blue" if comp == "score" else "tab:grey")
        ax.set_xlim(0, 1.05)
        ax.set_title(comp, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(board["variant"], fontsize=8)
    fig.supxlabel(f"{profile} on the scored split (train)", fontsize=9)
    fig.suptitle("WattBot score and its components by answering variant", fontsize=10)
    save(fig, path)


def doc_recall_by_variant(table: pd.DataFrame, path: str | Path, ks=(1, 3, 5, 10)) -> None:
    """Document recall@k of the gold ref_ids per retrieval variant (WattBot train)."""
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


def ie_by_variant(table: pd.DataFrame, dataset: str, path: str | Path) -> None:
    """IE@k, recall@k and precision@k per retrieval variant for one dataset (a panel, own axis, each)."""
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.2), sharex=True, layout="constrained")
    for ax, metric in zip(axes, ("ie", "recall", "precision")):
        for variant, part in table.groupby("variant", sort=True):
            ax.plot(part["k"], part[metric], marker="o", label=variant)
        ax.set_title(f"{metric}@k")
        ax.set_xlabel("k")
        ax.set_xticks(sorted(table["k"].unique()))
    axes[0].set_ylabel(dataset)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=8, loc="outside right upper")
    fig.suptitle(f"Retrieval suite: {dataset}")
    save(fig, path)
