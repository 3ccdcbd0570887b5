"""Every published claim in ``claims.yaml`` measured against this run's results: the rows of
``reports/claims.csv`` (the page that shows them: pipeline/report/pages/claims_table.py).

One row per claim and dataset (a WattBot claim: one per labelled split where both its variants answered,
``wattbot/test`` before ``wattbot/train``, when several are labelled: :class:`SplitTables`), and a pooled row
for a claim on several datasets (pipeline/report/claims/pooled.py). Each measured row is one test of the
claim's control (named, or chosen in advance on the pilot) against its treatment on the questions both have
(pipeline/report/claims/reading.py), its units documents where questions share one; the table's rule
(:data:`pipeline.report.claims.table.RULE`) says how verdicts, families, Holm, power and each claim's one
verdict follow (pipeline/report/claims/table.py, families.py, power.py). Before any of that:

- not run: the ablation (or one of the claim's variants) is not in this run's config, or the config dropped
  it (``name: null``: "variant X dropped by the config"), or no control was chosen in advance for a dataset.
- not testable (pipeline/report/claims/untestable.py): identical outputs, or a model that cannot show it.

Each row says whether its claim is as registered (pipeline/report/claims/registration.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pipeline.report.claims.claim import Claim, load_claims
from pipeline.report.claims.families import NOT_RUN, POOLED
from pipeline.report.claims.pooled import Part, pooled_row
from pipeline.report.claims.reading import Pairs, read, units_of
from pipeline.report.claims.registration import Registration, status
from pipeline.report.claims.table import VERDICTS, Row, finish, row_counts, verdict_counts
from pipeline.report.claims.untestable import IDENTICAL, UNTESTABLE_MODEL, OutputsOf, model_untestable, same_scores
from pipeline.report.params import Ablation, FiguresParams
from pipeline.report.sections import LABELLED_SET, is_labelled, split_dataset
from pipeline.report.stats.ablation import flip_settings
from pipeline.report.stats.pooling import difference_se
from pipeline.report.stats.signflip import Settings

__all__ = ["IDENTICAL", "UNTESTABLE_MODEL", "VERDICTS", "row_counts", "verdict_counts"]


@dataclass(frozen=True)
class SplitTables:
    """WattBot's per-question tables when several splits are labelled (``wattbot.solutions``): split ->
    its (stage, variant) tables, the score split last. A WattBot claim then has a row per split whose
    tables hold all its variants (``dataset`` = ``wattbot/<split>``), the score split's row last."""

    splits: dict[str, dict]


@dataclass(frozen=True)
class ClaimsInputs:
    """What the claims read besides the scores: each variant's per-question outputs (identical outputs are not
    testable; without them, rows whose scores never differ stay undecided), each dataset's question -> document
    cluster (``dataset`` value -> a Series indexed by question id), the registration, and whether to simulate
    power (tests of other things switch it off)."""

    outputs: OutputsOf | None = None
    clusters: dict[str, pd.Series] = field(default_factory=dict)
    registration: Registration | None = None
    sizing: bool = True


def _labelled_splits(wattbot: dict | SplitTables) -> list[tuple[str, dict, bool]]:
    """(dataset value, per-question tables, is the score split) of each labelled WattBot split, in row order:
    the other labelled splits first (test), the score split last; ``wattbot`` alone without other splits."""
    if not isinstance(wattbot, SplitTables):
        return [(LABELLED_SET, wattbot, True)]
    *others, score = wattbot.splits
    last = [(split_dataset(score), wattbot.splits[score], True)]
    return [(split_dataset(s), wattbot.splits[s], False) for s in others] + last


def _score_tables(wattbot: dict | SplitTables) -> dict:
    """The score split's per-question tables: the pilot of a held-out WattBot row's power."""
    return wattbot if not isinstance(wattbot, SplitTables) else wattbot.splits[list(wattbot.splits)[-1]]


def _tables_for(variants: list[str], stage: str, dataset: str, wattbot: dict, suite: dict) -> dict[str, pd.DataFrame]:
    """Per-question tables of the variants on one dataset (those the run has)."""
    if is_labelled(dataset):
        return {v: wattbot[(stage, v)] for v in variants if (stage, v) in wattbot}
    return {v: suite[(dataset, v)] for v in variants if (dataset, v) in suite}


def _pairs(tables: dict[str, pd.DataFrame], treatment: str, control: str, metric: str) -> pd.DataFrame:
    """questions x [treatment, control] on the questions both have a value for (none: an empty frame)."""
    cols = pd.concat([tables[v][metric].rename(v) for v in (treatment, control)], axis=1)
    return cols.loc[:, ~cols.columns.duplicated()].dropna()


def _control_chosen(c: Claim) -> str:
    if isinstance(c.control, str):
        return "named in advance" + (f": {c.control_why}" if c.control_why else "")
    return f"best of {', '.join(c.control)}, chosen on {c.control_why}"


