"""The reproduction table: every published claim in ``claims.yaml`` against this run's results.

A claim names an ablation, a treatment and a control variant, a metric, datasets and the claimed
direction of treatment - control. The measurement reuses the ablation machinery
(:func:`pipeline.report.stats.ablation.compare`: paired bootstrap 95% interval, paired randomisation
p-value, on the questions both variants have); p-values are Holm-adjusted across the table.

Verdict rule (:data:`RULE`), from the unadjusted 95% interval ``[lo, hi]`` of treatment - control:

- ``greater`` (``less`` mirrored): reproduced when lo > 0; contradicted when hi < 0; else undecided.
- ``negligible`` within ``margin``: reproduced when -margin <= lo and hi <= margin; contradicted when
  the interval lies wholly beyond the margin (lo > margin or hi < -margin); else undecided.
- not run: the ablation (or one of the claim's variants) is not in this run's config.
- not testable with this model: ``testable_if`` fails (e.g. the LLM answers too little for a prompt
  effect to show).

Each row also gives the smallest effect this n could detect (two-sided 5% test, 80% power), from
the interval's width: ``mde = (z_0.975 + z_0.8) * (hi - lo) / (2 z_0.975)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from pipeline.paths import CLAIMS_FILE, Reports
from pipeline.report.params import Ablation, FiguresParams, Resampling
from pipeline.report.render.tables import fmt, markdown_table
from pipeline.report.sections import is_labelled
from pipeline.report.stats.ablation import compare

DIRECTIONS = ("greater", "less", "negligible")
VERDICTS = ("reproduced", "contradicted", "undecided", "not run", "not testable with this model")
Z_ALPHA, Z_POWER = 1.959964, 0.841621  # two-sided 5%, 80% power
RULE = (
    "Verdict from the 95% paired-bootstrap interval of treatment - control: reproduced when it has "
    "the claimed sign and excludes 0 (for 'negligible' claims: lies within ±margin); contradicted when it "
    "excludes 0 with the opposite sign (lies wholly beyond the margin); undecided otherwise, with the "
    "smallest effect this n could detect (5% two-sided, 80% power); not run when the ablation is not in "
    "this run's config; not testable when the claim's testable_if condition fails. p: paired "
    "randomisation test; p_holm: Holm-adjusted across the table."
)
COLUMNS = [
    "claim_id",
    "system",
    "claim",
    "source",
    "published",
    "ablation",
    "dataset",
    "metric",
    "treatment",
    "control",
    "direction",
    "margin",
    "n",
    "treatment_mean",
    "control_mean",
    "diff",
    "diff_lo",
    "diff_hi",
    "relative",
    "p_value",
    "p_holm",
    "mde",
    "verdict",
    "note",
]


@dataclass(frozen=True)
class Claim:
    """One published claim as data (a row of claims.yaml)."""

    id: str
    system: str
    claim: str
    source: str
    published: str
    ablation: str
    treatment: str
    control: str | list[str]  # a variant, or candidates of which the best on each dataset is taken
    metric: str
    datasets: tuple[str, ...]
    direction: str
    margin: float | None = None
    testable_if: dict | None = None

    @property
    def variants(self) -> list[str]:
        return [self.treatment, *([self.control] if isinstance(self.control, str) else self.control)]


def load_claims(path: Path = CLAIMS_FILE) -> list[Claim]:
    """Read and check claims.yaml (one clear error naming the claim and key)."""
    out = []
    for raw in yaml.safe_load(Path(path).read_text())["claims"]:
        cid = raw.get("id", "?")
        control = raw["control"]["best_of"] if isinstance(raw.get("control"), dict) else raw.get("control")
        if raw.get("direction") not in DIRECTIONS:
            raise ValueError(f"claims.yaml: claim {cid}: direction must be one of {DIRECTIONS}")
        if raw["direction"] == "negligible" and not raw.get("margin"):
            raise ValueError(f"claims.yaml: claim {cid}: a 'negligible' claim needs a margin")
        out.append(
            Claim(
                cid,
                raw["system"],
                raw["claim"],
                raw["source"],
                str(raw["published"]),
                raw["ablation"],
                raw["treatment"],
                control,
                raw["metric"],
                tuple(raw["datasets"]),
                raw["direction"],
                raw.get("margin"),
                raw.get("testable_if"),
            )
        )
    if len({c.id for c in out}) != len(out):
        raise ValueError("claims.yaml: duplicate claim id")
    return out


def verdict(direction: str, lo: float, hi: float, margin: float | None = None) -> str:
    """The verdict rule of the module docstring for one interval."""
    if direction == "negligible":
        assert margin is not None, "a negligible claim has a margin (claims.yaml)"
        if -margin <= lo and hi <= margin:
            return "reproduced"
        return "contradicted" if lo > margin or hi < -margin else "undecided"
    if direction == "less":
        lo, hi = -hi, -lo
    return "reproduced" if lo > 0 else "contradicted" if hi < 0 else "undecided"


def min_detectable(lo: float, hi: float) -> float:
    """Smallest true difference a two-sided 5% test detects with 80% power, from the 95% interval."""
    return (Z_ALPHA + Z_POWER) * (hi - lo) / (2 * Z_ALPHA)


def holm(p: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def _tables_for(claim: Claim, stage: str, dataset: str, wattbot: dict, suite: dict) -> dict[str, pd.DataFrame]:
    """Per-question tables of the claim's variants on one dataset (those the run has)."""
    if is_labelled(dataset):
        return {v: wattbot[(stage, v)] for v in claim.variants if (stage, v) in wattbot}
    return {v: suite[(dataset, v)] for v in claim.variants if (dataset, v) in suite}


