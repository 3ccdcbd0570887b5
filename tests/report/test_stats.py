"""The bootstrap interval of one variant's mean on hand-made numbers (a comparison of two variants is the
sign-flip test and its inverted interval: tests/report/test_signflip.py)."""
import numpy as np
import pytest

from pipeline.report.stats.resampling import Interval, bootstrap_mean


def test_bootstrap_interval_of_a_proportion():
    ci = bootstrap_mean([0, 1] * 50, n_boot=4000, seed=0)  # p=0.5, n=100: SE 0.05
    assert ci.mean == 0.5
    assert 0.39 <= ci.lo <= 0.41 and 0.59 <= ci.hi <= 0.61
    assert bootstrap_mean([0.7] * 12).lo == bootstrap_mean([0.7] * 12).hi == pytest.approx(0.7)


def test_bootstrap_is_seeded():
    a = np.random.default_rng(1).random(40)
    assert bootstrap_mean(a, 1000, 5) == bootstrap_mean(a, 1000, 5)
    assert bootstrap_mean(a, 1000, 6) != bootstrap_mean(a, 1000, 5)


def test_bad_input_is_an_error():
    with pytest.raises(ValueError):
        bootstrap_mean([1.0, np.nan])
    with pytest.raises(ValueError):
        bootstrap_mean([])


def test_bootstrap_draws_are_seeded_question_indices():
    """scipy's paired bootstrap resamples question indices with rng.integers(0, n, (n_boot, n)): the same
    draws the hand-written version made, so intervals agree to the last bits (scipy's percentile is taken at
    100 * (1 - 0.95) / 2, one rounding off 2.5)."""
    x = np.random.default_rng(2).random(25)
    idx = np.random.default_rng(7).integers(0, 25, size=(500, 25))
    ci = bootstrap_mean(x, n_boot=500, seed=7)
    assert [ci.lo, ci.hi] == pytest.approx(np.quantile(x[idx].mean(axis=1), [0.025, 0.975]), abs=1e-12)


def test_bootstrap_of_one_question_is_that_question():
    assert bootstrap_mean([0.25]) == Interval(0.25, 0.25, 0.25)
