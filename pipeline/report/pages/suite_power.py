"""The suite's benchmarks sized by power (#33 item 5): per dataset, how many queries claim ``sprout-ie`` needs.

From a run's per-query suite results (``results/<dataset>/scores/<variant>.per_query.csv``): the paired
difference of the claim's treatment (sprout) and its control (the best baseline on that dataset, by the
claim's own rule: :func:`~pipeline.report.claims.claim.control_of`), its standard deviation, the n a
paired two-sided 5% test needs to detect the published effect with 80% power
(:func:`~pipeline.report.stats.verdicts.n_needed`), the effect this run's n detects
(:func:`~pipeline.report.stats.verdicts.detectable_effect`), and what the dataset cost: the CPU seconds of
its jobs (``benchmarks/<dataset>/``: export, attention, indexes, retrieval, evaluation; the shared head
training is no dataset's). Run on a pilot (``config.pilot.yaml``), it sizes the final subsets; run after
any suite run (``time-table`` writes it), it says what that run could detect. The CPU seconds differ on
every run, so the table is run telemetry (``reports/retrieval/power.telemetry.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from pipeline import paths
from pipeline.io import atomic_write_text
from pipeline.provenance import write_manifest
from pipeline.report.claims.claim import Claim, control_of, load_claims
from pipeline.report.render.tables import fmt, markdown_table
from pipeline.report.stats.ablation import paired_values
from pipeline.report.stats.verdicts import detectable_effect, n_needed
from pipeline.report.telemetry.time_table import read_benchmarks

CLAIM = "sprout-ie"  # the suite claim with published per-dataset effects
COLUMNS = [
    "dataset",
    "config",
    "n",
    "docs",
    "treatment",
    "control",
    "diff",
    "sd_diff",
    "published_effect",
    "n_needed",
    "detectable_effect",
    "cpu_s",
]


@dataclass(frozen=True)
class PowerInputs:
    """Where a run's suite results are (``root``: the Snakemake working directory) and what it ran."""

    root: Path
    datasets: list[str]
    config: str  # the run's config files, as the table names it (e.g. config.yaml)


def _tables(root: Path, dataset: str, claim: Claim) -> dict[str, pd.DataFrame]:
    """The per-query tables of the claim's variants the run has on ``dataset``."""
    out = {}
    for v in claim.variants:
        f = root / paths.suite_per_query(dataset, v)
        if f.exists():
            out[v] = pd.read_csv(f, index_col="query_id", dtype={"query_id": str})
    return out


def cpu_seconds(root: Path) -> dict[str, float]:
    """CPU seconds of each dataset's jobs (the first folder of their benchmark path) in ``root``'s benchmarks/."""
    out: dict[str, float] = {}
    for job in read_benchmarks(root):
        head = job.job.split("/", 1)[0]
        out[head] = out.get(head, 0.0) + job.cpu_s
    return out


def _row(inputs: PowerInputs, dataset: str, claim: Claim, cpu: dict[str, float]) -> dict | None:
    tables = _tables(inputs.root, dataset, claim)
    candidates = [c for c in claim.variants[1:] if c in tables]
    if claim.treatment not in tables or not candidates:
        return None
    control = control_of(replace(claim, control=candidates), tables)  # the baselines this run has
    pairs = paired_values(tables, [claim.treatment, control], claim.metric)
    diff = pairs[claim.treatment] - pairs[control]
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else float("nan")
    published = claim.effect.on(dataset) if claim.effect else None
    docs = inputs.root / paths.export_dir(dataset) / "docs.csv"
    return {
        "dataset": dataset,
        "config": inputs.config,
        "n": len(diff),
        "docs": len(pd.read_csv(docs, usecols=[0])) if docs.exists() else None,
        "treatment": claim.treatment,
        "control": control,
        "diff": float(diff.mean()),
        "sd_diff": sd,
        "published_effect": published,
        "n_needed": n_needed(sd, published) if published is not None else None,
        "detectable_effect": detectable_effect(sd, len(diff)),
        "cpu_s": round(cpu.get(dataset, 0.0), 1),
    }


def power_table(inputs: PowerInputs, claims: list[Claim] | None = None) -> pd.DataFrame:
    """One row per suite dataset the run scored sprout and a baseline on (:data:`COLUMNS`)."""
    claim = next(c for c in (claims or load_claims()) if c.id == CLAIM)
    cpu = cpu_seconds(inputs.root)
    rows = [r for d in inputs.datasets if (r := _row(inputs, d, claim, cpu)) is not None]
    table = pd.DataFrame(rows, columns=COLUMNS)
    table[["n_needed", "docs"]] = table[["n_needed", "docs"]].astype("Int64")
    return table.round({"diff": 4, "sd_diff": 4, "detectable_effect": 4})


def best_of_choices(inputs: PowerInputs, claims: list[Claim] | None = None) -> pd.DataFrame:
    """Per suite claim with a best_of control and per dataset the run scored every candidate on: the best
    candidate by the claim's own rule (:func:`~pipeline.report.claims.claim.control_of`). Run on the pilot
    (``config.pilot.yaml``), it is the choice claims.yaml's ``control.chosen`` records (issue #44 item 3)."""
    rows = []
    for c in claims or load_claims():
        if isinstance(c.control, str) or "suite" not in c.datasets:
            continue
        for d in inputs.datasets:
            tables = _tables(inputs.root, d, c)
            if all(v in tables for v in c.control):
                rows.append(
                    {"claim": c.id, "dataset": d, "chosen": control_of(c, tables), "n": len(tables[c.control[0]])}
                )
    return pd.DataFrame(rows, columns=["claim", "dataset", "chosen", "n"])


def write_power(inputs: PowerInputs, reports_dir: Path) -> pd.DataFrame:
    """:func:`power_table` to ``reports/retrieval/power.telemetry.csv`` (with its manifest); the table."""
    table = power_table(inputs)
    out = paths.Reports.at(reports_dir).suite_power
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, table.to_csv(index=False))
    read = [
        inputs.root / paths.suite_per_query(r.dataset, v) for r in table.itertuples() for v in (r.treatment, r.control)
    ]
    write_manifest(out, {"claim": CLAIM, "config": inputs.config}, [str(f) for f in read])
    return table


def render(reports_dir: Path) -> str:
    """docs/results.md's ``suite-power`` block: per dataset, n, the spread, the n needed and the detectable effect."""
    t = pd.read_csv(paths.Reports.at(reports_dir).suite_power, dtype={"config": str})
    rows = [
        [
            r.dataset,
            r.config,
            str(r.n),
            r.control,
            fmt(r.sd_diff),
            fmt(r.published_effect, 4, signed=True) if pd.notna(r.published_effect) else "none",
            str(int(r.n_needed)) if pd.notna(r.n_needed) else "–",
            fmt(r.detectable_effect) if pd.notna(r.detectable_effect) else "–",
            f"{r.cpu_s:.0f}",
        ]
        for r in t.itertuples()
    ]
    head = [
        "dataset",
        "config",
        "n",
        "control",
        "sd of difference",
        "published",
        "n needed",
        "detectable at n",
        "CPU-s",
    ]
    note = (
        "Claim `sprout-ie` (IE@5, sprout − the best baseline on each dataset). n needed: the queries a paired "
        "two-sided 5% test needs to detect the published effect with 80% power, from this run's spread of the "
        "per-query differences; detectable at n: the effect this run's n detects with 80% power. CPU-s: the "
        "dataset's jobs (export, attention pass, indexes, retrieval, evaluation), from `benchmarks/`."
    )
    return markdown_table(pd.DataFrame(rows, columns=head)) + "\n" + note + "\n"
