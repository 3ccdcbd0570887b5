"""Rows no sample size could decide: two variants with identical outputs, or a model that cannot show the
claimed effect (``testable_if``).

- not testable: identical outputs: the two variants return the same answers (retrieved ids) on every
  compared question (:mod:`pipeline.report.stats.outputs`): no sample size could tell them apart.
- not testable with this model: ``testable_if`` fails (e.g. the LLM answers too little for a prompt effect
  to show).

Variants whose outputs differ but score alike on every question stay undecided, and the note says on how
many questions their outputs differ.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from pipeline.report.claims.claim import Claim
from pipeline.report.sections import is_labelled
from pipeline.report.stats.outputs import differing, reordered

IDENTICAL = "not testable: identical outputs"
UNTESTABLE_MODEL = "not testable with this model"

# (dataset, stage, variant) -> question id -> that variant's output (pipeline/report/stats/outputs.py)
OutputsOf = Callable[[str, str, str], "dict[str, tuple] | None"]


def model_untestable(claim: Claim, tables: dict[str, pd.DataFrame], control: str) -> str:
    """Why the claim cannot be tested with this run's models ('' when it can)."""
    cond = claim.testable_if
    if not cond:
        return ""
    v = claim.treatment if cond.get("variant") == "treatment" else control
    got = float(tables[v][cond["metric"]].mean())
    return "" if got >= cond["min"] else f"{v} {cond['metric']} {got:.3f} < {cond['min']} (testable_if)"


def same_scores(
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
        return {"note": f"every paired {claim.metric} is equal"}
    k = differing(a, b, ids)
    if k == 0:
        return {"verdict": IDENTICAL, "note": f"the same {what} on all {len(ids)} questions"}
    how = f" (in order alone on {reordered(a, b, ids)})" if what == "retrieved ids" else ""
    note = f"{what} differ on {k} of {len(ids)} questions{how}, yet every paired {claim.metric} is equal"
    if what == "answers":
        note += _retrievals_differ(outputs, dataset, [retrieval_of.get(v) for v in (claim.treatment, control)], ids)
    return {"note": note}


def _retrievals_differ(outputs: OutputsOf, dataset: str, rvs: list[str | None], ids) -> str:
    """' (their retrievals differ on N)' for two answering variants on two different retrievals, else ''."""
    if not (rvs[0] and rvs[1]) or rvs[0] == rvs[1]:
        return ""
    a, b = outputs(dataset, "retrieval", rvs[0]), outputs(dataset, "retrieval", rvs[1])
    return "" if a is None or b is None else f" (their retrievals differ on {differing(a, b, ids)})"
