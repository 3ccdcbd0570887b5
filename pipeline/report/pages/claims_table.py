"""The claims' page: the reproduction table of ``reports/claims.md``, the first section of index.html and the
README's ``claims`` block, from the rows :func:`pipeline.report.claims.measure.measure_claims` measured
(``reports/claims.csv``). It draws; the verdicts and their rule are the measurement's."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from pipeline.paths import Reports
from pipeline.report.claims.families import NOT_RUN
from pipeline.report.claims.measure import row_counts, verdict_counts
from pipeline.report.claims.registration import DEVIATES, NOT_REGISTERED
from pipeline.report.claims.table import RULE
from pipeline.report.render.tables import fmt, markdown_table
from pipeline.report.stats.verdicts import CONSISTENT, CONTRADICTED, LARGER, PUBLISHED_VERDICTS, SMALLER, UNDECIDED

JUDGED = (CONTRADICTED, UNDECIDED)  # verdicts that also name the published effect they were read against


def _text(x) -> str:
    """A cell as text: an empty cell reads back from claims.csv as NaN, which is truthy ("reproduced: nan")."""
    return x.strip() if isinstance(x, str) else ""


def _has(row: dict, key: str) -> bool:
    x = row.get(key)
    return x is not None and not pd.isna(x)


def rule_text(table: pd.DataFrame) -> str:
    """The table's note (:data:`RULE`), naming the families tested."""
    if "family" not in table:
        return RULE
    tested = table["p_holm"].notna() if "p_holm" in table else table["family"].notna()
    families = ", ".join(str(f) for f in table.loc[tested, "family"].dropna().unique() if str(f)) or "none tested"
    return f"{RULE} Families here: {families}."


def _end(x: float, scale: str) -> str:
    if pd.isna(x) or abs(x) == float("inf"):
        return "−∞" if x == -float("inf") else "+∞" if x == float("inf") else "?"
    return f"{x:+.1%}" if scale == "ratio" else fmt(x, signed=True)


def measurement_text(row: dict) -> str:
    """'+0.095 [+0.026, +0.179], p=0.016' on the row's scale (a ratio's in percent; its level when not 95%),
    empty when the claim did not run; an end at n = 0 or a control mean of 0 is ±∞."""
    if not _has(row, "estimate") and not _has(row, "lo"):
        return ""
    scale = _text(row.get("scale")) or "difference"
    est = _end(row["estimate"], scale) if _has(row, "estimate") else "?"
    level = "" if not _has(row, "level") or round(float(row["level"]), 2) == 0.95 else f" ({float(row['level']):.0%})"
    p = "" if not _has(row, "p_value") else f", p={row['p_value']:.3g}"
    holm_p = "" if not _has(row, "p_holm") else f", Holm p={row['p_holm']:.3g}"
    what = " relative" if scale == "ratio" else ""
    return f"{est}{what} [{_end(row['lo'], scale)}, {_end(row['hi'], scale)}]{level}{p}{holm_p}"


def _power_text(row: dict) -> str:
    """'power 0.42 at n=187 (consistent 0.31); needs n≈450 for published +0.031'."""
    parts = []
    if _has(row, "power"):
        cons = f", consistent {row['p_consistent']:.2f}" if _has(row, "p_consistent") else ""
        parts.append(f"power {row['power']:.2f} at n={int(row['n'])}{cons}")
    if _has(row, "n_needed"):
        parts.append(f"needs n≈{int(row['n_needed'])} for {_text(row.get('n_needed_for'))}")
    elif _text(row.get("n_needed_for")) and _has(row, "power"):
        parts.append(f"for {_text(row.get('n_needed_for'))}")
    return "; ".join(parts)


def verdict_text(row: dict) -> str:
    """The verdict with what explains it: the published effect, power, why not run or not testable, the
    sample (in-sample, not counted) and a deviation from the registration."""
    v, note = row["verdict"], _text(row.get("note"))
    if _has(row, "published_effect") and row.get("direction") != "negligible" and v in (*PUBLISHED_VERDICTS, *JUDGED):
        # the published effect on the row's scale (a relative one in percent)
        shown = _end(float(row["published_effect"]), _text(row.get("scale")) or "difference")
        v = f"{v} {shown}" if v in (CONSISTENT, SMALLER, LARGER) else f"{v} (published {shown})"
    parts = [p for p in (_power_text(row), note) if p]
    if _text(row.get("sample")) == "in-sample":
        parts.insert(0, "in-sample" + ("" if row.get("decides") in (True, "True") else ", not counted"))
    if _text(row.get("registration")) in (DEVIATES, NOT_REGISTERED):
        parts.insert(0, _text(row["registration"]))
    return f"{v}: {'; '.join(parts)}" if parts else v


