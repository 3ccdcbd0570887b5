"""The scale model's figure (#45 item 5): each stage's cost against corpus size on log-log axes, a line per
stage with its fitted exponent in the legend; and per-query retrieval latency per index kind. Drawn from the
scale bench's file alone (``reports/bench/scale.json``, `make bench-scale`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from pipeline.report.render.plots import save_png_svg

PANELS = (  # (what the bench file keeps, the axis label)
    ("cpu_s", "CPU-s of the job"),
    ("peak_rss_mb", "peak resident memory (MB)"),
    ("output_bytes", "output (bytes)"),
)


def _label(name: str, fit: dict | None) -> str:
    if not fit:
        return f"{name} (no slope)"
    flag = " > 1.1" if fit["superlinear"] else ""
    return f"{name}: k = {fit['exponent']:.2f}{flag}"


def draw_scale(bench: dict, stem: str | Path) -> list[Path]:
    """``<stem>.png`` and ``.svg``: a panel per measured cost and one of query latency, sizes in characters."""
    x = [s["chars"] for s in bench["sizes"]]
    fig, axes = plt.subplots(len(PANELS) + 1, 1, figsize=(9, 3.1 * (len(PANELS) + 1)), layout="constrained")
    for ax, (metric, label) in zip(axes, PANELS):
        for stage, rows in bench["stages"].items():
            ax.plot(x, [r[metric] for r in rows], marker="o", label=_label(stage, bench["fits"][stage].get(metric)))
        ax.set_ylabel(label)
    last = axes[-1]
    for variant, rows in bench["latency"].items():
        kind = bench["index_kinds"][variant]
        last.plot(x, [r["median_ms"] for r in rows], marker="s",
                  label=_label(f"{variant} ({kind})", bench["latency_fits"][variant]))  # fmt: skip
    last.set_ylabel("median ms per query (search)")
    n = len(x)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"corpus characters ({bench['dataset']}, {n} sizes: exponents k from {n} points, rough)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    return save_png_svg(fig, stem)
