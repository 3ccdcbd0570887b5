"""The paired sign-flip test and its inverted interval (issue #44 items 1, 2, 10, 12): p against an
enumeration by hand and scipy's permutation test, the interval against a brute-force inversion, the interval
and p agreeing on every sample, the ratio and cluster scales, and tiny n read as one line."""
import itertools

import numpy as np
import pytest
from scipy.stats import permutation_test

from pipeline.report.stats.signflip import Settings, document_clusters, min_differing, paired_test, paired_units


def brute_p(d: np.ndarray, w: np.ndarray, theta: float) -> float:
    """Two-sided sign-flip p of theta by enumerating every pattern of every unit."""
    e = d - theta * w
    pats = np.array(list(itertools.product([1, -1], repeat=len(e))))
    return float(np.mean(np.abs(pats @ e) >= abs(e.sum()) - 1e-12))


@pytest.mark.parametrize("t, c, p", [
    ([1, 1, 1, 1, 1, 1], [0] * 6, 2 / 64),          # six wins: the smallest p of six, below 0.05
    ([1, 1, 1, 1, 0, 0], [0] * 6, 2 / 16),          # the 4 differing questions all one way: 0.125
    ([3, 1], [0, 0], 2 / 4),
    ([1, 0, 1, 0], [0, 1, 0, 1], 1.0),
    ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], 1.0),
])
def test_exact_p_by_hand_and_as_scipys_test(t, c, p):
    r = paired_test(t, c)
    assert r.exact and r.p == pytest.approx(p)
    scipy = permutation_test((np.asarray(t, float), np.asarray(c, float)), lambda x, y, axis=-1: np.abs((x - y).mean(axis=axis)),
                             permutation_type="samples", vectorized=True, n_resamples=100_000, alternative="greater")
    assert r.p == pytest.approx(scipy.pvalue)


def test_interval_is_the_inversion_of_the_test():
    """With every question differing and few of them, every pattern is enumerated: the interval's ends are
    exactly where the brute-force p crosses alpha (p >= alpha at each end, below it just outside)."""
    rng = np.random.default_rng(3)
    for _ in range(15):
        n = int(rng.integers(6, 11))
        t, c = rng.random(n), rng.random(n)
        r = paired_test(t, c)
        d, w = np.asarray(t) - c, np.ones(n)
        assert r.exact and r.differing == n
        for end, outside in ((r.lo, r.lo - 1e-7), (r.hi, r.hi + 1e-7)):
            assert brute_p(d, w, end) >= 0.05 > brute_p(d, w, outside)
        assert r.lo <= r.estimate <= r.hi


def samples(rng, kind: str, n: int):
    if kind == "binary":
        c = rng.integers(0, 2, n).astype(float)
        return np.clip(c + rng.choice([-1, 0, 0, 0, 1], n), 0, 1), c
    if kind == "graded":
        c = rng.integers(0, 5, n) / 4
        return np.clip(c + rng.choice([-0.75, -0.25, 0, 0, 0.25, 0.75, 1 / 3], n), 0, 1), c
    c = rng.random(n)
    return c + rng.normal(0.05, 0.2, n), c


