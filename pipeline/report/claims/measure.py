"""Every published claim in ``claims.yaml`` measured against this run's results: the rows of
``reports/claims.csv`` (the page that shows them: pipeline/report/pages/claims_table.py).

A claim names an ablation, a treatment and a control variant, a metric, datasets, the claimed
direction of treatment - control and, where the source gives one, the published effect. The
measurement reuses the ablation machinery (:func:`pipeline.report.stats.ablation.compare`: paired
bootstrap 95% interval, paired randomisation p-value, on the questions both variants have); p-values
are Holm-adjusted within each family (one dataset and split: ``family``). With several labelled WattBot
splits (:class:`SplitTables`) a WattBot claim has a row per split, ``dataset`` ``wattbot/test`` then
``wattbot/train``, each its own family.

Verdicts (:data:`RULE`; the two tables are in :mod:`pipeline.report.stats.verdicts`), from the
unadjusted 95% interval of treatment - control: against the published effect where there is one
(consistent with published, right sign but smaller than published, larger than published, smaller
than published with the sign undecided, contradicted, undecided), else from the claimed direction
(reproduced, contradicted, undecided). Before either:

- not run: the ablation (or one of the claim's variants) is not in this run's config, or the config
  dropped it (``name: null``: "variant X dropped by the config").
- not testable: identical outputs: the two variants return the same answers (retrieved ids) on every
  compared question (:mod:`pipeline.report.stats.outputs`): no sample size could tell them apart.
- not testable with this model: ``testable_if`` fails (e.g. the LLM answers too little for a prompt
  effect to show).

A row whose interval contains 0 states ``n_needed``, the questions a paired test needs to detect the
published effect (else the margin, else the observed difference: ``n_needed_for``) at 80% power,
two-sided 5%, from the observed spread of the per-question differences. Each row also gives the
smallest effect this n could detect, from the interval's width:
``mde = (z_0.975 + z_0.8) * (hi - lo) / (2 z_0.975)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from pipeline.paths import CLAIMS_FILE
from pipeline.registry import metrics
from pipeline.report.params import Ablation, FiguresParams, Resampling
from pipeline.report.render.tables import fmt
from pipeline.report.sections import LABELLED_SET, is_labelled, split_dataset
from pipeline.report.stats.ablation import compare, paired_values
from pipeline.report.stats.outputs import differing, reordered
from pipeline.report.stats.verdicts import (
    CONTRADICTED,
    PUBLISHED_VERDICTS,
    REPRODUCED,
    SIGN_UNDECIDED,
    UNDECIDED,
    holm,
    holm_by_family,
    min_detectable,
    n_needed,
    published_verdict,
    verdict,
)

__all__ = ["holm", "min_detectable", "verdict"]  # the verdict rule's pieces, re-exported for the table's readers

DIRECTIONS = ("greater", "less", "negligible")
EFFECT_KINDS = ("absolute", "relative")
IDENTICAL = "not testable: identical outputs"
UNTESTABLE_MODEL = "not testable with this model"
VERDICTS = (
    REPRODUCED,
    *PUBLISHED_VERDICTS,
    CONTRADICTED,
    UNDECIDED,
    IDENTICAL,
    "not run",
    UNTESTABLE_MODEL,
)
RULE = (
    "Verdict from the 95% paired-bootstrap interval of treatment - control. Against a published effect P "
    "(a relative one times the control's observed mean): consistent with published when it contains P and "
    "excludes 0; right sign but smaller than published when it lies between 0 and P; larger than published "
    "when it lies beyond P; smaller than published, sign undecided when it contains 0 but lies below P; "
    "contradicted when it excludes 0 on the wrong side; undecided when it contains both 0 and P. Without a "
    "published effect: reproduced when it has the claimed sign and excludes 0 (for 'negligible' claims: lies "
    "within ±margin); contradicted when it excludes 0 with the opposite sign (lies wholly beyond the margin); "
    "undecided otherwise. A row whose interval contains 0 states the n a paired test needs to detect P (else "
    "the margin, else the observed difference) with 80% power at 5% two-sided, from the observed spread of "
    "the per-question differences. Not testable: identical outputs when both variants return the same answers "
    "(retrieved ids) on every question; not run when the ablation is not in this run's config; not testable "
    "with this model when the claim's testable_if condition fails. p: paired randomisation test; p_holm: "
    "Holm-adjusted within each family (one dataset and split: the family column), over the rows that test."
)
COLUMNS = [
    "claim_id",
    "system",
    "claim",
    "source",
    "published",
    "published_effect",
    "published_kind",
    "ablation",
    "dataset",
    "family",
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
    "published_diff",
    "p_value",
    "p_holm",
    "mde",
    "n_needed",
    "n_needed_for",
    "verdict",
    "note",
]


@dataclass(frozen=True)
class Effect:
    """A published effect: treatment - control in the metric's units (absolute) or as a fraction of the
    control's mean (relative); one value, or one per dataset."""

    value: float | dict[str, float]
    kind: str
    ref: str

    def on(self, dataset: str) -> float | None:
        """The published value for ``dataset`` (None where the source gives none)."""
        if isinstance(self.value, dict):
            v = self.value.get(dataset)
            return None if v is None else float(v)
        return float(self.value)

    def absolute(self, dataset: str, control_mean: float) -> float | None:
        """The effect in the metric's units on ``dataset`` (a relative one times the control's mean)."""
        v = self.on(dataset)
        if v is None:
            return None
        return v * control_mean if self.kind == "relative" else v


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
    effect: Effect | None = None
    alike_because: str = ""  # why the variants may score alike on every question (added to such rows' note)

    @property
    def variants(self) -> list[str]:
        return [self.treatment, *([self.control] if isinstance(self.control, str) else self.control)]


