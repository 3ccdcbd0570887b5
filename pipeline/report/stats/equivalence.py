"""Equivalence done as equivalence (issue #44 item 5): two one-sided tests against a margin.

Why: "adds little" is a claim that the difference lies within ±margin. Testing difference = 0 answers
another question (a small n "fails to reject" any claim of no effect), and reading a 95% interval against
the margin mixes the two. Schuirmann's two one-sided tests (TOST; Schuirmann 1987, J. Pharmacokin.
Biopharm. 15:657; Lakens 2017, Soc. Psychol. Personal. Sci. 8:355) reject "theta <= -margin" and
"theta >= +margin" each at ``alpha``; equivalence is concluded when both reject, which is exactly when the
``1 - 2 alpha`` interval made of the two one-sided bounds lies inside (-margin, +margin). The TOST p is the
larger of the two.

Each one-sided test is the paired sign-flip test of :mod:`pipeline.report.stats.signflip` on
``e_i = d_i - theta w_i`` at theta = ±margin, with the same sign patterns, so the equivalence reading, its
p and its interval come from one procedure on the same scale as the claim's other rows.

Too few differing questions: the sign flips of ``d - theta`` take it as symmetric, which a sample with
almost no differing questions cannot check (40 questions that all tie are what a true difference of +0.05
made of rare +1s gives 13% of the time, and the flips of 40 equal values reject every theta but 0), so
equivalence, like any other reading, needs at least :func:`pipeline.report.stats.signflip.min_differing`
differing units; below that the row is undecided and says why. In simulation this gate takes the false
equivalence rate of rare one-directional differences at the margin from 10-35% to 0
(tests/report/test_calibration.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.report.stats.signflip import (
    DEFAULT,
    Patterns,
    Settings,
    needed_extreme,
    order_ends,
    paired_units,
    sign_patterns,
    undecidable,
)


@dataclass(frozen=True)
class Equivalence:
    """The TOST reading of one comparison against ``margin`` (on the comparison's scale)."""

    scale: str
    margin: float
    n: int
    units: int
    differing: int
    estimate: float
    lo: float  # the 1 - 2 alpha interval: the test against larger values' lower bound ...
    hi: float  # ... and the test against smaller values' upper bound
    p_lower: float  # H0: theta <= -margin
    p_upper: float  # H0: theta >= +margin
    alpha: float
    resamples: int
    mc_se_p: float
    reason: str = ""  # why equivalence cannot be read ('' when it can)

    @property
    def p(self) -> float:
        """The TOST p: the larger one-sided p (what a family adjustment of equivalence claims adjusts)."""
        return max(self.p_lower, self.p_upper)

    @property
    def equivalent(self) -> bool:
        """Both one-sided tests reject at alpha, which is exactly when [lo, hi] lies inside ±margin."""
        return not self.reason and self.p < self.alpha


def one_sided(pat: Patterns, theta: float, larger: bool) -> float:
    """The one-sided sign-flip p of ``theta``: against larger values (``larger``) or smaller ones."""
    count = np.count_nonzero(pat.greater_from <= theta) if larger else np.count_nonzero(pat.less_to >= theta)
    return float(count / len(pat.lo))


def equivalence_test(
    treatment,
    control,
    margin: float,
    scale: str = "difference",
    clusters: Sequence | None = None,
    settings: Settings = DEFAULT,
) -> Equivalence:
    """TOST of |theta| < ``margin`` on ``scale`` (module docstring); never raises on tiny n."""
    alpha = settings.alpha
    if not margin > 0:
        raise ValueError("an equivalence margin is a positive number")
    u = paired_units(treatment, control, scale, clusters)
    w_sum = float(u.w.sum())
    estimate = float(u.d.sum() / w_sum) if w_sum > 0 else math.nan
    reason = undecidable(u, alpha)
    if u.n == 0 or not w_sum > 0:
        return Equivalence(
            scale, margin, u.n, len(u.d), 0, estimate, -math.inf, math.inf, 1.0, 1.0, alpha, 0, 0.0, reason
        )
    pat = sign_patterns(u, settings.resamples, settings.seed)
    rows = len(pat.lo)
    p_lo, p_hi = one_sided(pat, -margin, larger=True), one_sided(pat, margin, larger=False)
    c = needed_extreme(alpha, rows)
    lo, _ = order_ends(pat.greater_from, c, alpha)
    hi, _ = order_ends(-pat.less_to, c, alpha)
    p = max(p_lo, p_hi)
    return Equivalence(
        scale, margin, u.n, len(u.d), pat.differing, estimate, lo, -hi, p_lo, p_hi, alpha, rows,
        math.sqrt(p * (1 - p) / rows), reason,
    )  # fmt: skip
