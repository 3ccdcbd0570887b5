"""Paired statistics over questions: bootstrap intervals and a randomisation test.

Every variant of an ablation is scored on the same questions, so intervals resample question
*indices* once and apply them to every variant (paired bootstrap): the spread of a difference
then reflects how the two variants disagree on questions, not how hard the questions are.
The resampling is scipy.stats' (``bootstrap``, ``permutation_test``), driven by seeded numpy
generators only, so a report is byte-identical on a rerun.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap, permutation_test

ALPHA = 0.05


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float


def paired_bootstrap(
    matrix: np.ndarray, n_boot: int = 2000, seed: int = 0, alpha: float = ALPHA
) -> tuple[list[Interval], list[Interval]]:
    """Percentile intervals of each column's mean, and of each column's mean minus column 0's.

    ``matrix``: questions x variants, no NaN (drop questions a variant lacks before calling).
    ``scipy.stats.bootstrap`` with ``paired=True`` draws one set of question indices per resample
    (``rng.integers(0, n, (n_boot, n))``) for every column, and one vector-valued statistic (the
    means, then the differences to column 0) gives all intervals from those same draws.
    """
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2 or np.isnan(x).any():
        raise ValueError("paired_bootstrap needs a 2-D questions x variants matrix without NaN")
    if x.shape[0] < 1:
        raise ValueError("bootstrap needs at least one question")
    point = x.mean(axis=0)
    k = x.shape[1]
    if x.shape[0] == 1:  # scipy wants two observations; every resample of one question is that question
        lo = hi = np.concatenate([point, point - point[0]])
    else:

        def means_and_diffs(*cols, axis=-1):
            means = np.stack([c.mean(axis=axis) for c in cols])
            return np.concatenate([means, means - means[0]])

        res = bootstrap(
            tuple(x.T),
            means_and_diffs,
            paired=True,
            vectorized=True,
            n_resamples=n_boot,
            method="percentile",
            confidence_level=1 - alpha,
            rng=np.random.default_rng(seed),
        )
        lo, hi = res.confidence_interval
    cis = [Interval(float(point[j]), float(lo[j]), float(hi[j])) for j in range(k)]
    diffs = [Interval(float(point[j] - point[0]), float(lo[k + j]), float(hi[k + j])) for j in range(k)]
    return cis, diffs


def bootstrap_mean(values, n_boot: int = 2000, seed: int = 0, alpha: float = ALPHA) -> Interval:
    """Interval of one variant's mean (a one-column :func:`paired_bootstrap`)."""
    return paired_bootstrap(np.asarray(values, dtype=float)[:, None], n_boot, seed, alpha)[0][0]


def randomisation_p(a, b, n_perm: int = 10000, seed: int = 0) -> float:
    """Two-sided paired randomisation (sign-flip) test of mean(a - b) = 0.

    Under the null each question's difference is as likely negative as positive:
    ``scipy.stats.permutation_test`` swapping a and b within questions (``permutation_type=
    "samples"``) on |mean(a - b)|. With at most ``n_perm`` sign patterns (2**n) all are
    enumerated and p is exact; otherwise ``n_perm`` random patterns are drawn and
    p = (1 + extreme) / (1 + n_perm), never 0. One question's two sign patterns are equally extreme:
    p = 1 (scipy wants two observations; issue #44 item 12). The claims' test with its interval and the
    reason a row with few differing questions is undecided is :func:`pipeline.report.stats.signflip.paired_test`.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or np.isnan(a - b).any():
        raise ValueError("randomisation_p needs paired values without NaN")
    if a.size == 1:
        return 1.0

    def abs_mean_diff(x, y, axis=-1):
        return np.abs((x - y).mean(axis=axis))

    res = permutation_test(
        (a, b),
        abs_mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_perm,
        alternative="greater",
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)