def _effect(cid: str, raw: dict | None) -> Effect | None:
    """The ``effect:`` entry of a claim, checked (one error naming the claim)."""
    if raw is None:
        return None
    if raw.get("kind") not in EFFECT_KINDS or not raw.get("ref"):
        raise ValueError(f"claims.yaml: claim {cid}: effect needs kind ({' or '.join(EFFECT_KINDS)}) and ref")
    values = raw.get("value")
    numbers = list(values.values()) if isinstance(values, dict) else [values]
    if not numbers or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v != 0 for v in numbers):
        raise ValueError(f"claims.yaml: claim {cid}: effect value must be a non-zero number (or one per dataset)")
    assert isinstance(values, (int, float, dict))  # checked above: a number, or one per dataset
    return Effect(values, raw["kind"], str(raw["ref"]))


def _metric(cid: str, name: str) -> str:
    """A claim's ``metric``: a registered measure a claim may name (pipeline/registry/metrics.py's ``CLAIMS``
    view: those with a value per question)."""
    try:
        m, _ = metrics.parse(name)
    except (KeyError, ValueError) as e:
        raise ValueError(f"claims.yaml: claim {cid}: metric: {e.args[0]}") from None
    if metrics.CLAIMS not in m.shown:
        raise ValueError(f"claims.yaml: claim {cid}: metric {name!r} has no value per question to compare")
    return name


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
                _metric(cid, raw["metric"]),
                tuple(raw["datasets"]),
                raw["direction"],
                raw.get("margin"),
                raw.get("testable_if"),
                _effect(cid, raw.get("effect")),
                str(raw.get("alike_because") or ""),
            )
        )
    if len({c.id for c in out}) != len(out):
        raise ValueError("claims.yaml: duplicate claim id")
    return out


@dataclass(frozen=True)
class SplitTables:
    """WattBot's per-question tables when several splits are labelled (``wattbot.solutions``): split ->
    its (stage, variant) tables, the score split last. A WattBot claim then has a row per split whose
    tables hold all its variants (``dataset`` = ``wattbot/<split>``), the score split's row last."""

    splits: dict[str, dict]


