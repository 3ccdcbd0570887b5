"""One row's decision (issue #44 items 1, 2, 5, 10): the one test a claim's reading needs on one dataset, and
the verdict read from that test's own interval.

- A claim with a published effect on this dataset is judged on that effect's own scale: an absolute effect
  on the difference of means, a relative one on ``mean(t) / mean(c) - 1`` (the ratio test's interval),
  never a relative effect times the control's observed mean.
- Any other ``greater``/``less`` claim: the difference of means against 0.
- A ``negligible`` claim: two one-sided tests against its margin (its smallest effect of interest), and
  nothing else: one reading per claim.

The test is the paired sign-flip test with its inverted interval (:mod:`pipeline.report.stats.signflip`,
:mod:`pipeline.report.stats.equivalence`), so a row whose interval excludes 0 has p < 0.05 and the reverse.
Its units are questions, or documents where questions share one (:func:`units_of`). Below
:func:`pipeline.report.stats.signflip.min_differing` differing units only "undecided" can be read, and the
row says why. After the family's Holm adjustment (pipeline/report/claims/families.py) a verdict that
excludes 0 without ``p_holm < alpha`` is read again as if its interval contained 0 (:func:`at_holm_level`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.report.claims.claim import Claim
from pipeline.report.stats.equivalence import equivalence_test
from pipeline.report.stats.signflip import Settings, paired_test
from pipeline.report.stats.verdicts import (
    CONSISTENT,
    CONTRADICTED,
    LARGER,
    REPRODUCED,
    SMALLER,
    UNDECIDED,
    equivalence_verdict,
    paired_verdict,
    published_verdict,
    verdict,
)

EXCLUDES_ZERO = (REPRODUCED, CONTRADICTED, CONSISTENT, SMALLER, LARGER)  # verdicts that need p < alpha
SIGN_FLIP, TOST = "sign-flip", "two one-sided tests"


@dataclass(frozen=True)
class Pairs:
    """A row's paired per-question values and, where questions share a document, one cluster label each."""

    t: np.ndarray
    c: np.ndarray
    clusters: list[str] | None = None


def units_of(labels: Sequence[str] | None) -> list[str] | None:
    """The sign-flip units of a row: its questions' document clusters when two of them share one (then the
    questions of one document are flipped together), else None (each question its own unit)."""
    if labels is None or len(set(labels)) == len(labels):
        return None
    return list(labels)


@dataclass(frozen=True)
class Reading:
    scale: str  # difference (mean(t) - mean(c)) or ratio (mean(t) / mean(c) - 1)
    test: str  # sign-flip, or two one-sided tests against the margin
    estimate: float
    lo: float
    hi: float
    level: float  # the interval's coverage: 0.95, or 0.90 for two one-sided tests at 5%
    p: float  # unadjusted: two-sided, or the larger one-sided p of the two (what Holm adjusts)
    mc_se: float  # Monte Carlo standard error of p (0 when every sign pattern was enumerated)
    mc_se_ends: float  # of the interval's ends (the larger of the two; NaN for two one-sided tests)
    resamples: int
    units: int
    differing: int
    published: float | None  # the published effect on ``scale`` (None without one on this dataset)
    verdict: str
    reason: str  # why only "undecided" can be read ('' when the data can decide)


def read(claim: Claim, dataset: str, pairs: Pairs, settings: Settings) -> Reading:
    """The row's test and verdict (module docstring)."""
    published = claim.effect.on(dataset.split("/")[0]) if claim.effect else None
    if claim.direction == "negligible":
        assert claim.margin is not None
        eq = equivalence_test(pairs.t, pairs.c, float(claim.margin), clusters=pairs.clusters, settings=settings)
        return Reading(
            "difference", TOST, eq.estimate, eq.lo, eq.hi, 1 - 2 * settings.alpha, eq.p, eq.mc_se_p, math.nan,
            eq.resamples, eq.units, eq.differing, published, equivalence_verdict(eq), eq.reason,
        )  # fmt: skip
    scale = "ratio" if published is not None and claim.effect and claim.effect.kind == "relative" else "difference"
    r = paired_test(pairs.t, pairs.c, scale, pairs.clusters, settings)
    return Reading(
        scale, SIGN_FLIP, r.estimate, r.lo, r.hi, 1 - settings.alpha, r.p, r.mc_se_p, max(r.mc_se_lo, r.mc_se_hi),
        r.resamples, r.units, r.differing, published, paired_verdict(r, claim.direction, published), r.reason,
    )  # fmt: skip


def at_holm_level(v: str, direction: str, lo: float, hi: float, published: float | None, holm_rejects: bool) -> str:
    """The verdict at the family's Holm-adjusted level: unchanged when the adjusted p is below alpha or the
    verdict does not exclude 0; else read again on the interval stretched to contain 0 (a negligible claim's
    'reproduced' becomes undecided; its 'contradicted', the interval wholly beyond the margin, stays)."""
    if holm_rejects or v not in EXCLUDES_ZERO:
        return v
    if direction == "negligible":
        return UNDECIDED if v == REPRODUCED else v
    lo0, hi0 = min(lo, 0.0), max(hi, 0.0)
    return verdict(direction, lo0, hi0) if published is None else published_verdict(lo0, hi0, published)