def _measure(claim: Claim, tables: dict[str, pd.DataFrame], rep: Resampling) -> dict:
    """Pick the control (best of the candidates by mean), then the paired comparison."""
    candidates = [claim.control] if isinstance(claim.control, str) else claim.control
    control = max(candidates, key=lambda v: (tables[v][claim.metric].mean(), v))
    ctrl_row, treat_row = compare(tables, [control, claim.treatment], claim.metric, rep)
    lo, hi = treat_row["diff_lo"], treat_row["diff_hi"]
    return {
        "control": control,
        "n": treat_row["n"],
        "treatment_mean": treat_row["mean"],
        "control_mean": ctrl_row["mean"],
        "diff": treat_row["diff"],
        "diff_lo": lo,
        "diff_hi": hi,
        "relative": treat_row["diff"] / ctrl_row["mean"] if ctrl_row["mean"] else None,
        "p_value": treat_row["p_value"],
        "mde": min_detectable(lo, hi),
        "verdict": verdict(claim.direction, lo, hi, claim.margin),
    }


def _untestable(claim: Claim, tables: dict[str, pd.DataFrame], control: str) -> str:
    """Why the claim cannot be tested with this run's models ('' when it can)."""
    cond = claim.testable_if
    if not cond:
        return ""
    v = claim.treatment if cond.get("variant") == "treatment" else control
    got = float(tables[v][cond["metric"]].mean())
    return "" if got >= cond["min"] else f"{v} {cond['metric']} {got:.3f} < {cond['min']} (testable_if)"


def measure_claims(
    params: FiguresParams,
    wattbot: dict,
    suite: dict,
    ablations: dict[str, Ablation],
    elsewhere: dict | None = None,
    claims: list[Claim] | None = None,
) -> pd.DataFrame:
    """One row per claim and dataset (``COLUMNS``). ``ablations``: this run's (with the suite one);
    ``elsewhere``: config file name -> ablation names configured there, to say where a claim that
    did not run would run."""
    rep = params.resampling
    suite_datasets = params.suite.datasets
    rows = []
    for c in claims if claims is not None else load_claims():
        base = {
            "claim_id": c.id,
            "system": c.system,
            "claim": c.claim,
            "source": c.source,
            "published": c.published,
            "ablation": c.ablation,
            "metric": c.metric,
            "treatment": c.treatment,
            "control": c.control if isinstance(c.control, str) else "best of " + ", ".join(c.control),
            "direction": c.direction,
            "margin": c.margin,
        }
        ab = ablations.get(c.ablation)
        datasets = [d for ds in c.datasets for d in (suite_datasets if ds == "suite" else (ds,))] or list(c.datasets)
        if ab is None:
            where = [name for name, abls in (elsewhere or {}).items() if c.ablation in abls]
            note = f"ablation '{c.ablation}' is not in this run's config" + (
                f" (it is in {', '.join(where)})" if where else ""
            )
            rows += [base | {"dataset": d, "verdict": "not run", "note": note} for d in datasets]
            continue
        missing = [v for v in c.variants if v not in ab.variants]
        if missing:
            rows += [
                base
                | {
                    "dataset": d,
                    "verdict": "not run",
                    "note": f"ablation '{c.ablation}' has no variant {', '.join(missing)}",
                }
                for d in datasets
            ]
            continue
        for d in datasets:
            tables = _tables_for(c, ab.stage, d, wattbot, suite)
            if set(tables) != set(c.variants) or any(c.metric not in t for t in tables.values()):
                rows.append(
                    base | {"dataset": d, "verdict": "not run", "note": f"no {c.metric} for every variant on {d}"}
                )
                continue
            row = base | {"dataset": d, "note": ""} | _measure(c, tables, rep)
            why = _untestable(c, tables, row["control"])
            if why:
                row |= {"verdict": "not testable with this model", "note": why}
            rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS)
    ran = table["p_value"].notna()
    table["p_holm"] = pd.Series(
        holm(table.loc[ran, "p_value"].astype(float).tolist()), index=table.index[ran], dtype=float
    )
    num = ["treatment_mean", "control_mean", "diff", "diff_lo", "diff_hi", "relative", "mde"]
    table[num] = table[num].astype(float).round(4)
    table[["p_value", "p_holm"]] = table[["p_value", "p_holm"]].astype(float).round(5)
    table["n"] = table["n"].astype("Int64")
    return table