def _labelled_splits(wattbot: dict | SplitTables) -> list[tuple[str, dict, bool]]:
    """(dataset value, per-question tables, is the score split) of each labelled WattBot split, in row order:
    the other labelled splits first (test), the score split last; ``wattbot`` alone without other splits."""
    if not isinstance(wattbot, SplitTables):
        return [(LABELLED_SET, wattbot, True)]
    *others, score = wattbot.splits
    last = [(split_dataset(score), wattbot.splits[score], True)]
    return [(split_dataset(s), wattbot.splits[s], False) for s in others] + last


def _tables_for(claim: Claim, stage: str, dataset: str, wattbot: dict, suite: dict) -> dict[str, pd.DataFrame]:
    """Per-question tables of the claim's variants on one dataset (those the run has)."""
    if is_labelled(dataset):
        return {v: wattbot[(stage, v)] for v in claim.variants if (stage, v) in wattbot}
    return {v: suite[(dataset, v)] for v in claim.variants if (dataset, v) in suite}


# (dataset, stage, variant) -> question id -> that variant's output (pipeline/report/stats/outputs.py)
OutputsOf = Callable[[str, str, str], "dict[str, tuple] | None"]


def _sizing(claim: Claim, published: float | None, diff: float, sd: float) -> dict:
    """``n_needed`` for the published effect, else the margin, else the observed difference."""
    if published is not None:
        target, label = published, f"published {fmt(published, signed=True)}"
    elif claim.margin:
        target, label = claim.margin, f"margin {claim.margin:g}"
    else:
        target, label = diff, f"observed {fmt(diff, signed=True)}"
    n = n_needed(sd, target)
    return {"n_needed": n, "n_needed_for": label if n is not None else None}


def _judge(claim: Claim, dataset: str, lo: float, hi: float, control_mean: float) -> dict:
    """The verdict (against the published effect where the claim has one on ``dataset``) and its columns."""
    value = claim.effect.on(dataset) if claim.effect else None
    if claim.effect is None or value is None:
        return {"verdict": verdict(claim.direction, lo, hi, claim.margin), "note": ""}
    published = claim.effect.absolute(dataset, control_mean)
    assert published is not None
    if published == 0:  # a relative effect on a control scoring 0 has no size: the direction rule alone
        note = f"a {value:+.0%} relative effect of a control mean of 0 is 0: judged by the claimed direction"
        return {"verdict": verdict(claim.direction, lo, hi, claim.margin), "note": note}
    note = ""
    if claim.direction == "negligible":  # the margin's own reading, kept beside the published one
        note = f"within ±{claim.margin:g}: {verdict(claim.direction, lo, hi, claim.margin)}"
    return {
        "published_effect": value,
        "published_kind": claim.effect.kind,
        "published_diff": published,
        "verdict": published_verdict(lo, hi, published),
        "note": note,
    }


def control_of(claim: Claim, tables: dict[str, pd.DataFrame]) -> str:
    """The claim's control on one dataset: its variant, or the best of its candidates by mean (ties: the name)."""
    candidates = [claim.control] if isinstance(claim.control, str) else claim.control
    return max(candidates, key=lambda v: (tables[v][claim.metric].mean(), v))


def _measure(claim: Claim, dataset: str, tables: dict[str, pd.DataFrame], rep: Resampling) -> dict:
    """Pick the control (:func:`control_of`), then the paired comparison and its verdict."""
    control = control_of(claim, tables)
    ctrl_row, treat_row = compare(tables, [control, claim.treatment], claim.metric, rep)
    lo, hi = treat_row["diff_lo"], treat_row["diff_hi"]
    row = {
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
    } | _judge(claim, dataset, lo, hi, ctrl_row["mean"])
    if row["verdict"] in SIGN_UNDECIDED:
        row |= _sizing(claim, row.get("published_diff"), treat_row["diff"], treat_row["diff_sd"])
    return row


def _untestable(claim: Claim, tables: dict[str, pd.DataFrame], control: str) -> str:
    """Why the claim cannot be tested with this run's models ('' when it can)."""
    cond = claim.testable_if
    if not cond:
        return ""
    v = claim.treatment if cond.get("variant") == "treatment" else control
    got = float(tables[v][cond["metric"]].mean())
    return "" if got >= cond["min"] else f"{v} {cond['metric']} {got:.3f} < {cond['min']} (testable_if)"


