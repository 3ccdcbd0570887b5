"""Two one-sided tests against a margin, their verdicts, and fixed/random-effects pooling (issue #44
items 5 and 9), on hand-made samples and the claims run's SproutRAG rows."""
import itertools

import numpy as np
import pytest
from scipy.stats import t as student

from pipeline.report.stats.equivalence import equivalence_test
from pipeline.report.stats.pooling import difference_se, paule_mandel, pool
from pipeline.report.stats.signflip import Settings, paired_test
from pipeline.report.stats.verdicts import (CONSISTENT, CONTRADICTED, REPRODUCED, SMALLER, UNDECIDED,
                                            equivalence_verdict, paired_verdict)


def one_sided_brute(d: np.ndarray, theta: float, larger: bool) -> float:
    """One-sided sign-flip p of theta over every pattern (against larger values, or smaller)."""
    e = d - theta
    sums = np.array(list(itertools.product([1, -1], repeat=len(e)))) @ e
    return float(np.mean(sums >= e.sum() - 1e-12) if larger else np.mean(sums <= e.sum() + 1e-12))


def test_each_one_sided_p_is_the_enumerated_one():
    rng = np.random.default_rng(0)
    c = rng.random(10)
    t = c + rng.normal(0.0, 0.03, 10)
    eq = equivalence_test(t, c, margin=0.05)
    d = t - c
    assert eq.p_lower == pytest.approx(one_sided_brute(d, -0.05, True))
    assert eq.p_upper == pytest.approx(one_sided_brute(d, 0.05, False))
    assert eq.p == max(eq.p_lower, eq.p_upper)


def test_equivalence_reads_inside_beyond_or_undecided():
    rng = np.random.default_rng(1)
    c = rng.random(150)
    close = equivalence_test(c + rng.normal(0.0, 0.1, 150), c, margin=0.05)
    assert close.equivalent and -0.05 < close.lo <= close.hi < 0.05 and equivalence_verdict(close) == REPRODUCED
    far = equivalence_test(c + rng.normal(0.2, 0.1, 150), c, margin=0.05)
    assert not far.equivalent and far.lo > 0.05 and equivalence_verdict(far) == CONTRADICTED
    wide = equivalence_test(c + rng.normal(0.0, 0.6, 150), c, margin=0.05)
    assert equivalence_verdict(wide) == UNDECIDED
    sparse = equivalence_test([1.0] + [0.0] * 39, [0.0] * 40, margin=0.05)  # 1 of 40 differs
    assert sparse.reason.startswith("1 differing question") and equivalence_verdict(sparse) == UNDECIDED


def test_equivalence_is_exactly_its_interval_inside_the_margin():
    rng = np.random.default_rng(2)
    for i in range(80):
        n = int(rng.integers(6, 150))
        c = rng.random(n)
        t = c + np.where(rng.random(n) < 0.6, rng.normal(rng.normal(0, 0.05), 0.2, n), 0.0)
        eq = equivalence_test(t, c, margin=0.05, settings=Settings(resamples=1000, seed=i))
        assert (eq.p < eq.alpha) == (-0.05 < eq.lo and eq.hi < 0.05), eq


def test_paired_verdict_reads_the_tests_own_interval():
    few = paired_test([1.0] * 4 + [0.0] * 16, [0.0] * 20)  # 4 wins, p = 0.125: the "reproduced"
    assert few.lo <= 0 and paired_verdict(few, "greater") == UNDECIDED
    assert paired_verdict(few, "greater", published=0.1) == UNDECIDED  # undecidable: no published reading either
    rng = np.random.default_rng(3)
    c = rng.random(200)
    r = paired_test(c + rng.normal(0.05, 0.1, 200), c)
    assert r.rejects and paired_verdict(r, "greater") == REPRODUCED and paired_verdict(r, "less") == CONTRADICTED
    assert paired_verdict(r, "greater", published=r.estimate) == CONSISTENT
    assert paired_verdict(r, "greater", published=r.hi + 0.01) == SMALLER
    with pytest.raises(ValueError, match="equivalence_verdict"):
        paired_verdict(r, "negligible")


# the claims run's SproutRAG rows (docs/results.md at 1808d8d): mean difference and 95% interval per dataset
SPROUT = {"dragonball": (0.017, -0.036, 0.068), "hotpotqa": (-0.152, -0.215, -0.081),
          "legalbench_rag": (-0.006, -0.035, 0.022), "msmarco": (-0.055, -0.099, -0.019)}


def test_pooling_the_claims_runs_sprout_rows():
    """The issue's pooled figures: fixed effect -0.028 [-0.049, -0.008], I² = 85%; the random-effects
    interval with a t on 3 df is wider than the normal one the issue quoted ([-0.101, +0.012])."""
    y = [v[0] for v in SPROUT.values()]
    se = [(v[2] - v[1]) / (2 * 1.959964) for v in SPROUT.values()]
    r = pool(y, se, list(SPROUT))
    assert r.fixed is not None and r.random is not None
    assert (round(r.fixed.estimate, 3), round(r.fixed.lo, 3), round(r.fixed.hi, 3)) == (-0.028, -0.049, -0.008)
    assert round(r.i2, 2) == 0.85 and r.k == 4 and r.labels == tuple(SPROUT)
    assert r.random.lo < -0.101 and r.random.hi > 0.012 and r.random.p > 0.05  # few datasets: honest width
    v = np.asarray(se) ** 2
    w = 1 / (v + r.tau2)
    mu = (w * y).sum() / w.sum()
    assert (w * (np.asarray(y) - mu) ** 2).sum() == pytest.approx(3)  # Paule-Mandel: generalised Q = k - 1
    assert r.random.estimate == pytest.approx(mu)
    assert r.random.hi - r.random.estimate == pytest.approx(student.ppf(0.975, 3) * np.sqrt(1 / w.sum()))


def test_homogeneous_datasets_pool_to_the_fixed_effect_never_narrower():
    r = pool([0.05, 0.05, 0.05], [0.02, 0.03, 0.025])
    assert r.tau2 == 0 and r.i2 == 0 and paule_mandel(np.array([0.05] * 3), np.array([1e-4] * 3)) == 0
    assert r.random.estimate == pytest.approx(r.fixed.estimate)
    assert r.random.se >= r.fixed.se  # the modification: max(1, q) never narrows the interval
    for e in (r.fixed, r.random):
        assert (e.lo > 0 or e.hi < 0) == (e.p < 0.05)
    assert pool([0.1], [0.01]).reason == "nothing pooled: fewer than 2 datasets"
    assert pool([0.1, 0.2], [0.01, 0.0]).reason.startswith("nothing pooled: a dataset without")


def test_difference_se_with_and_without_documents():
    rng = np.random.default_rng(4)
    t, c = rng.random(30), rng.random(30)
    d = t - c
    assert difference_se(t, c) == pytest.approx(d.std(ddof=1) / np.sqrt(30))
    assert difference_se(t, c, clusters=range(30)) == pytest.approx(difference_se(t, c))
    docs = np.repeat(np.arange(6), 5)
    moved = c + np.repeat([-0.3, 0.3, -0.2, 0.2, -0.1, 0.1], 5) + rng.normal(0, 0.02, 30)  # by document
    assert difference_se(moved, c, clusters=docs) > 1.5 * difference_se(moved, c)
