"""The claims table's columns, its verdict rule as the page states it, and the pass that finishes the rows:
families and Holm, the verdict at the adjusted level, power, and each claim's one verdict."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.report.claims.claim import Claim
from pipeline.report.claims.families import (
    NOT_RUN,
    claim_verdicts,
    deciding,
    family_of,
    family_sizes,
    holm_in_families,
    sample_of,
)
from pipeline.report.claims.power import size_row, target_of
from pipeline.report.claims.reading import Pairs, at_holm_level
from pipeline.report.claims.untestable import IDENTICAL, UNTESTABLE_MODEL
from pipeline.report.stats.signflip import ALPHA, min_differing
from pipeline.report.stats.verdicts import (
    CONTRADICTED,
    PUBLISHED_VERDICTS,
    REPRODUCED,
    UNDECIDED,
)

VERDICTS = (REPRODUCED, *PUBLISHED_VERDICTS, CONTRADICTED, UNDECIDED, IDENTICAL, NOT_RUN, UNTESTABLE_MODEL)
COLUMNS = [
    "claim_id",
    "claim_key",
    "system",
    "claim",
    "source",
    "published",
    "published_effect",
    "published_kind",
    "ablation",
    "dataset",
    "sample",
    "family",
    "metric",
    "treatment",
    "control",
    "control_chosen",
    "direction",
    "margin",
    "margin_reason",
    "registration",
    "n",
    "units",
    "differing",
    "treatment_mean",
    "control_mean",
    "diff",
    "relative",
    "scale",
    "test",
    "estimate",
    "lo",
    "hi",
    "level",
    "p_value",
    "p_holm",
    "mc_se_p",
    "mc_se_ends",
    "resamples",
    "power",
    "p_consistent",
    "n_needed",
    "n_needed_for",
    "verdict",
    "claim_verdict",
    "decides",
    "note",
]
RULE = (
    "Each row is one paired sign-flip (randomisation) test of treatment against control and the interval that "
    "is its inversion (the effects it does not reject), so an interval excludes 0 exactly when p < 0.05; at "
    "least 10,000 sign patterns (every pattern when there are fewer), with the Monte Carlo error of p and of "
    "the ends (mc_se_p, mc_se_ends). Its scale is the claim's: a relative published effect is judged on "
    "mean(t)/mean(c) - 1 (scale ratio), anything else on the difference of means. Against a published effect "
    "P: consistent with published when the interval contains P and excludes 0; right sign but smaller than "
    "published when it lies between 0 and P; larger than published when it lies beyond P; smaller than "
    "published, sign undecided when it contains 0 but lies below P; contradicted when it excludes 0 on the "
    "wrong side; undecided when it contains both. Without one: reproduced when it excludes 0 on the claimed "
    "side, contradicted on the other, undecided otherwise. A 'negligible' claim is read by two one-sided tests "
    "against its margin (its smallest effect of interest, reason in margin_reason) and nothing else: "
    "reproduced when both reject (the 90% interval inside ±margin), contradicted when that interval lies "
    "wholly beyond the margin. Fewer than {k} differing units leave only undecided (a sign-flip p cannot go "
    "below 2/2^k). Units: questions, or documents where questions share one (a question citing several "
    "documents joins their clusters, one citing none is a cluster of its own). Families: the rows that decide "
    "a claim, per system; the other held-out rows, per dataset; in-sample rows (WattBot train, where defaults "
    "were chosen) beside a held-out row: none. A verdict that excludes 0 needs p_holm < 0.05 in its family "
    "(the TOST p for a negligible claim), else it is read as if the interval contained 0. A claim is decided "
    "by its pooled row (random effects, few-dataset interval) where it has one, else its held-out rows, else its "
    "in-sample rows; its verdict is theirs where they agree, else undecided. best_of controls were chosen on "
    "the suite's pilot, others named in advance (control_chosen). power: the chance this n reads what the "
    "claim needs, by simulating the row's own test at the published effect (not the observed one; "
    "p_consistent: of reading consistent with published); n_needed: the n reaching 80%. Not testable: "
    "identical outputs when both variants return the same answers (retrieved ids) on every question; not run "
    "when the ablation is not in this run's config; not testable with this model when testable_if fails. "
    "registration: whether the claim is as registered (pipeline/report/claims/registration.yaml; what changed "
    "since: deviations.yaml)."
).replace("{k}", str(min_differing(ALPHA)))


@dataclass
class Row:
    """A row's columns, and what the finishing pass reads beside them."""

    cols: dict
    claim: Claim
    pilot: Pairs | None = None  # the population its power is simulated from (None: not sized)
    pairs: Pairs | None = None  # its paired values (None: it measured nothing)


