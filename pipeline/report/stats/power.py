"""Power-sized samples of a labelled split for claims whose variants are too slow to answer all of it.

The local model costs seconds a question on 2 cores, so the LLM claims' test rows (issue #33 item 6)
answer a sample of the labelled test questions. Its size comes from the score split as a pilot (train and
test questions are disjoint): per claim, the n a paired two-sided 5% test needs for 80% power to detect
the published effect (:func:`pipeline.report.stats.verdicts.n_needed`, from the spread of the pilot's
per-question differences), at least ``floor`` and at most the claim's ``cap`` (its share of the claims
run's time). A group's variants answer one sample, so the paired variants of a claim answer the same
ids; its size is the largest of its claims'. The sample is a seeded shuffle of the labelled ids cut to n,
so one seed and n give the same ids on every machine and a larger n keeps the smaller's ids. A claim
capped below its n is measured on the cap and its row reads undecided with the n it needs (the claims
table's own ``n_needed``, from the test differences).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.report.stats.verdicts import n_needed

COLUMNS = ["claim", "treatment", "control", "pilot_n", "sd_diff", "published_diff", "n_needed", "floor", "cap", "n"]


@dataclass(frozen=True)
class SizedClaim:
    """A claim as the sizing reads it: its two variants, the published effect and its kind, its cap."""

    id: str
    treatment: str
    control: str
    effect: float  # treatment - control in the metric's units (absolute), or a fraction of the control's mean
    kind: str  # absolute | relative
    metric: str
    cap: int


def claim_size(claim: SizedClaim, pilot: dict[str, pd.DataFrame], floor: int) -> dict:
    """One claim's row: the pilot's paired spread, the published effect in the metric's units (a relative
    one times the control's pilot mean), the n it needs and the n used (needed, within floor..cap)."""
    for v in (claim.treatment, claim.control):
        if v not in pilot:
            raise ValueError(f"claim {claim.id}: no pilot scores of variant '{v}' (is it in the claim's group?)")
    t = pilot[claim.treatment].set_index("id")[claim.metric]
    c = pilot[claim.control].set_index("id")[claim.metric]
    common = t.index.intersection(c.index)
    diff = (t[common] - c[common]).to_numpy(float)
    sd = float(np.std(diff, ddof=1)) if len(diff) > 1 else math.nan
    published = claim.effect * float(c[common].mean()) if claim.kind == "relative" else claim.effect
    needed = n_needed(sd, published)
    n = min(claim.cap, max(floor, needed or floor))
    return {
        "claim": claim.id,
        "treatment": claim.treatment,
        "control": claim.control,
        "pilot_n": len(diff),
        "sd_diff": round(sd, 6),
        "published_diff": round(published, 6),
        "n_needed": needed,
        "floor": floor,
        "cap": claim.cap,
        "n": n,
    }


def group_sizes(claims: list[SizedClaim], pilot: dict[str, pd.DataFrame], floor: int) -> pd.DataFrame:
    """The sizing table of a group's claims (:data:`COLUMNS`)."""
    return pd.DataFrame([claim_size(c, pilot, floor) for c in claims], columns=COLUMNS)


def draw_ids(labelled: list[str], n: int, seed: int) -> list[str]:
    """``n`` of the ``labelled`` ids (all when fewer): a shuffle seeded by ``seed`` of the sorted ids, cut
    to n, returned sorted (nested: the first n of one shuffle)."""
    ids = sorted(set(labelled))
    order = np.random.default_rng(seed).permutation(len(ids))
    return sorted(ids[i] for i in order[: min(n, len(ids))])
