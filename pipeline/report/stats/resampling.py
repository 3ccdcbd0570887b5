"""The interval of one variant's mean score: the percentile bootstrap over questions.

A comparison of two variants is not this: it is the paired sign-flip test and the interval that is its
inversion (:mod:`pipeline.report.stats.signflip`), so its interval and its p cannot disagree. One mean has
no test to agree with, and its bootstrap interval is what the leaderboards and the figures show. The
resampling is scipy.stats' ``bootstrap``, driven by a seeded numpy generator only, so a report is
byte-identical on a rerun; ``report.bootstrap`` (10,000 in the shipped configs) resamples per interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap

ALPHA = 0.05


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float


def bootstrap_mean(values, n_boot: int = 10_000, seed: int = 0, alpha: float = ALPHA) -> Interval:
    """Percentile ``1 - alpha`` interval of the mean of ``values`` (no NaN): question indices drawn with
    replacement (``rng.integers(0, n, (n_boot, n))``, scipy's paired draw of one column). One question's every
    resample is that question: the interval is the point."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or np.isnan(x).any():
        raise ValueError("bootstrap_mean needs a 1-D array of values without NaN")
    if x.size < 1:
        raise ValueError("bootstrap needs at least one question")
    point = float(x.mean())
    if x.size == 1:  # scipy wants two observations
        return Interval(point, point, point)
    res = bootstrap(
        (x,),
        lambda col, axis=-1: col.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=n_boot,
        method="percentile",
        confidence_level=1 - alpha,
        rng=np.random.default_rng(seed),
    )
    lo, hi = res.confidence_interval
    return Interval(point, float(lo), float(hi))