def _same_scores(
    claim: Claim, compared: tuple[str, pd.Index], where: tuple[str, str], outputs: OutputsOf | None, retrieval_of: dict
) -> dict:
    """For a row whose every paired score is equal: "not testable: identical outputs" when the two
    variants' outputs are the same on every compared question, else a note saying on how many they
    differ (and, for answering variants, on how many their retrievals differ)."""
    (control, ids), (dataset, stage) = compared, where
    what = "answers" if is_labelled(dataset) and stage == "answering" else "retrieved ids"
    a = outputs(dataset, stage, claim.treatment) if outputs else None
    b = outputs(dataset, stage, control) if outputs else None
    if outputs is None or a is None or b is None or not all(q in a and q in b for q in ids):
        # no outputs passed for these variants, or not for these questions (another split's): scores alone
        return {"note": f"every paired {claim.metric} is equal: no spread to size n from"}
    k = differing(a, b, ids)
    if k == 0:
        return {"verdict": IDENTICAL, "note": f"the same {what} on all {len(ids)} questions", "n_needed": None}
    how = f" (in order alone on {reordered(a, b, ids)})" if what == "retrieved ids" else ""
    note = f"{what} differ on {k} of {len(ids)} questions{how}, yet every paired {claim.metric} is equal"
    if what == "answers":
        note += _retrievals_differ(outputs, dataset, [retrieval_of.get(v) for v in (claim.treatment, control)], ids)
    return {"note": note + ": no spread to size n from"}


def _retrievals_differ(outputs: OutputsOf, dataset: str, rvs: list[str | None], ids) -> str:
    """' (their retrievals differ on N)' for two answering variants on two different retrievals, else ''."""
    if not (rvs[0] and rvs[1]) or rvs[0] == rvs[1]:
        return ""
    a, b = outputs(dataset, "retrieval", rvs[0]), outputs(dataset, "retrieval", rvs[1])
    return "" if a is None or b is None else f" (their retrievals differ on {differing(a, b, ids)})"


def _row(
    c: Claim, where: tuple[str, str], tables: dict, rep: Resampling, outputs: OutputsOf | None, params: FiguresParams
) -> dict:
    """One measured row: the comparison, then what makes it untestable (identical outputs, the model)."""
    dataset, _stage = where
    row = _base(c) | {"dataset": dataset} | _measure(c, dataset, tables, rep)
    pairs = paired_values(tables, [row["control"], c.treatment], c.metric)
    if (pairs[c.treatment] == pairs[row["control"]]).all():  # every paired difference is 0
        retrieval_of = {av: spec.get("retrieval") for av, spec in params.answering.items()}
        same = _same_scores(c, (row["control"], pairs.index), where, outputs, retrieval_of)
        row |= same | {"note": "; ".join(n for n in (row["note"], same["note"], c.alike_because) if n)}
    why = _untestable(c, tables, row["control"])
    if why and row["verdict"] != IDENTICAL:
        row |= {"verdict": UNTESTABLE_MODEL, "note": why, "n_needed": None, "n_needed_for": None}
    return row


def family_of(dataset: str, split: str | None) -> str:
    """The Holm family of a row: its dataset and split ('wattbot/train', 'wattbot/test'; a suite dataset alone).
    A row of one of several labelled splits already names its split (``wattbot/test``: :class:`SplitTables`)."""
    return f"{dataset}/{split}" if split and "/" not in dataset else dataset


def _families(table: pd.DataFrame, score_split: str | None) -> pd.Series:
    """Each row's family: its own ``split`` where the table has one, else the scored split for the labelled set."""
    splits = table["split"] if "split" in table else pd.Series([None] * len(table), index=table.index)
    return pd.Series(
        [
            family_of(d, s if isinstance(s, str) and s else (score_split if is_labelled(d) else None))
            for d, s in zip(table["dataset"], splits, strict=True)
        ],
        index=table.index,
        dtype=object,
    )