def _measured(
    c: Claim, where: tuple[str, str], tables: dict, control: str, ctx: ClaimsInputs, settings: Settings
) -> dict:
    """The row's measurement: its test, interval, p and verdict (pipeline/report/claims/reading.py)."""
    dataset, _stage = where
    pairs = _pairs(tables, c.treatment, control, c.metric)
    t, k = pairs[c.treatment].to_numpy(float), pairs[control].to_numpy(float)
    found = ctx.clusters.get(dataset)
    labels = None if found is None else [str(x) for x in found.reindex(pairs.index).fillna("").tolist()]
    if labels is not None:  # a question without a label (none cited) is a cluster of its own
        labels = [x or f"no document #{i}" for i, x in enumerate(labels)]
    r = read(c, dataset, Pairs(t, k, units_of(labels)), settings)
    means = (float(t.mean()), float(k.mean())) if len(t) else (np.nan, np.nan)
    return {
        "n": len(t),
        "units": f"documents ({r.units} clusters)" if r.units < len(t) else "questions",
        "differing": r.differing,
        "treatment_mean": means[0],
        "control_mean": means[1],
        "diff": means[0] - means[1],
        "relative": means[0] / means[1] - 1 if means[1] else None,
        "scale": r.scale,
        "test": r.test,
        "estimate": r.estimate,
        "lo": r.lo,
        "hi": r.hi,
        "level": r.level,
        "p_value": r.p,
        "mc_se_p": r.mc_se,
        "mc_se_ends": r.mc_se_ends,
        "resamples": r.resamples,
        "published_effect": r.published,
        "published_kind": c.effect.kind if c.effect and r.published is not None else None,
        "verdict": r.verdict,
        "note": r.reason,
        "_pairs": Pairs(t, k, units_of(labels)),
    }


def _row(c: Claim, where: tuple[str, str], tables: dict, control: str, run: _Run) -> Row:
    """One measured row: the test, then what makes it untestable (identical outputs, the model)."""
    dataset, stage = where
    cols = _base(c, run) | {"dataset": dataset, "control": control, "control_chosen": _control_chosen(c)}
    cols |= _measured(c, where, tables, control, run.inputs, run.settings)
    pairs: Pairs = cols.pop("_pairs")
    if len(pairs.t) and (pairs.t == pairs.c).all():  # every paired difference is 0
        retrieval_of = {av: spec.get("retrieval") for av, spec in run.params.answering.items()}
        ids = _pairs(tables, c.treatment, control, c.metric).index
        same = same_scores(c, (control, ids), where, run.outputs, retrieval_of)
        why = "" if same.get("verdict") == IDENTICAL else cols["note"]  # identical: no sample could differ
        cols |= same | {"note": "; ".join(n for n in (why, same["note"], c.alike_because) if n)}
    why = model_untestable(c, tables, control)
    if why and cols["verdict"] != IDENTICAL:
        cols |= {"verdict": UNTESTABLE_MODEL, "note": why}
    return Row(cols, c, _pilot(c, where, control, pairs, run), pairs)


def _pilot(c: Claim, where: tuple[str, str], control: str, pairs: Pairs, run: _Run) -> Pairs:
    """The population a row's power is simulated from: for a held-out WattBot row the score split's pairs of
    the same variants (when it has both), else the row's own (pipeline/report/claims/power.py)."""
    dataset, stage = where
    score = run.score_tables
    if (
        is_labelled(dataset)
        and dataset != run.score_dataset
        and all((stage, v) in score for v in (c.treatment, control))
    ):
        p = _pairs({v: score[(stage, v)] for v in (c.treatment, control)}, c.treatment, control, c.metric)
        return Pairs(p[c.treatment].to_numpy(float), p[control].to_numpy(float))
    return pairs


LEFT_OUT = "left out by the config"  # a "not run" row's note that `make readme-check` accepts (report.claims_left_out)


def left_out_why(c: Claim, left_out: dict[str, str]) -> str:
    """The row's note for a claim the config declares it does not run, and why ('' when it does not)."""
    return f"{LEFT_OUT} (report.claims_left_out): {left_out[c.id]}" if c.id in left_out else ""


def _not_run(c: Claim, ab: Ablation | None, elsewhere: dict | None) -> str:
    """Why a claim did not run in this config ('' when it did)."""
    if ab is None:
        where = [name for name, abls in (elsewhere or {}).items() if c.ablation in abls]
        return f"ablation '{c.ablation}' is not in this run's config" + (
            f" (it is in {', '.join(where)})" if where else ""
        )
    missing = [v for v in c.variants if v not in ab.variants]
    return f"ablation '{c.ablation}' has no variant {', '.join(missing)}" if missing else ""


@dataclass(frozen=True)
class _Run:
    """What every row of one table reads: the params, the settings of its tests, the outputs and inputs."""

    params: FiguresParams
    settings: Settings
    outputs: OutputsOf | None
    inputs: ClaimsInputs
    score_tables: dict
    score_dataset: str


