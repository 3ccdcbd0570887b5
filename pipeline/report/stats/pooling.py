"""Pooled claims (issue #44 item 9): one effect from a few datasets, fixed and random effects, with I².

Why: a claim made "on average across four benchmarks" is a claim about the pooled effect, which testing
each dataset alone never tests. Two poolings answer two questions:

- fixed (common) effect: inverse-variance weighted mean, normal interval. It assumes one true effect
  shared by every dataset, so it is precise and, when the datasets disagree, too sure of itself.
- random effects: the mean of the datasets' true effects, which may differ. With 3-4 datasets the usual
  DerSimonian-Laird interval (normal quantile) is far too narrow (IntHout, Ioannidis & Borm 2014, BMC Med.
  Res. Methodol. 14:25), so the interval and p are Hartung-Knapp-Sidik-Jonkman's (Hartung & Knapp 2001,
  Stat. Med. 20:3875; Sidik & Jonkman 2002, Stat. Med. 21:3153): a t quantile with k - 1 degrees of
  freedom and the weighted residual variance, here with the modification that it is never narrower than
  the plain random-effects variance (``max(1, q)``; Knapp & Hartung 2003, Röver, Knapp & Friede 2015,
  BMC Med. Res. Methodol. 15:99), recommended for few studies. The between-dataset variance tau² is
  Paule-Mandel's (Paule & Mandel 1982; recommended by Veroniki et al. 2016, Res. Synth. Methods 7:55).

Heterogeneity: Cochran's Q under the fixed effect and I² = max(0, (Q - (k - 1)) / Q) (Higgins & Thompson
2002, Stat. Med. 21:1539), the share of the spread of the estimates beyond what their standard errors
explain. Each interval and its p come from one statistic, so they agree: the interval excludes 0 exactly
when p < alpha.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm
from scipy.stats import t as student

from pipeline.report.stats.signflip import ALPHA, paired_units


@dataclass(frozen=True)
class PooledEstimate:
    estimate: float
    se: float
    lo: float
    hi: float
    p: float
    method: str


@dataclass(frozen=True)
class Pooled:
    """The pooled effect of ``k`` datasets (``labels``) by both models, and their heterogeneity."""

    k: int
    labels: tuple[str, ...]
    fixed: PooledEstimate | None
    random: PooledEstimate | None
    tau2: float
    q: float
    i2: float
    reason: str = ""  # why nothing is pooled ('' when it is)


FIXED = "fixed effect (inverse variance, normal)"
RANDOM = "random effects (Paule-Mandel tau², modified Hartung-Knapp-Sidik-Jonkman, t with k-1 df)"


def difference_se(treatment, control, clusters: Sequence | None = None) -> float:
    """Standard error of the mean paired difference: ``sd(d) / sqrt(n)``, or with ``clusters`` the
    cluster-robust one (sums per cluster, ``G / (G - 1)`` small-sample factor), for pooling a dataset."""
    u = paired_units(treatment, control, "difference", clusters)
    if u.n < 2 or len(u.d) < 2:
        return math.nan
    mean = u.d.sum() / u.n
    g = len(u.d)
    return float(math.sqrt(g / (g - 1) * ((u.d - mean * u.w) ** 2).sum()) / u.n)


def paule_mandel(y: np.ndarray, v: np.ndarray) -> float:
    """tau² solving the generalised Q = k - 1 (0 when the fixed-effect Q is already at most k - 1)."""
    k = len(y)

    def q_minus(tau2: float) -> float:
        w = 1 / (v + tau2)
        mu = (w * y).sum() / w.sum()
        return float((w * (y - mu) ** 2).sum() - (k - 1))

    if q_minus(0.0) <= 0:
        return 0.0
    top = float(np.var(y) + v.max()) or 1.0
    while q_minus(top) > 0:
        top *= 2
    return float(brentq(q_minus, 0.0, top, xtol=1e-14, rtol=1e-12))


def _estimate(mu: float, se: float, quantile, cdf, method: str, alpha: float) -> PooledEstimate:
    half = quantile(1 - alpha / 2) * se
    p = float(2 * (1 - cdf(abs(mu) / se))) if se > 0 else (0.0 if mu else 1.0)
    return PooledEstimate(float(mu), float(se), float(mu - half), float(mu + half), p, method)


def pool(estimates: Sequence[float], ses: Sequence[float], labels: Sequence[str] = (), alpha: float = ALPHA) -> Pooled:
    """Fixed and random-effects pooling of per-dataset ``estimates`` with standard errors ``ses``."""
    y, s = np.asarray(estimates, dtype=float), np.asarray(ses, dtype=float)
    names = tuple(labels) or tuple(str(i) for i in range(len(y)))
    k = len(y)
    if k != len(s) or k != len(names):
        raise ValueError("pool: one standard error and one label per estimate")
    if k < 2 or not np.isfinite(y).all() or not (np.isfinite(s) & (s > 0)).all():
        why = "fewer than 2 datasets" if k < 2 else "a dataset without an estimate or a positive standard error"
        return Pooled(k, names, None, None, math.nan, math.nan, math.nan, f"nothing pooled: {why}")
    v = s**2
    w = 1 / v
    mu_fe = (w * y).sum() / w.sum()
    q = float((w * (y - mu_fe) ** 2).sum())
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    fixed = _estimate(mu_fe, math.sqrt(1 / w.sum()), norm.ppf, norm.cdf, FIXED, alpha)
    tau2 = paule_mandel(y, v)
    ws = 1 / (v + tau2)
    mu_re = (ws * y).sum() / ws.sum()
    q_hk = float((ws * (y - mu_re) ** 2).sum() / (k - 1))
    se_re = math.sqrt(max(1.0, q_hk) / ws.sum())
    df = k - 1
    random = _estimate(mu_re, se_re, lambda x: student.ppf(x, df), lambda x: student.cdf(x, df), RANDOM, alpha)
    return Pooled(k, names, fixed, random, tau2, q, i2)
