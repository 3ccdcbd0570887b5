"""The claims' page: the reproduction table of ``reports/claims.md``, the first section of index.html and the
README's ``claims`` block, from the rows :func:`pipeline.report.claims.measure.measure_claims` measured
(``reports/claims.csv``). It draws; the verdicts and their rule are the measurement's."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from pipeline.paths import Reports
from pipeline.report.claims.measure import CONTRADICTED, PUBLISHED_VERDICTS, RULE, SIGN_UNDECIDED, verdict_counts
from pipeline.report.render.tables import fmt, markdown_table


def rule_text(table: pd.DataFrame) -> str:
    """The table's note (:data:`RULE`), naming the families tested when WattBot rows carry their split."""
    if not table["dataset"].astype(str).str.contains("/").any():
        return RULE
    family = table["family"] if "family" in table else table["dataset"]  # a claims.csv from before the column
    families = ", ".join(map(str, family[table["p_holm"].notna()].unique())) or "none tested"
    return f"{RULE} Families here: {families}."


def measurement_text(row: dict) -> str:
    """'+0.095 [+0.026, +0.179], p=0.016' (empty when the claim did not run)."""
    if pd.isna(row.get("diff")):
        return ""
    holm_p = "" if pd.isna(row.get("p_holm")) else f", Holm p={row['p_holm']:.3g}"
    return (
        f"{fmt(row['diff'], signed=True)} [{fmt(row['diff_lo'], signed=True)}, {fmt(row['diff_hi'], signed=True)}], "
        f"p={row['p_value']:.3g}{holm_p}"
    )


def _text(x) -> str:
    """A cell as text: an empty cell reads back from claims.csv as NaN, which is truthy ("reproduced: nan")."""
    return x.strip() if isinstance(x, str) else ""


def verdict_text(row: dict) -> str:
    """The verdict with what explains it (published effect, n needed, why not run or not testable)."""
    v, note = row["verdict"], _text(row.get("note"))
    if v in SIGN_UNDECIDED:
        parts = [f"n={row['n']} detects ≥{row['mde']:.3f}"] if row.get("mde") else [f"n={row['n']}"]
        if not pd.isna(row.get("n_needed")) and row.get("n_needed") is not None:
            parts.append(f"needs n≈{int(row['n_needed'])} for {_text(row.get('n_needed_for'))}")
        if note:
            parts.append(note)
        return f"{v} ({'; '.join(parts)})"
    published = row.get("published_diff")
    if v in (*PUBLISHED_VERDICTS, CONTRADICTED) and published is not None and not pd.isna(published):
        # the published effect in the metric's units (a relative one converted with the control's mean)
        v = (
            f"{v} {fmt(published, signed=True)}"
            if v != CONTRADICTED
            else f"{v} (published {fmt(published, signed=True)})"
        )
    return f"{v}: {note}" if note else v


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


def claims_md(table: pd.DataFrame, config_hash: str) -> str:
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    return (
        f"# Published claims, reproduced?\n\nConfig hash `{config_hash}`; {len(table)} rows: {counts}.\n\n"
        f"{rule_text(table)}\n\n" + markdown_table(claims_frame(table))
    )


def render(reports_dir: Path) -> str:
    """Generated block ``claims`` (README/docs): the claims table of ``reports/claims.csv``."""
    table = pd.read_csv(Reports.at(reports_dir).claims_csv, dtype={"n": "Int64"}, keep_default_na=True)
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    return f"{len(table)} rows: {counts}. {rule_text(table)}\n\n" + markdown_table(claims_frame(table))


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
        f"<p>{html.escape(rule_text(table), quote=False)}</p>{table_html(claims_frame(table))}</details>"
    )