def _base(c: Claim, run: _Run) -> dict:
    return {
        "claim_id": c.id,
        "claim_key": c.key,
        "system": c.system,
        "claim": c.claim,
        "source": c.source,
        "published": c.published,
        "ablation": c.ablation,
        "metric": c.metric,
        "treatment": c.treatment,
        "control": c.control_text(),
        "direction": c.direction,
        "margin": c.margin,
        "margin_reason": c.margin_reason or None,
        "registration": status(c, run.inputs.registration) or None,
    }


def _claim_rows(
    c: Claim, ab: Ablation, datasets: list[str], wattbot: dict | SplitTables, suite: dict, run: _Run
) -> list[Row]:
    """The rows of one claim that ran, then its pooled row when it has several datasets."""
    rows = []
    targets = [
        (label, tables, primary)
        for d in datasets
        for label, tables, primary in (_labelled_splits(wattbot) if is_labelled(d) else [(d, {}, True)])
    ]
    for d, labelled_tables, primary in targets:
        control = c.control_on(d)
        if control is None:
            why = f"no control chosen in advance for {d} (claims.yaml control.chosen)"
            rows.append(Row(_base(c, run) | {"dataset": d, "verdict": NOT_RUN, "note": why}, c))
            continue
        tables = _tables_for([c.treatment, control], ab.stage, d, labelled_tables, suite)
        if not primary and set(tables) != {c.treatment, control}:
            continue  # a variant does not answer this split (an LLM variant on train only): no row
        if set(tables) != {c.treatment, control} or any(c.metric not in t for t in tables.values()):
            why = f"no {c.metric} for every variant on {d}"
            rows.append(Row(_base(c, run) | {"dataset": d, "verdict": NOT_RUN, "note": why}, c))
            continue
        rows.append(_row(c, (d, ab.stage), tables, control, run))
    if len({r.cols["dataset"] for r in rows if not is_labelled(r.cols["dataset"])}) > 1:
        rows.append(_pooled(c, rows, run))
    return rows


def _pooled(c: Claim, rows: list[Row], run: _Run) -> Row:
    parts = []
    for r in rows:
        v = r.cols["verdict"]
        out = "" if v not in (NOT_RUN, IDENTICAL, UNTESTABLE_MODEL) else v
        if not out and r.pairs is not None and len(r.pairs.t) < 2:
            out = "fewer than 2 questions"
        elif not out and r.pairs is not None and not difference_se(r.pairs.t, r.pairs.c, r.pairs.clusters) > 0:
            out = "every paired difference equal: no standard error"
        parts.append(Part(r.cols["dataset"], r.pairs, out))
    got = pooled_row(c, parts, run.settings.alpha)
    cols = _base(c, run) | {
        "dataset": POOLED,
        "control": ", ".join(dict.fromkeys(str(r.cols["control"]) for r in rows)),
    }
    cols |= {
        "control_chosen": _control_chosen(c),
        "published_effect": got.pop("published", None),
        "published_kind": "absolute" if c.pooled and c.pooled.value is not None else None,
        "p_value": got.pop("p", None),
        "resamples": None,
    }
    got.pop("reason", None)
    return Row(cols | got, c)


def measure_claims(
    params: FiguresParams,
    wattbot: dict | SplitTables,
    suite: dict,
    ablations: dict[str, Ablation],
    claims: list[Claim] | None = None,
    inputs: ClaimsInputs | None = None,
) -> pd.DataFrame:
    """One row per claim and dataset (and a pooled row per claim on several datasets; the columns:
    :data:`pipeline.report.claims.table.COLUMNS`). ``wattbot``: the score split's per-question tables, or
    every labelled split's (:class:`SplitTables`); ``ablations``: this run's (with the suite one); a claim that
    did not run says where it would (``params.claims_elsewhere``); ``inputs``: the outputs, document clusters,
    registration and whether to simulate power (:class:`ClaimsInputs`)."""
    inputs = inputs or ClaimsInputs()
    score = _labelled_splits(wattbot)[-1][0]
    run = _Run(params, flip_settings(params.resampling), inputs.outputs, inputs, _score_tables(wattbot), score)
    rows: list[Row] = []
    for c in claims if claims is not None else load_claims():
        ab = ablations.get(c.ablation)
        datasets = [d for ds in c.datasets for d in (params.suite.datasets if ds == "suite" else (ds,))] or list(
            c.datasets
        )
        # a claim the config leaves out (report.claims_left_out), a variant (or the ablation) it set to null:
        # said in the row, not left out silently
        why = left_out_why(c, params.left_out) or params.dropped.why(c.ablation, c.variants)
        why = why or _not_run(c, ab, params.claims_elsewhere)
        if why or ab is None:
            rows += [Row(_base(c, run) | {"dataset": d, "verdict": NOT_RUN, "note": why}, c) for d in datasets]
            continue
        rows += _claim_rows(c, ab, datasets, wattbot, suite, run)
    return finish(rows, params.hashed.get("score_split"), params.resampling.seed, inputs.sizing)