def _number(x) -> float | None:
    return None if x is None or pd.isna(x) else float(x)


def _tests(r: dict) -> bool:
    return not pd.isna(r.get("p_value")) and r.get("verdict") not in (IDENTICAL, UNTESTABLE_MODEL, NOT_RUN)


def _adjust(r: dict, m: int) -> None:
    """The verdict at the Holm-adjusted level of the row's family of ``m`` (pipeline/report/claims/reading.py),
    saying how many differing units a p below the family's first Holm step (alpha / m) needs."""
    if r.get("p_holm") is None or pd.isna(r.get("p_holm")):
        return
    rejects = float(r["p_holm"]) < ALPHA
    published = _number(r.get("published_effect"))
    adjusted = at_holm_level(r["verdict"], r["direction"], r["lo"], r["hi"], published, rejects)
    if adjusted != r["verdict"]:
        need, k = min_differing(ALPHA / m), _number(r.get("differing"))
        few = f"; {int(k)} differing, where a p below 0.05/{m} needs {need}" if k is not None and k < need else ""
        why = (
            f"{r['verdict']} at 5% (p={r['p_value']:.3g}) but not at family {r['family']}'s Holm-adjusted level "
            f"(p_holm={r['p_holm']:.3g}{few}): read as if the interval contained 0"
        )
        r["note"] = "; ".join(x for x in (why, r.get("note") or "") if x)
        r["verdict"] = adjusted


def _size(row: Row, m: int, seed: int) -> None:
    r = row.cols
    target = target_of(
        r["direction"], _number(r.get("published_effect")), r.get("scale") or "difference", _number(r.get("margin"))
    )
    if row.pilot is None or target is None or not _tests(r):
        return
    r |= size_row(row.pilot.t, row.pilot.c, int(r["n"]), target, ALPHA / max(1, m), seed)


def finish(rows: list[Row], score_split: str | None, seed: int = 0, sizing: bool = True) -> pd.DataFrame:
    """Samples, deciding rows and families; Holm within each family; the verdicts at the adjusted level;
    power; each claim's verdict; the table with its columns' types and rounding."""
    cols = [r.cols for r in rows]
    for r in cols:
        r["sample"] = sample_of(r["dataset"], score_split)
    for r, d in zip(cols, deciding(cols), strict=True):
        r["decides"] = d
        r["family"] = family_of(r)
    tests = [_tests(r) for r in cols]
    sizes = family_sizes(cols, tests)
    for r, p in zip(cols, holm_in_families(cols, tests), strict=True):
        r["p_holm"] = p
        _adjust(r, sizes.get(r["family"], 1))
    if sizing:
        for row in rows:
            _size(row, sizes.get(row.cols["family"], 1), seed)
    verdicts = claim_verdicts(cols)
    for r in cols:
        v, why = verdicts.get(r["claim_key"], (r["verdict"], ""))
        r["claim_verdict"] = v
        if why and r["decides"]:
            r["note"] = "; ".join(x for x in (r.get("note") or "", f"claim undecided: {why}") if x)
    table = pd.DataFrame(cols).reindex(columns=COLUMNS)
    num = ["treatment_mean", "control_mean", "diff", "relative", "estimate", "lo", "hi", "power", "p_consistent"]
    table[num] = table[num].astype(float).round(4)
    table[["p_value", "p_holm", "mc_se_p", "mc_se_ends"]] = (
        table[["p_value", "p_holm", "mc_se_p", "mc_se_ends"]].astype(float).round(5)
    )
    for c in ("n", "n_needed", "differing", "resamples"):
        table[c] = table[c].astype("Int64")
    table["decides"] = table["decides"].astype(bool)
    return table


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """Claims per verdict, each claim once (its ``claim_verdict``), in :data:`VERDICTS`' order, those with none
    left out (the page, the run's summary). A claims.csv of before (no claim_verdict) counts its rows."""
    if "claim_verdict" in table:
        counts = table.drop_duplicates("claim_key")["claim_verdict"].value_counts()
    else:
        counts = table["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS if counts.get(v, 0)}


def row_counts(table: pd.DataFrame) -> dict[str, int]:
    """Rows per verdict (every row, deciding or not)."""
    counts = table["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS if counts.get(v, 0)}
