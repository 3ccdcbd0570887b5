"""Report of the retrieval suite: ``reports/retrieval/metrics.csv`` (dataset x variant x k),
one IE@k figure per dataset and ``reports/retrieval/index.md``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline import markdown
from pipeline.io import atomic_write_text
from pipeline.paths import Reports
from pipeline.provenance import write_manifest
from pipeline.report.params import SuiteReportParams, smoke_note
from pipeline.report.render.plots import ie_by_variant

PER_K = ("recall", "precision", "hit", "ie", "char_precision", "char_recall", "tokens")


def suite_runs(score_paths: dict[str, str]) -> list[tuple[str, str, Path]]:
    """(dataset, variant, path) of ``DATASET:VARIANT`` -> scores JSON, in the order of the paths."""
    return [
        (dataset, variant, Path(path))
        for (dataset, variant), path in (
            (name.split(":", 1), path) for name, path in sorted(score_paths.items(), key=lambda kv: kv[1])
        )
    ]


def metrics_table(score_paths: dict[str, str]) -> pd.DataFrame:
    """Long table of the suite's scores (``DATASET:VARIANT`` -> ``results/<dataset>/scores/<variant>.json``)."""
    rows = []
    for dataset, variant, p in suite_runs(score_paths):
        res = json.loads(p.read_text())
        s = res["summary"]
        for k in res["ks"]:
            rows.append(
                {
                    "dataset": dataset,
                    "variant": variant,
                    "k": k,
                    **{m: round(s[f"{m}@{k}"], 4) for m in PER_K},
                    "ndcg@10": round(s["ndcg@10"], 4),
                    "mrr": round(s["mrr"], 4),
                    "queries": s["queries"],
                }
            )
    return pd.DataFrame(rows).sort_values(["dataset", "variant", "k"], kind="stable").reset_index(drop=True)


def index_md(table: pd.DataFrame, config_hash: str, limit: int | None = None) -> str:
    lines = [
        "# Retrieval suite",
        "",
        f"- config hash: `{config_hash}`",
        *([f"- **{smoke_note(limit)}**"] if limit else []),
        "- relevance: a retrieved unit is relevant when it overlaps a gold span of its document;",
        "  IE@k = recall@k x precision@k per query, averaged (SproutRAG's information efficiency)",
        "",
    ]
    for dataset, part in table.groupby("dataset", sort=True):
        cols = [
            "variant",
            "k",
            "recall",
            "precision",
            "ie",
            "char_precision",
            "char_recall",
            "tokens",
            "ndcg@10",
            "mrr",
        ]
        lines += [
            f"## {dataset}",
            "",
            f"![IE@k]({dataset}.png)",
            "",
            *markdown.table_lines(
                ["variant", "k", "recall", "precision", "IE", "char P", "char R", "tokens", "nDCG@10", "MRR"],
                ([f"{r[c]}" for c in cols] for r in part.to_dict("records")),
            ),
            "",
        ]
    return "\n".join(lines)


def build_suite_report(params: SuiteReportParams, score_paths: dict[str, str], reports: str) -> None:
    out = Reports(reports)
    table = metrics_table(score_paths)
    atomic_write_text(out.suite_metrics, table.to_csv(index=False, lineterminator="\n"))
    for dataset, part in table.groupby("dataset", sort=True):
        ie_by_variant(part, dataset, out.suite_figure(dataset))
    atomic_write_text(out.suite_index_md, index_md(table, params.config_hash, params.limit))
    write_manifest(out.suite_metrics, params.hashed, list(score_paths.values()))