def _finish(table: pd.DataFrame, score_split: str | None) -> pd.DataFrame:
    """Families, Holm within each over the rows that test, and the columns' types and rounding."""
    table["family"] = _families(table, score_split)
    tested = table["p_value"].notna() & ~table["verdict"].isin([IDENTICAL, UNTESTABLE_MODEL])
    table["p_holm"] = pd.Series(
        holm_by_family(table.loc[tested, "p_value"].astype(float).tolist(), table.loc[tested, "family"].tolist()),
        index=table.index[tested],
        dtype=float,
    )
    num = ["treatment_mean", "control_mean", "diff", "diff_lo", "diff_hi", "relative", "published_diff", "mde"]
    table[num] = table[num].astype(float).round(4)
    table[["p_value", "p_holm"]] = table[["p_value", "p_holm"]].astype(float).round(5)
    table["n"] = table["n"].astype("Int64")
    table["n_needed"] = table["n_needed"].astype("Int64")
    return table


def _not_run(c: Claim, ab: Ablation | None, elsewhere: dict | None) -> str:
    """Why a claim did not run in this config ('' when it did)."""
    if ab is None:
        where = [name for name, abls in (elsewhere or {}).items() if c.ablation in abls]
        return f"ablation '{c.ablation}' is not in this run's config" + (
            f" (it is in {', '.join(where)})" if where else ""
        )
    missing = [v for v in c.variants if v not in ab.variants]
    return f"ablation '{c.ablation}' has no variant {', '.join(missing)}" if missing else ""


def _base(c: Claim) -> dict:
    return {
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


def measure_claims(
    params: FiguresParams,
    wattbot: dict | SplitTables,
    suite: dict,
    ablations: dict[str, Ablation],
    claims: list[Claim] | None = None,
    outputs: OutputsOf | None = None,
) -> pd.DataFrame:
    """One row per claim and dataset (``COLUMNS``). ``wattbot``: the score split's per-question tables, or
    every labelled split's (:class:`SplitTables`: a WattBot claim's row per split); ``ablations``: this
    run's (with the suite one); a claim that did not run says where it would (``params.claims_elsewhere``:
    config file -> its ablations); ``outputs``: each variant's per-question outputs (identical outputs are
    not testable; without it, rows whose scores never differ stay undecided)."""
    rows = []
    for c in claims if claims is not None else load_claims():
        base, ab = _base(c), ablations.get(c.ablation)
        datasets = [d for ds in c.datasets for d in (params.suite.datasets if ds == "suite" else (ds,))] or list(
            c.datasets
        )
        # a variant (or the ablation) the config set to null is said, not left out silently
        why = params.dropped.why(c.ablation, c.variants) or _not_run(c, ab, params.claims_elsewhere)
        if why or ab is None:
            rows += [base | {"dataset": d, "verdict": "not run", "note": why} for d in datasets]
            continue
        targets = [
            (label, tables, primary)
            for d in datasets
            for label, tables, primary in (_labelled_splits(wattbot) if is_labelled(d) else [(d, {}, True)])
        ]
        for d, labelled_tables, primary in targets:
            tables = _tables_for(c, ab.stage, d, labelled_tables, suite)
            if not primary and set(tables) != set(c.variants):
                continue  # a variant does not answer this split (an LLM variant on train only): no row
            if set(tables) != set(c.variants) or any(c.metric not in t for t in tables.values()):
                rows.append(
                    base | {"dataset": d, "verdict": "not run", "note": f"no {c.metric} for every variant on {d}"}
                )
                continue
            rows.append(_row(c, (d, ab.stage), tables, params.resampling, outputs, params))
    return _finish(pd.DataFrame(rows, columns=COLUMNS), params.hashed.get("score_split"))


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """Rows per verdict, in :data:`VERDICTS`' order, those with none left out (the page, the run's summary)."""
    counts = table["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS if counts.get(v, 0)}