@pytest.mark.parametrize("kind", ["binary", "graded", "continuous"])
@pytest.mark.parametrize("scale", ["difference", "ratio"])
def test_the_interval_excludes_0_exactly_when_p_is_below_alpha(kind, scale):
    """The issue's done-when: on every sample, exact or Monte Carlo, ties or not, questions or clusters."""
    rng = np.random.default_rng(hash((kind, scale)) % 2**32)
    for i in range(60):
        n = int(rng.integers(3, 120))
        t, c = samples(rng, kind, n)
        if scale == "ratio":
            t, c = np.abs(t), np.abs(c)
        clusters = rng.integers(0, max(2, n // 3), n) if i % 3 == 0 else None
        r = paired_test(t, c, scale=scale, clusters=clusters, settings=Settings(resamples=1000, seed=i))
        if np.isnan(r.estimate):
            continue
        assert (r.lo > 0 or r.hi < 0) == (r.p < r.alpha), (n, r)
        assert r.lo <= r.estimate <= r.hi


def test_few_differing_questions_can_only_be_undecided():
    assert min_differing(0.05) == 6 and min_differing(0.05 / 3) == 7  # 2/2^k < alpha (Holm's first step: alpha/m)
    r = paired_test([0.0, 1, 1, 0] + [0.5] * 183, [0.0, 0, 0, 1] + [0.5] * 183)  # the planner row: 3 of 187
    assert r.differing == 3 and not r.decidable and not r.rejects
    assert r.reason == "3 differing questions: a sign-flip p cannot go below 2/2^3 = 0.25 >= 0.05, so only " \
        "undecided is possible (at least 6 needed)"
    six = paired_test([1.0] * 6 + [0] * 30, [0.0] * 36)
    assert six.decidable and six.rejects and six.p == pytest.approx(2 / 64) and six.lo > 0


@pytest.mark.parametrize("n, p, reason", [
    (0, 1.0, "no paired question: nothing to test"),
    (1, 1.0, "1 differing question: a sign-flip p cannot go below 2/2^1 = 1 >= 0.05, so only undecided is "
             "possible (at least 6 needed)"),
    (2, 0.5, "2 differing questions: a sign-flip p cannot go below 2/2^2 = 0.5 >= 0.05, so only undecided is "
             "possible (at least 6 needed)"),
])
def test_tiny_n_is_one_line_not_a_crash(n, p, reason):
    r = paired_test([1.0] * n, [0.0] * n)
    assert r.n == n and r.p == p and r.reason == reason
    assert not r.rejects and r.lo <= 0 <= r.hi


def test_monte_carlo_states_its_error_and_is_seeded():
    rng = np.random.default_rng(0)
    t, c = rng.random(60), rng.random(60)  # 60 differing questions: 2^60 patterns, drawn
    r = paired_test(t, c, settings=Settings(resamples=10_000, seed=4))
    assert not r.exact and r.resamples == 10_001 and 0 < r.mc_se_p <= 0.005 and r.p > 0
    assert r.mc_se_lo > 0 and r.mc_se_hi > 0 and r.mc_se_lo < (r.hi - r.lo) / 20
    assert paired_test(t, c, settings=Settings(resamples=10_000, seed=4)) == r
    assert paired_test(t, c, settings=Settings(resamples=10_000, seed=5)) != r
    exact = paired_test([1.0] * 8, [0.0] * 8)  # every pattern of every question: nothing is drawn
    assert exact.exact and exact.mc_se_p == exact.mc_se_lo == exact.mc_se_hi == 0 and exact.resamples >= 10_000
    ties = paired_test([1.0] * 8 + [0.5] * 30, [0.0] * 8 + [0.5] * 30)  # exact p, tied questions' signs drawn
    assert ties.exact and ties.mc_se_p == 0 and ties.p == exact.p and ties.mc_se_hi > 0


def test_ratio_scale_is_its_own_test():
    """mean(t)/mean(c) - 1 with its own interval; at 0 the same p as the difference (same sign patterns)."""
    rng = np.random.default_rng(1)
    c = (rng.random(80) < 0.3).astype(float)
    t = np.where(c == 1, rng.random(80) < 0.9, rng.random(80) < 0.3).astype(float)
    r = paired_test(t, c, scale="ratio")
    assert r.estimate == pytest.approx(t.mean() / c.mean() - 1)
    assert r.p == paired_test(t, c).p and r.lo <= r.estimate <= r.hi
    assert paired_test([1.0, 0.0], [0.0, 0.0], scale="ratio").reason.startswith("the control's mean is 0")
    with pytest.raises(ValueError, match=">= 0"):
        paired_test([1.0], [-1.0], scale="ratio")


def test_clusters_flip_together():
    """A document's questions are one unit: 12 questions in 3 documents that all gain give 3 differing
    units (undecided), not 12; one cluster per question is the question-level test."""
    t, c = [1.0] * 12, [0.0] * 12
    docs = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    r = paired_test(t, c, clusters=docs)
    assert r.units == 3 and r.differing == 3 and not r.decidable and "3 differing clusters" in r.reason
    assert paired_test(t, c).rejects
    rng = np.random.default_rng(2)
    t, c = rng.random(9), rng.random(9)
    assert paired_test(t, c, clusters=[f"q{i}" for i in range(9)]).p == paired_test(t, c).p
    u = paired_units([1.0, 0.0, 1.0], [0.0, 0.0, 0.0], clusters=["x", "y", "x"])
    assert u.d.tolist() == [2.0, 0.0] and u.w.tolist() == [2.0, 1.0] and u.n == 3


def test_a_questions_document_is_what_it_cites():
    """One document: its cluster; several: their clusters joined; none: a cluster of its own."""
    refs = [["a"], ["b"], ["a"], ["b", "c"], [], ["c"], ["d"], []]
    assert document_clusters(refs) == ["a", "b+c", "a", "b+c", "no document #4", "b+c", "d", "no document #7"]
    assert document_clusters([["x", "y"], ["z", "y"]]) == ["x+y+z", "x+y+z"]
    assert document_clusters([]) == []


@pytest.mark.data
def test_wattbot_test_questions_cluster_by_paper(wattbot_dir):
    """The labelled test split: 187 questions in fewer clusters than papers cited plus blanks, and no
    paper in two clusters."""
    import pandas as pd

    from pipeline.datasets.wattbot import parse_ref_ids

    gold = pd.read_csv(wattbot_dir / "test_solutions_public.csv")
    refs = [parse_ref_ids(str(r)) for r in gold["ref_id"]]
    labels = document_clusters(refs)
    papers = {d for docs in refs for d in docs}
    blanks = sum(1 for docs in refs if not docs)
    assert len(labels) == len(gold) and len(set(labels)) <= len(papers) + blanks
    owner = {}
    for docs, label in zip(refs, labels, strict=True):
        for d in docs:
            assert owner.setdefault(d, label) == label
