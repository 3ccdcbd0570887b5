"""One decision from one procedure: the paired randomisation (sign-flip) test and the interval that is
its inversion (issue #44 items 1, 2, 10, 12).

Why: an interval from one procedure (the percentile bootstrap) judged beside a p from another (the
sign-flip test) can disagree: with 4 differing questions all one way the bootstrap interval excludes 0
while the sign-flip p is 0.125. Here the interval *is* the set of effects the same test does not reject,
computed from the same sign patterns, so ``lo > 0 or hi < 0`` holds exactly when ``p < alpha``.

The test (Fisher's randomisation test for paired data, as in Smucker, Allan & Carterette 2007, "A
comparison of statistical significance tests for information retrieval evaluation", CIKM; ranx's
``fisher`` test): under the null each unit's difference is as likely negated, so the two-sided p is the
share of sign patterns ``s`` with ``|sum(s * e)| >= |sum(e)|``. Its inversion (the duality of tests and
confidence sets, Lehmann & Romano, *Testing Statistical Hypotheses*; for randomisation tests Ernst 2004,
"Permutation methods: a basis for exact inference", Statist. Sci. 19:676, and the same-permutations
construction of the R package CIPerm): theta is in the interval when the test of ``e_i(theta) = d_i - theta * w_i`` does
not reject, with ``w_i = 1`` for the difference of means and ``w_i = control_i`` for the relative effect
``mean(t) / mean(c) - 1`` (a Fieller-type ratio test: ``mean(t) = (1 + theta) mean(c)`` exactly when
``sum(d - theta c) = 0``). For one pattern the accepted thetas are the closed interval between the two
groups' estimates ``sum(d) / sum(w)`` over the units it keeps and over the units it negates, and every such
interval contains the point estimate, so the accepted set is an interval whose ends are order statistics
of those per-pattern ends: no search, no grid.

At theta = 0 the test is exact (the sharp null of no effect on any question). Away from 0 the sign flips
take ``d - theta w`` as symmetric, so the interval is as good as that: at the claims table's sizes and with
differences both ways its miss rate at a true published effect is within Monte Carlo error of 5%
(tests/report/calibration.py); with differences all one way (a treatment that only ever gains) it is
about 6.5% at 41-70 questions, no better than the percentile bootstrap's.

Units are questions, or clusters (documents) when ``clusters`` is given: a cluster's questions are flipped
together (their sums of ``d`` and ``w`` are the units), so questions of one document are not counted as
independent evidence.

Sign patterns: when the differing units are few (``2**k <= resamples``) every pattern of them is
enumerated (each repeated to at least ``resamples`` rows; equal units, which change nothing at theta = 0,
get random signs for the interval's ends), so p is exact; otherwise ``resamples`` random patterns plus the
observed one, p = (1 + extreme) / (1 + resamples), never 0, with its Monte Carlo error stated. With k
differing units p cannot go below ``2 / 2**k`` (the observed pattern and its mirror are always as extreme),
so below :func:`min_differing` units only "undecided" is possible, and the result says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
RESAMPLES = 10_000  # issue #44 item 1: at least 10,000 sign patterns for claims and report intervals
CHUNK = 4096  # sign patterns built and multiplied at a time (memory: CHUNK x units)
SCALES = ("difference", "ratio")


def min_differing(alpha: float = ALPHA) -> int:
    """The fewest differing units for which a sign-flip p can fall below ``alpha``: the smallest k with
    ``2 / 2**k < alpha`` (6 at 0.05; for a family of m under Holm, pass ``alpha / m``)."""
    return math.floor(math.log2(2 / alpha)) + 1


@dataclass(frozen=True)
class Settings:
    """How a sign-flip test is run: its level, how many random sign patterns at least, and their seed (the
    config's ``report.permutations`` and ``report.seed``)."""

    alpha: float = ALPHA
    resamples: int = RESAMPLES
    seed: int = 0


DEFAULT = Settings()


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison's decision: the effect, its interval (the test's inversion) and the test's p."""

    scale: str  # difference: mean(t - c); ratio: mean(t) / mean(c) - 1
    n: int  # paired questions
    units: int  # sign-flip units: questions, or clusters of them
    differing: int  # units whose summed difference is not 0
    estimate: float
    lo: float  # the interval: every theta the test does not reject at alpha
    hi: float
    p: float  # two-sided, unadjusted
    alpha: float
    resamples: int  # sign patterns used (the observed one included)
    exact: bool  # p enumerates every sign pattern of the differing units
    mc_se_p: float  # Monte Carlo standard error of p (0 when exact)
    mc_se_lo: float  # Monte Carlo standard error of the interval's ends (order statistics)
    mc_se_hi: float
    min_differing: int
    reason: str = ""  # why only "undecided" can be read ('' when the data can decide)

    @property
    def decidable(self) -> bool:
        return not self.reason

    @property
    def rejects(self) -> bool:
        """p < alpha, which is exactly when the interval excludes 0."""
        return self.decidable and self.p < self.alpha


