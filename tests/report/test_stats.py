"""The paired bootstrap and the randomisation test on hand-made numbers."""
import numpy as np
import pytest

from pipeline.report.stats.resampling import Interval, bootstrap_mean, paired_bootstrap, randomisation_p


@pytest.mark.parametrize("a, b, p", [
    ([1, 1, 1, 1, 1], [0, 0, 0, 0, 0], 2 / 32),  # only all-plus and all-minus are as extreme
    ([3, 1], [0, 0], 2 / 4),                      # sign patterns give means 2, 1, -1, -2
    ([1, 0, 1, 0], [0, 1, 0, 1], 1.0),            # observed mean difference 0: everything is as extreme
    ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], 1.0),      # no difference at all
    ([1, 0, 0, 0], [0, 0, 0, 0], 1.0),            # one discordant question proves nothing
])
def test_randomisation_exact(a, b, p):
    assert randomisation_p(a, b, n_perm=10000) == pytest.approx(p)


def test_randomisation_monte_carlo_never_zero_and_seeded():
    a, b = np.ones(20), np.zeros(20)  # 2**20 patterns > n_perm: sampled
    p = randomisation_p(a, b, n_perm=999, seed=3)
    assert p == pytest.approx(1 / 1000)  # (1 + 0 extreme) / (1 + n_perm)
    rng = np.random.default_rng(0)
    x, y = rng.random(30), rng.random(30)
    assert randomisation_p(x, y, 2000, seed=1) == randomisation_p(x, y, 2000, seed=1)
    assert 0.05 < randomisation_p(x, y, 2000, seed=1) <= 1  # two uniform samples: no effect


def test_bootstrap_interval_of_a_proportion():
    ci = bootstrap_mean([0, 1] * 50, n_boot=4000, seed=0)  # p=0.5, n=100: SE 0.05
    assert ci.mean == 0.5
    assert 0.39 <= ci.lo <= 0.41 and 0.59 <= ci.hi <= 0.61
    assert bootstrap_mean([0.7] * 12).lo == bootstrap_mean([0.7] * 12).hi == pytest.approx(0.7)


def test_bootstrap_is_paired_and_seeded():
    rng = np.random.default_rng(1)
    a = rng.random(40)
    x = np.column_stack([a, a + 0.1])  # B beats A by exactly 0.1 on every question
    cis, diffs = paired_bootstrap(x, n_boot=1000, seed=5)
    assert diffs[0].lo == diffs[0].hi == 0
    assert diffs[1].lo == pytest.approx(0.1) and diffs[1].hi == pytest.approx(0.1)  # paired: no spread
    assert cis[1].hi - cis[1].lo > 0.1  # each mean alone varies with the questions drawn
    again = paired_bootstrap(x, n_boot=1000, seed=5)
    other = paired_bootstrap(x, n_boot=1000, seed=6)
    assert again == (cis, diffs) and other[0] != cis


def test_bad_input_is_an_error():
    with pytest.raises(ValueError):
        paired_bootstrap(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError):
        randomisation_p([], [])


def test_bootstrap_draws_are_seeded_question_indices():
    """scipy's paired bootstrap resamples question indices with rng.integers(0, n, (n_boot, n)):
    the same draws the hand-written version made, so intervals agree to the last bits (scipy's
    percentile is taken at 100 * (1 - 0.95) / 2, one rounding off 2.5)."""
    rng = np.random.default_rng(2)
    x = np.column_stack([rng.random(25), rng.random(25)])
    idx = np.random.default_rng(7).integers(0, 25, size=(500, 25))
    means = x[idx].mean(axis=1)
    cis, diffs = paired_bootstrap(x, n_boot=500, seed=7)
    assert [cis[1].lo, cis[1].hi] == pytest.approx(np.quantile(means[:, 1], [0.025, 0.975]), abs=1e-12)
    assert [diffs[1].lo, diffs[1].hi] == pytest.approx(np.quantile(means[:, 1] - means[:, 0], [0.025, 0.975]), abs=1e-12)


def test_bootstrap_of_one_question_is_that_question():
    assert bootstrap_mean([0.25]) == Interval(0.25, 0.25, 0.25)
