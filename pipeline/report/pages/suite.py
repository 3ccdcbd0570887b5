"""Report of the retrieval suite: ``reports/retrieval/metrics.csv`` (dataset x variant x k),
one IE@k figure per dataset and ``reports/retrieval/index.md``.

Their columns are the suite's registered measures (pipeline/registry/metrics.py) each shows: a measure at every
k of ``benchmarks.ks`` is a column whose row gives k; one at a fixed cutoff (nDCG@10) or none (MRR) is a
column of its own, the same on each row."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline import markdown
from pipeline.io import atomic_write_text
from pipeline.paths import Reports
from pipeline.provenance import write_manifest
from pipeline.registry import metrics
from pipeline.registry.metrics import EVERYTHING, SUITE, Pick
from pipeline.report.params import SuiteReportParams, smoke_note
from pipeline.report.render.plots import ie_by_variant


@dataclass(frozen=True)
class LongColumn:
    """A column of the suite's long table: its name, its header on the page and its key in a scores summary
    (``{k}``: the row's cutoff)."""

    column: str
    header: str
    key: str


def per_k(m: metrics.Measure) -> bool:
    """Whether ``m`` is computed at every k of ``benchmarks.ks`` (a row per k) rather than at cutoffs of its own."""
    return isinstance(m.cutoffs, str)


def long_columns(view: str, pick: Pick = EVERYTHING) -> list[LongColumn]:
    """The suite measures ``view`` shows, as columns of the long table."""
    out = []
    for m in metrics.measures(view, [SUITE], pick):
        if per_k(m):
            out.append(LongColumn(m.name, m.page_label, f"{m.name}@{{k}}"))
        else:
            out += [LongColumn(m.at(k), m.page_label + (f"@{k}" if k else ""), m.at(k)) for k in pick.cutoffs(m, view)]
    return out


def suite_runs(score_paths: dict[str, str]) -> list[tuple[str, str, Path]]:
    """(dataset, variant, path) of ``DATASET:VARIANT`` -> scores JSON, in the order of the paths."""
    return [
        (dataset, variant, Path(path))
        for (dataset, variant), path in (
            (name.split(":", 1), path) for name, path in sorted(score_paths.items(), key=lambda kv: kv[1])
        )
    ]


def metrics_table(score_paths: dict[str, str], pick: Pick = EVERYTHING) -> pd.DataFrame:
    """Long table of the suite's scores (``DATASET:VARIANT`` -> ``results/<dataset>/scores/<variant>.json``)."""
    rows = []
    cols = long_columns(metrics.SUITE_TABLE, pick)
    for dataset, variant, p in suite_runs(score_paths):
        res = json.loads(p.read_text())
        s = res["summary"]
        for k in res["ks"]:
            rows.append(
                {
                    "dataset": dataset,
                    "variant": variant,
                    "k": k,
                    **{c.column: round(s[c.key.format(k=k)], 4) for c in cols},
                    "queries": s["queries"],
                }
            )
    return pd.DataFrame(rows).sort_values(["dataset", "variant", "k"], kind="stable").reset_index(drop=True)


def index_md(table: pd.DataFrame, config_hash: str, limit: int | None = None, pick: Pick = EVERYTHING) -> str:
    lines = [
        "# Retrieval suite",
        "",
        f"- config hash: `{config_hash}`",
        *([f"- **{smoke_note(limit)}**"] if limit else []),
        "- relevance: a retrieved unit is relevant when it overlaps a gold span of its document;",
        "  IE@k = recall@k x precision@k per query, averaged (SproutRAG's information efficiency)",
        "",
    ]
    shown = long_columns(metrics.SUITE_PAGE, pick)
    cols = ["variant", "k", *(c.column for c in shown)]
    for dataset, part in table.groupby("dataset", sort=True):
        lines += [
            f"## {dataset}",
            "",
            f"![IE@k]({dataset}.png)",
            "",
            *markdown.table_lines(
                ["variant", "k", *(c.header for c in shown)],
                ([f"{r[c]}" for c in cols] for r in part.to_dict("records")),
            ),
            "",
        ]
    return "\n".join(lines)


def build_suite_report(params: SuiteReportParams, score_paths: dict[str, str], reports: str) -> None:
    out, pick = Reports(reports), params.metrics
    table = metrics_table(score_paths, pick)
    atomic_write_text(out.suite_metrics, table.to_csv(index=False, lineterminator="\n"))
    panels = [c.column for c in long_columns(metrics.SUITE_FIGURE, pick)]
    for dataset, part in table.groupby("dataset", sort=True):
        ie_by_variant(part, dataset, out.suite_figure(dataset), panels)
    atomic_write_text(out.suite_index_md, index_md(table, params.config_hash, params.limit, pick))
    write_manifest(out.suite_metrics, params.hashed, list(score_paths.values()))