def claims_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The human table (markdown, HTML): claim, published, measurement, dataset and n, verdict."""
    rows = []
    for r in table.to_dict("records"):
        units = _text(r.get("units"))
        n = "" if pd.isna(r["n"]) else f" ({r['n']}{', ' + units if units and units != 'questions' else ''})"
        rows.append(
            {
                "system": r["system"],
                "claim": r["claim"],
                "published": r["published"],
                "treatment − control": f"{r['treatment']} − {r['control']}",
                "metric": r["metric"],
                "dataset (n)": r["dataset"] + n,
                "measured [interval]": measurement_text(r),
                "verdict": verdict_text(r),
            }
        )
    return pd.DataFrame(rows)


def counts_line(table: pd.DataFrame) -> str:
    """'13 claims: 2 reproduced, ...; 33 rows: ...' (the claims counted once each by their own verdict)."""
    claims = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    rows = ", ".join(f"{n} {v}" for v, n in row_counts(table).items())
    n_claims = table["claim_key"].nunique() if "claim_key" in table else len(table)
    return f"{n_claims} claims: {claims}; {len(table)} rows: {rows}."


def claims_md(table: pd.DataFrame, config_hash: str, claims_sha256: str = "") -> str:
    file = f"; claims file sha256 `{claims_sha256[:12]}`" if claims_sha256 else ""
    return (
        f"# Published claims, reproduced?\n\nConfig hash `{config_hash}`{file}. {counts_line(table)}\n\n"
        f"{rule_text(table)}\n\n" + markdown_table(claims_frame(table))
    )


def read_claims(reports_dir: Path) -> pd.DataFrame:
    """``reports/claims.csv`` with ``n`` as integers (an empty cell stays missing)."""
    return pd.read_csv(Reports.at(reports_dir).claims_csv, dtype={"n": "Int64"}, keep_default_na=True)


def render(reports_dir: Path) -> str:
    """Generated block ``claims`` (README/docs): the claims table of ``reports/claims.csv``."""
    table = read_claims(reports_dir)
    return f"{counts_line(table)} {rule_text(table)}\n\n" + markdown_table(claims_frame(table))


def render_measured(reports_dir: Path) -> str:
    """Generated block ``claims-measured``: the claims table of a run whose grid has part of the ablations (the
    full-size suite: no LLM), without the claims its config did not run, which one line names instead."""
    table = read_claims(reports_dir)
    key = "claim_key" if "claim_key" in table else "claim_id"
    ran = table["verdict"] != NOT_RUN
    skipped = sorted(set(table[key].astype(str)) - set(table.loc[ran, key].astype(str)))
    partly = int((~ran).sum()) - int(table[key].astype(str).isin(skipped).sum())
    left = f" Not in this run's config: {', '.join(skipped)}." if skipped else ""
    left += f" {partly} rows of measured claims did not run and are left out." if partly else ""
    table = table[ran]
    return f"{counts_line(table)}{left} {rule_text(table)}\n\n" + markdown_table(claims_frame(table))


def claims_html(table: pd.DataFrame) -> str:
    """The first section of index.html: one line per claim with its one verdict, then every row with its
    interval folded below (the page's first screen must also show the leaderboard)."""
    from pipeline.report.render.html import table_html

    rows = []
    key = "claim_key" if "claim_key" in table else "claim_id"
    for _cid, part in table.groupby(key, sort=False):
        recs = part.to_dict("records")
        first = recs[0]
        deciding = [r for r in recs if r.get("decides") in (True, "True")] or recs
        measured = measurement_text(deciding[0]).split(", Holm")[0] if len(deciding) == 1 else ""
        measured = measured or f"{len(recs)} rows, see below"
        rows.append(
            {
                "system": first["system"],
                "claim": first["claim"],
                "published": first["published"],
                "treatment − control": f"{first['treatment']} − {first['control']}",
                "metric": first["metric"],
                "decided on": ", ".join(str(r["dataset"]) for r in deciding),
                "Δ [interval], p": measured,
                "verdict": _text(first.get("claim_verdict")) or first["verdict"],
            }
        )
    return (
        f"<p>{counts_line(table)} "
        f'Data: <a href="claims.csv">claims.csv</a>, <a href="claims.md">claims.md</a>.</p>'
        + '<div id="claims-summary">'
        + table_html(pd.DataFrame(rows))
        + "</div>"
        + f"<details><summary>every row with its interval, Holm-adjusted p and verdict rule</summary>"
        f"<p>{html.escape(rule_text(table), quote=False)}</p>{table_html(claims_frame(table))}</details>"
    )
