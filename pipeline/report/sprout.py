"""SproutRAG report: IE@k on the retrieval suite and WattBot document recall against beam width
(``reports/retrieval/sprout_beam.{png,csv}``), and one WattBot document's tree (merge order,
heights, spans; the document with closest to 32 leaves) as ``reports/wattbot/sprout_tree.json``
for a later drawing."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline.provenance import atomic_write_json, atomic_write_text, read_jsonl, write_manifest


def beam_table(params: dict, score_paths: list[str], wattbot_paths: list[str], gold_path: str | None) -> pd.DataFrame:
    from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics

    rows = []
    for path in sorted(score_paths):
        p = Path(path)
        dataset, variant = p.parents[1].name, p.stem
        s = json.loads(p.read_text())["summary"]
        for k in params["ks"]:
            rows.append({"dataset": dataset, "variant": variant, "beam_width": params["sweep"][variant],
                         "metric": f"ie@{k}", "value": round(s[f"ie@{k}"], 4)})
    if gold_path and wattbot_paths:
        gold = pd.read_csv(gold_path, dtype=str, keep_default_na=False)
        for path in sorted(wattbot_paths):
            variant = Path(path).parent.name
            _, summary = wattbot_retrieval_metrics(read_jsonl(path), gold)
            for m in ("doc_recall@5", "doc_recall@10", "doc_hit@1"):
                rows.append({"dataset": "wattbot", "variant": variant, "beam_width": params["sweep"][variant],
                             "metric": m, "value": summary[m]})
    return pd.DataFrame(rows).sort_values(["dataset", "metric", "beam_width"], kind="stable").reset_index(drop=True)


def beam_figure(table: pd.DataFrame, k: int, path: str | Path) -> None:
    from pipeline.report.figures import plt, save

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    suite = table[(table["dataset"] != "wattbot") & (table["metric"] == f"ie@{k}")]
    for dataset, part in suite.groupby("dataset", sort=True):
        left.plot(part["beam_width"], part["value"], marker="o", label=dataset)
    left.set_xlabel("beam width b")
    left.set_ylabel(f"IE@{k}")
    left.set_ylim(bottom=0)
    left.set_title(f"Retrieval suite: IE@{k} vs beam width")
    wb = table[table["dataset"] == "wattbot"]
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


def build_sprout_report(params: dict, score_paths: list[str], wattbot_paths: list[str], gold_path: str | None,
                        index_path: str | None, out_dir: str) -> None:
    from pipeline.index.store import IndexReader
    from pipeline.sprout.store import dump_tree

    out = Path(out_dir)
    table = beam_table(params, score_paths, wattbot_paths, gold_path)
    atomic_write_text(out / "retrieval" / "sprout_beam.csv", table.to_csv(index=False, lineterminator="\n"))
    beam_figure(table, max(params["ks"]), out / "retrieval" / "sprout_beam.png")
    write_manifest(out / "retrieval" / "sprout_beam.csv", params, list(score_paths) + list(wattbot_paths))
    if index_path:
        reader = IndexReader(index_path)
        # a drawable tree: the document whose leaf count is closest to 32
        doc = reader.db.execute("SELECT doc_id FROM nodes WHERE level = 'chunk' GROUP BY doc_id "
                                "ORDER BY abs(count(*) - 32), doc_id LIMIT 1").fetchone()[0]
        reader.close()
        atomic_write_json(out / "wattbot" / "sprout_tree.json", dump_tree(index_path, doc))
