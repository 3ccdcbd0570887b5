"""Paired statistics over questions: bootstrap intervals and a randomisation test.

Every variant of an ablation is scored on the same questions, so intervals resample question
*indices* once and apply them to every variant (paired bootstrap): the spread of a difference
then reflects how the two variants disagree on questions, not how hard the questions are.
Seeded numpy generators only, so a report is byte-identical on a rerun.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

ALPHA = 0.05


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float


def resample_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` rows of ``n`` question indices drawn with replacement (same seed, same rows)."""
    if n < 1:
        raise ValueError("bootstrap needs at least one question")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def _interval(point: float, draws: np.ndarray, alpha: float) -> Interval:
    lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return Interval(float(point), float(lo), float(hi))


def paired_bootstrap(matrix: np.ndarray, n_boot: int = 2000, seed: int = 0,
                     alpha: float = ALPHA) -> tuple[list[Interval], list[Interval]]:
    """Percentile intervals of each column's mean, and of each column's mean minus column 0's.

    ``matrix``: questions x variants, no NaN (drop questions a variant lacks before calling).
    The differences use the same resampled questions as the means (paired).
    """
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2 or np.isnan(x).any():
        raise ValueError("paired_bootstrap needs a 2-D questions x variants matrix without NaN")
    idx = resample_indices(x.shape[0], n_boot, seed)
    means = x[idx].mean(axis=1)  # n_boot x variants
    point = x.mean(axis=0)
    cis = [_interval(point[j], means[:, j], alpha) for j in range(x.shape[1])]
    diffs = [_interval(point[j] - point[0], means[:, j] - means[:, 0], alpha) for j in range(x.shape[1])]
    return cis, diffs


def bootstrap_mean(values, n_boot: int = 2000, seed: int = 0, alpha: float = ALPHA) -> Interval:
    """Interval of one variant's mean (a one-column :func:`paired_bootstrap`)."""
    return paired_bootstrap(np.asarray(values, dtype=float)[:, None], n_boot, seed, alpha)[0][0]


def randomisation_p(a, b, n_perm: int = 10000, seed: int = 0) -> float:
    """Two-sided paired randomisation (sign-flip) test of mean(a - b) = 0.

    Under the null each question's difference is as likely negative as positive. With at most
    ``n_perm`` sign patterns (2**n) all are enumerated and p is exact; otherwise ``n_perm``
    random patterns are drawn and p = (1 + extreme) / (1 + n_perm), never 0.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0 or np.isnan(d).any():
        raise ValueError("randomisation_p needs paired values without NaN")
    observed = abs(d.mean())
    tol = 1e-12 * max(1.0, observed)
    if 2 ** d.size <= n_perm:
        signs = np.array(list(product((1.0, -1.0), repeat=d.size)))
        return float(np.mean(np.abs(signs @ d / d.size) >= observed - tol))
    signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(n_perm, d.size))
    extreme = int(np.sum(np.abs(signs @ d / d.size) >= observed - tol))
    return (1 + extreme) / (1 + n_perm)