@dataclass(frozen=True)
class Units:
    """What the signs flip: per unit the summed difference ``d`` and weight ``w`` (1 per question for a
    difference, the control's value for a ratio), and the questions behind them."""

    d: np.ndarray
    w: np.ndarray
    n: int
    scale: str


def paired_units(treatment, control, scale: str = "difference", clusters: Sequence | None = None) -> Units:
    """The units of a paired comparison (one per question, or per cluster label when ``clusters`` is given)."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")
    t, c = np.asarray(treatment, dtype=float), np.asarray(control, dtype=float)
    if t.shape != c.shape or t.ndim != 1 or np.isnan(t - c).any():
        raise ValueError("a paired test needs two 1-D arrays of equal length without NaN")
    d = t - c
    w = np.ones_like(d) if scale == "difference" else c
    if scale == "ratio" and (c < 0).any():
        raise ValueError("a ratio test needs control values >= 0 (a score)")
    if clusters is not None:
        labels = np.asarray(list(clusters), dtype=object)
        if len(labels) != len(d):
            raise ValueError("one cluster label per question")
        _, inverse = np.unique(labels.astype(str), return_inverse=True)
        d, w = np.bincount(inverse, weights=d), np.bincount(inverse, weights=w)
    return Units(d, w, len(t), scale)


def document_clusters(refs: Sequence[Sequence[str]]) -> list[str]:
    """One cluster label per question from the documents it cites, so that no two clusters share a
    document: questions citing one document are that document's cluster; a question citing several joins
    their clusters into one (connected components: its evidence is not independent of any of theirs); a
    question citing none (unanswerable, ``is_blank``) is a cluster of its own, ``"no document #i"``."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for docs in refs:
        for other in docs[1:]:
            parent[root(other)] = root(docs[0])
    members: dict[str, set[str]] = {}
    for docs in refs:
        for doc in docs:
            members.setdefault(root(doc), set()).add(doc)
    return ["+".join(sorted(members[root(docs[0])])) if docs else f"no document #{i}" for i, docs in enumerate(refs)]


def _snap(x: np.ndarray, scale: float) -> np.ndarray:
    """Sums that are 0 in exact arithmetic but a few ulps off in floats (a subset of 1/3s) set to 0, so a
    sign pattern tied with the observed one counts as tied."""
    return np.where(np.abs(x) <= 1e-12 * scale, 0.0, x)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def pattern_sets(negated: np.ndarray, u: Units) -> tuple[np.ndarray, ...]:
    """Per sign pattern (rows of ``negated``: 1 where a unit's sign is flipped, else 0): the ends ``[L, U]``
    of the thetas whose two-sided test counts it as at least as extreme as the data, and the one-sided
    tests' ends: the test of theta against larger values counts it for every theta >= ``G``, the test
    against smaller values for every theta <= ``S`` (:mod:`pipeline.report.stats.equivalence`).

    ``sum(s e) - sum(e) = -2 (Dn - theta Wn)`` and ``sum(s e) + sum(e) = 2 (Dp - theta Wp)``, with Dn, Wn
    (Dp, Wp) the sums of d and w over the negated (kept) units, so ``|sum(s e)| >= |sum(e)|`` exactly
    between ``Dn / Wn`` and ``Dp / Wp``; a group without weight makes a factor constant and the set a
    half-line, everything or (one-sided) nothing."""
    scale, wscale = float(np.abs(u.d).sum()) or 1.0, float(u.w.sum()) or 1.0
    dn, wn = (negated.astype(float) @ np.column_stack([u.d, u.w])).T
    dn, dp = _snap(dn, scale), _snap(u.d.sum() - dn, scale)  # kept = all - negated, rounding snapped
    wn, wp = _snap(wn, wscale), _snap(u.w.sum() - wn, wscale)
    tn, tp = _ratio(dn, wn), _ratio(dp, wp)
    inf = np.inf
    lo, hi = np.fmin(tn, tp), np.fmax(tn, tp)
    # (Dn - theta Wn)(Dp - theta Wp) <= 0 with one factor constant (no weight on one side)
    lo = np.where(wn <= 0, np.where(dn > 0, tp, -inf), np.where(wp <= 0, np.where(dp > 0, tn, -inf), lo))
    hi = np.where(wn <= 0, np.where(dn < 0, tp, inf), np.where(wp <= 0, np.where(dp < 0, tn, inf), hi))
    # one-sided: sum(s e) >= sum(e) iff Dn - theta Wn <= 0; <= iff >= 0
    greater_from = np.where(wn > 0, tn, np.where(dn <= 0, -inf, inf))
    less_to = np.where(wn > 0, tn, np.where(dn >= 0, inf, -inf))
    return lo, hi, greater_from, less_to


@dataclass(frozen=True)
class Patterns:
    """The sign patterns' sets (:func:`pattern_sets`) of one comparison, and how they were drawn."""

    lo: np.ndarray
    hi: np.ndarray
    greater_from: np.ndarray
    less_to: np.ndarray
    exact: bool  # every pattern of the differing units, equally often: p at theta = 0 is exact
    differing: int
    units: int


