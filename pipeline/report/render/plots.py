"""Figures, one function each, reproducible from the results files alone."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.io import atomic_write_bytes  # noqa: E402

# No timestamps or version strings inside the files: reruns stay byte-identical.
PNG_META = {"Software": None}
SVG_META = {"Date": None, "Creator": None}
matplotlib.rcParams["svg.hashsalt"] = "wattbench"  # stable element ids in SVGs


def save(fig, path: str | Path) -> None:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight", metadata=PNG_META)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def save_png_svg(fig, stem: str | Path) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` (both free of timestamps); return the two paths."""
    import io

    out = []
    for fmt, meta in (("png", PNG_META), ("svg", SVG_META)):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=120, bbox_inches="tight", metadata=meta)
        path = Path(f"{stem}.{fmt}")
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    plt.close(fig)
    return out


def score_by_variant(board: pd.DataFrame, path: str | Path, profile: str = "wattbot2025") -> None:
    """Overall score and its components per answering variant (the run's own baselines, bm25 among
    them, are bars like any other: no number from elsewhere is drawn in)."""
    comps = ["score", "value", "ref", "na"]
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(board) + 2), 3.6))
    width = 0.8 / len(comps)
    for i, comp in enumerate(comps):
        xs = [x + (i - 1.5) * width for x in range(len(board))]
        ax.bar(xs, board[comp], width, label=comp)
    ax.set_xticks(range(len(board)))
    ax.set_xticklabels(board["variant"], rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"{profile} on train_QA")
    ax.set_title("WattBot score by answering variant")
    ax.legend(fontsize=7, ncol=3, loc="upper left")
    save(fig, path)


def doc_recall_by_variant(table: pd.DataFrame, path: str | Path, ks=(1, 3, 5, 10)) -> None:
    """Document recall@k of the gold ref_ids per retrieval variant (WattBot train)."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for row in table.to_dict("records"):
        ax.plot(ks, [row[f"doc_recall@{k}"] for k in ks], marker="o", label=row["retrieval"])
    ax.axhline(0.92, color="k", ls=":", lw=1, label="baseline hit@1 (0.92)")
    ax.set_xticks(list(ks))
    ax.set_xlabel("k (distinct documents)")
    ax.set_ylabel("gold document recall@k")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    ax.set_title("WattBot train: retrieval")
    save(fig, path)


def ie_by_variant(table: pd.DataFrame, dataset: str, path: str | Path) -> None:
    """IE@k, recall@k and precision@k per retrieval variant for one dataset."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), sharex=True)
    for ax, metric in zip(axes, ("ie", "recall", "precision")):
        for variant, part in table.groupby("variant", sort=True):
            ax.plot(part["k"], part[metric], marker="o", label=variant)
        ax.set_title(f"{metric}@k")
        ax.set_xlabel("k")
        ax.set_xticks(sorted(table["k"].unique()))
    axes[0].set_ylabel(dataset)
    axes[-1].legend(fontsize=7)
    fig.suptitle(f"Retrieval suite: {dataset}")
    save(fig, path)
