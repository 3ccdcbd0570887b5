"""SproutRAG report: IE@k on the retrieval suite and WattBot document recall against beam width
(``reports/retrieval/sprout_beam.{png,csv}``), and one WattBot document's tree (merge order,
heights, spans; the document with closest to 32 leaves) as ``reports/wattbot/sprout_tree.json``,
drawn as a dendrogram in ``reports/wattbot/sprout_tree.{png,svg}`` so a reader sees which chunks the
attention merged first."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline.io import atomic_write_json, atomic_write_text, read_jsonl
from pipeline.paths import Reports
from pipeline.provenance import write_manifest
from pipeline.registry import metrics
from pipeline.registry.metrics import DOCUMENTS, SUITE
from pipeline.report.params import SproutReportParams
from pipeline.report.sections import LABELLED_SET, labelled_rows


def beam_table(
    params: SproutReportParams, score_paths: dict[str, str], wattbot_paths: dict[str, str], gold_path: str | None
) -> pd.DataFrame:
    """``score_paths``: ``DATASET:VARIANT`` -> suite scores JSON; ``wattbot_paths``: variant -> WattBot retrieval run."""
    from pipeline.report.pages.suite import suite_runs
    from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics

    rows = []
    suite_metrics = metrics.columns(metrics.SPROUT, [SUITE], params.ks, params.metrics)
    for dataset, variant, p in suite_runs(score_paths):
        s = json.loads(p.read_text())["summary"]
        for m in suite_metrics:
            rows.append(
                {
                    "dataset": dataset,
                    "variant": variant,
                    "beam_width": params.sweep[variant],
                    "metric": m,
                    "value": round(s[m], 4),
                }
            )
    if gold_path and wattbot_paths:
        gold = pd.read_csv(gold_path, dtype=str, keep_default_na=False)
        for variant, path in sorted(wattbot_paths.items(), key=lambda kv: kv[1]):
            _, summary = wattbot_retrieval_metrics(read_jsonl(path), gold)
            for m in metrics.columns(metrics.SPROUT, [DOCUMENTS], pick=params.metrics):
                rows.append(
                    {
                        "dataset": LABELLED_SET,
                        "variant": variant,
                        "beam_width": params.sweep[variant],
                        "metric": m,
                        "value": summary[m],
                    }
                )
    return pd.DataFrame(rows).sort_values(["dataset", "metric", "beam_width"], kind="stable").reset_index(drop=True)


def beam_figure(table: pd.DataFrame, k: int, path: str | Path) -> None:
    from pipeline.report.render.plots import plt, save

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    suite = table[~labelled_rows(table["dataset"]) & (table["metric"] == f"ie@{k}")]
    for dataset, part in suite.groupby("dataset", sort=True):
        left.plot(part["beam_width"], part["value"], marker="o", label=dataset)
    left.set_xlabel("beam width b")
    left.set_ylabel(f"IE@{k}")
    left.set_ylim(bottom=0)
    left.set_title(f"Retrieval suite: IE@{k} vs beam width")
    wb = table[labelled_rows(table["dataset"])]
    for metric, part in wb.groupby("metric", sort=True):
        right.plot(part["beam_width"], part["value"], marker="o", label=metric)
    right.set_xlabel("beam width b")
    right.set_ylim(0, 1.05)
    right.set_title("WattBot train: gold document retrieved")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        if ax.has_data():
            ax.legend(fontsize=8)
    save(fig, path)


def tree_layout(tree: dict) -> tuple[dict[int, float], dict[int, int], list[tuple[int, int]]]:
    """x of every node (leaves in document order, a parent midway between its children), its merge
    rank (0 = the first pair merged; leaves have none) and the parent-child edges."""
    nodes = {n["node"]: n for n in tree["nodes"]}
    x: dict[int, float] = {i: float(n["leaf_lo"]) for i, n in nodes.items() if n["left"] < 0}
    internal = sorted((n for n in nodes.values() if n["left"] >= 0), key=lambda n: n["node"])
    for n in internal:  # node ids grow with merge order: children come first
        x[n["node"]] = (x[n["left"]] + x[n["right"]]) / 2
    rank = {n["node"]: i for i, n in enumerate(internal)}
    edges = [(n["node"], c) for n in internal for c in (n["left"], n["right"])]
    return x, rank, edges


def tree_figure(tree: dict, stem: str | Path) -> None:
    """Dendrogram: leaves (two-sentence chunks) along the document, each merge at its order; early
    merges (low) joined the chunks the encoder's attention tied most strongly."""
    from pipeline.report.render.plots import plt, save_png_svg

    nodes = {n["node"]: n for n in tree["nodes"]}
    x, rank, edges = tree_layout(tree)
    y = {i: (rank[i] + 1 if i in rank else 0) for i in nodes}
    fig, ax = plt.subplots(figsize=(10, 4.5))
    cmap = plt.get_cmap("viridis")
    top = max(rank.values(), default=0) + 1
    for parent, child in edges:
        colour = cmap(rank[parent] / top)
        ax.plot([x[child], x[child], x[parent]], [y[child], y[parent], y[parent]], color=colour, lw=1)
    leaves = sorted(i for i in nodes if i not in rank)
    ax.scatter([x[i] for i in leaves], [0] * len(leaves), s=8, color="black", zorder=3)
    ax.set_xlabel(f"chunk (two sentences) in document order — {tree['doc_id']}, {len(leaves)} chunks")
    ax.set_ylabel("merge order (1 = first merged)")
    ax.set_title(f"SproutRAG tree of {tree['doc_id']}: attention-guided merges (colour = merge order)")
    ax.grid(alpha=0.2)
    save_png_svg(fig, stem)


def build_sprout_report(
    params: SproutReportParams,
    score_paths: dict[str, str],
    wattbot_paths: dict[str, str],
    gold_path: str | None,
    index_path: str | None,
    reports: str,
) -> None:
    from pipeline.index_structures.store import IndexReader
    from pipeline.sprout.store import dump_tree

    out = Reports(reports)
    table = beam_table(params, score_paths, wattbot_paths, gold_path)
    atomic_write_text(out.sprout_beam_csv, table.to_csv(index=False, lineterminator="\n"))
    beam_figure(table, max(params.ks), out.sprout_beam_png)
    write_manifest(out.sprout_beam_csv, params.hashed, list(score_paths.values()) + list(wattbot_paths.values()))
    if index_path:
        reader = IndexReader(index_path)
        # a drawable tree: the document whose leaf count is closest to 32
        doc = reader.db.execute(
            "SELECT doc_id FROM nodes WHERE level = 'chunk' GROUP BY doc_id ORDER BY abs(count(*) - 32), doc_id LIMIT 1"
        ).fetchone()[0]
        reader.close()
        tree = dump_tree(index_path, doc)
        atomic_write_json(out.sprout_tree("json"), tree)
        tree_figure(tree, out.sprout_tree())