def differing(u: Units) -> int:
    """Units whose summed difference is not 0 (up to float rounding): the only ones a sign flip moves at 0."""
    return int(np.count_nonzero(_snap(u.d, float(np.abs(u.d).sum()) or 1.0)))


def sign_patterns(u: Units, resamples: int = RESAMPLES, seed: int = 0) -> Patterns:
    """Every pattern of the differing units (repeated to >= ``resamples`` rows) when there are few, else
    the observed pattern and ``resamples`` random ones; seeded numpy draws only (byte-identical reruns)."""
    m = len(u.d)
    diff = np.flatnonzero(_snap(u.d, float(np.abs(u.d).sum()) or 1.0))
    k = len(diff)
    exact = 2**k <= resamples
    rows = 2**k * math.ceil(resamples / 2**k) if exact else resamples + 1
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, rows, CHUNK):
        idx = np.arange(start, min(rows, start + CHUNK))
        negated = np.unpackbits(rng.integers(0, 256, (len(idx), (m + 7) // 8), dtype=np.uint8), axis=1, count=m)
        if exact:  # row r carries pattern r mod 2**k on the differing units: each pattern equally often
            negated[:, diff] = (idx[:, None] % 2**k >> np.arange(k)) & 1
        if start == 0:
            negated[0] = 0  # the observed pattern, everywhere
        parts.append(pattern_sets(negated, u))
    lo, hi, g, s = (np.concatenate(x) for x in zip(*parts, strict=True))
    return Patterns(lo, hi, g, s, exact, k, m)


def needed_extreme(alpha: float, rows: int) -> int:
    """Patterns at least as extreme a theta needs to be kept: p = count / rows >= alpha."""
    return max(1, math.ceil(round(alpha * rows, 9)))


def order_ends(values: np.ndarray, c: int, alpha: float) -> tuple[float, float]:
    """The c-th smallest of ``values`` and its Monte Carlo standard error: half the spread of the order
    statistics one binomial standard deviation of rank either side (a distribution-free quantile SE)."""
    v = np.sort(values)
    r = len(v)
    if c > r:
        return math.nan, math.nan
    m = max(1, math.ceil(math.sqrt(r * alpha * (1 - alpha))))
    a, b = v[max(0, c - 1 - m)], v[min(r - 1, c - 1 + m)]
    se = (b - a) / 2 if np.isfinite(a) and np.isfinite(b) else math.nan
    return float(v[c - 1]), float(se)


def undecidable(u: Units, alpha: float) -> str:
    """Why too few units (or no control weight) leave only "undecided" ('' when enough): the reason a row
    gives in one line, never an exception."""
    k, need = differing(u), min_differing(alpha)
    if u.n == 0:
        return "no paired question: nothing to test"
    if u.scale == "ratio" and not u.w.sum() > 0:
        return "the control's mean is 0: no relative effect to measure"
    if k == 0:
        return "no differing question: the two score the same on every question, so only undecided is possible"
    if k < need:
        what = ("cluster" if len(u.d) < u.n else "question") + ("" if k == 1 else "s")
        return (
            f"{k} differing {what}: a sign-flip p cannot go below 2/2^{k} = {2 / 2**k:.3g} >= {alpha:g}, "
            f"so only undecided is possible (at least {need} needed)"
        )
    return ""


def paired_test(
    treatment, control, scale: str = "difference", clusters: Sequence | None = None, settings: Settings = DEFAULT
) -> PairedTest:
    """The paired sign-flip test of treatment vs control on ``scale`` and its inverted ``1 - alpha``
    interval (module docstring); ``clusters``: one label per question (a document), flipped together.
    Never raises on tiny n: 0, 1 or a few differing questions give a result whose ``reason`` says why only
    "undecided" is possible."""
    alpha = settings.alpha
    u = paired_units(treatment, control, scale, clusters)
    need = min_differing(alpha)
    w_sum = float(u.w.sum())
    estimate = float(u.d.sum() / w_sum) if w_sum > 0 else math.nan
    reason = undecidable(u, alpha)
    if u.n == 0 or not w_sum > 0:
        return PairedTest(
            scale, u.n, len(u.d), 0, estimate, -math.inf, math.inf, 1.0, alpha, 0, True, 0.0, 0.0, 0.0, need, reason
        )
    pat = sign_patterns(u, settings.resamples, settings.seed)
    rows = len(pat.lo)
    p = float(np.count_nonzero((pat.lo <= 0) & (pat.hi >= 0)) / rows)
    c = needed_extreme(alpha, rows)
    lo, se_lo = order_ends(pat.lo, c, alpha)
    hi, se_hi = order_ends(-pat.hi, c, alpha)
    if pat.exact and pat.differing == pat.units:  # every pattern of every unit: nothing drawn at random
        se_lo = se_hi = 0.0
    mc_p = 0.0 if pat.exact else math.sqrt(p * (1 - p) / rows)
    return PairedTest(
        scale, u.n, len(u.d), pat.differing, estimate, lo, -hi, p, alpha, rows, pat.exact, mc_p, se_lo, se_hi, need,
        reason,
    )  # fmt: skip