def measurement_text(row: dict) -> str:
    """'+0.095 [+0.026, +0.179], p=0.016' (empty when the claim did not run)."""
    if pd.isna(row.get("diff")):
        return ""
    return (
        f"{fmt(row['diff'], signed=True)} [{fmt(row['diff_lo'], signed=True)}, {fmt(row['diff_hi'], signed=True)}], "
        f"p={row['p_value']:.3g}, Holm p={row['p_holm']:.3g}"
    )


def verdict_text(row: dict) -> str:
    """The verdict with what explains it (detectable effect, why not run)."""
    v = row["verdict"]
    if v == "undecided" and row.get("diff_lo") == 0 and row.get("diff_hi") == 0:
        # every paired difference is 0: the variants agree on every question, there is no spread to size an effect
        return f"undecided (n={row['n']}: the two variants score the same on every question)"
    if v == "undecided":
        return f"undecided (n={row['n']} detects ≥{row['mde']:.3f})"
    note = row.get("note")
    # an empty note reads back from claims.csv as NaN, which is truthy: "reproduced: nan" in the docs
    return f"{v}: {note}" if isinstance(note, str) and note.strip() else v


def claims_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The human table (markdown, HTML): claim, published, measurement, dataset and n, verdict."""
    rows = []
    for r in table.to_dict("records"):
        rows.append(
            {
                "system": r["system"],
                "claim": r["claim"],
                "published": r["published"],
                "treatment − control": f"{r['treatment']} − {r['control']}",
                "metric": r["metric"],
                "dataset (n)": r["dataset"] + (f" ({r['n']})" if not pd.isna(r["n"]) else ""),
                "measured Δ [95% CI]": measurement_text(r),
                "verdict": verdict_text(r),
            }
        )
    return pd.DataFrame(rows)


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    counts = table["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS if counts.get(v, 0)}


def claims_md(table: pd.DataFrame, config_hash: str) -> str:
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    return (
        f"# Published claims, reproduced?\n\nConfig hash `{config_hash}`; {len(table)} rows: {counts}.\n\n"
        f"{RULE}\n\n" + markdown_table(claims_frame(table))
    )


def render(reports_dir: Path) -> str:
    """Generated block ``claims`` (README/docs): the claims table of ``reports/claims.csv``."""
    table = pd.read_csv(Reports.at(reports_dir).claims_csv, dtype={"n": "Int64"}, keep_default_na=True)
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    return f"{len(table)} rows: {counts}. {RULE}\n\n" + markdown_table(claims_frame(table))


def claims_html(table: pd.DataFrame) -> str:
    """The first section of index.html: one line per claim with its verdict, then every row with
    its interval folded below (the page's first screen must also show the leaderboard)."""
    from pipeline.report.render.html import table_html

    rows = []
    for _cid, part in table.groupby("claim_id", sort=False):
        recs = part.to_dict("records")
        first = recs[0]
        if len(recs) == 1:
            measured, verdict_cell = measurement_text(first).split(", Holm")[0], verdict_text(first)
        else:
            measured = f"{len(recs)} datasets, see below"
            verdict_cell = ", ".join(f"{n} {v}" for v, n in verdict_counts(part).items())
        rows.append(
            {
                "system": first["system"],
                "claim": first["claim"],
                "published": first["published"],
                "treatment − control": f"{first['treatment']} − {first['control']}",
                "metric": first["metric"],
                "Δ (treatment − control) [95% CI], p": measured,
                "verdict": verdict_cell,
            }
        )
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    return (
        f"<p>{len(rows)} published claims ({len(table)} rows with datasets): {counts}. "
        f'Data: <a href="claims.csv">claims.csv</a>, <a href="claims.md">claims.md</a>.</p>'
        + '<div id="claims-summary">'
        + table_html(pd.DataFrame(rows))
        + "</div>"
        + f"<details><summary>every row with its interval, Holm-adjusted p and verdict rule</summary>"
        f"<p>{RULE}</p>{table_html(claims_frame(table))}</details>"
    )
