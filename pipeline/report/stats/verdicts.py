"""Verdicts of a claim from the 95% interval of treatment - control, the n a test would need, and Holm.

Two verdict tables, one per kind of claim (the claims table's note prints both):

Without a published effect, from the claimed direction (``less`` mirrored):

==============================  ==========================================
interval ``[lo, hi]``           verdict
==============================  ==========================================
lo > 0                          reproduced
hi < 0                          contradicted
otherwise (contains 0)          undecided
==============================  ==========================================

and for ``negligible`` within ``margin``: reproduced when -margin <= lo and hi <= margin, contradicted
when it lies wholly beyond the margin (lo > margin or hi < -margin), undecided otherwise.

With a published effect ``P`` (absolute, or relative times the control's observed mean), oriented so
that ``P > 0`` (a negative ``P`` mirrors the interval):

==============================  ==========================================
interval ``[lo, hi]``           verdict
==============================  ==========================================
hi < 0                          contradicted (excludes 0 in the wrong direction)
lo <= 0 <= hi, hi < P           smaller than published, sign undecided
lo <= 0 <= hi, hi >= P          undecided (contains 0 and the published effect)
0 < lo, hi < P                  right sign but smaller than published
0 < lo <= P <= hi               consistent with published
P < lo                          larger than published
==============================  ==========================================

The six cells partition every interval. Where the interval contains 0 the row states the n a
two-sided 5% test needs for 80% power, from the observed paired spread (:func:`n_needed`).

Issue #44 reads the same tables on the sign-flip test's own interval (:func:`paired_verdict`:
:mod:`pipeline.report.stats.signflip`, where the interval excludes 0 exactly when p < alpha, and a row
with too few differing questions is undecided), a relative effect on the ratio test's interval, and a
``negligible`` claim by two one-sided tests (:func:`equivalence_verdict`); its n needed is simulated
(:mod:`pipeline.report.stats.sizing`). Family-wise decisions: :func:`holm_by_family` over a stated family;
for the fewest differing questions a Holm-adjusted decision can use, pass ``alpha / m`` to
:func:`pipeline.report.stats.signflip.min_differing`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pipeline.report.stats.equivalence import Equivalence
from pipeline.report.stats.signflip import PairedTest

Z_ALPHA, Z_POWER = 1.959964, 0.841621  # two-sided 5%, 80% power

REPRODUCED, CONTRADICTED, UNDECIDED = "reproduced", "contradicted", "undecided"
CONSISTENT = "consistent with published"
SMALLER = "right sign but smaller than published"
LARGER = "larger than published"
SMALLER_SIGN_UNDECIDED = "smaller than published, sign undecided"
SIGN_UNDECIDED = (UNDECIDED, SMALLER_SIGN_UNDECIDED)  # the interval contains 0: these rows get n_needed
PUBLISHED_VERDICTS = (CONSISTENT, SMALLER, LARGER, SMALLER_SIGN_UNDECIDED)


def verdict(direction: str, lo: float, hi: float, margin: float | None = None) -> str:
    """The verdict of a claim without a published effect (first table of the module docstring)."""
    if direction == "negligible":
        assert margin is not None, "a negligible claim has a margin (claims.yaml)"
        if -margin <= lo and hi <= margin:
            return REPRODUCED
        return CONTRADICTED if lo > margin or hi < -margin else UNDECIDED
    if direction == "less":
        lo, hi = -hi, -lo
    return REPRODUCED if lo > 0 else CONTRADICTED if hi < 0 else UNDECIDED


def published_verdict(lo: float, hi: float, published: float) -> str:
    """The verdict against a published effect ``published`` (treatment - control, in the metric's units;
    second table of the module docstring)."""
    if published == 0:
        raise ValueError("a published effect of 0 has no direction; write the claim as 'negligible'")
    if published < 0:
        lo, hi, published = -hi, -lo, -published
    if hi < 0:
        return CONTRADICTED
    if lo <= 0:
        return UNDECIDED if hi >= published else SMALLER_SIGN_UNDECIDED
    if hi < published:
        return SMALLER
    return CONSISTENT if lo <= published else LARGER


def paired_verdict(test: PairedTest, direction: str, published: float | None = None) -> str:
    """The verdict of a paired sign-flip test (:mod:`pipeline.report.stats.signflip`): "undecided" when too
    few units differ for any p below alpha (``test.reason``), else the tables above read on the test's own
    interval, whose exclusion of 0 is its p < alpha. ``published`` is on the test's scale (a relative effect
    against a ratio test's interval). A ``negligible`` claim is read by :func:`equivalence_verdict`."""
    if direction == "negligible":
        raise ValueError("a negligible claim is read by two one-sided tests: equivalence_verdict")
    if not test.decidable:
        return UNDECIDED
    return verdict(direction, test.lo, test.hi) if published is None else published_verdict(test.lo, test.hi, published)


def equivalence_verdict(eq: Equivalence) -> str:
    """A negligible claim from its two one-sided tests (:mod:`pipeline.report.stats.equivalence`):
    reproduced when both reject (the 1 - 2 alpha interval inside ±margin), contradicted when that interval
    lies wholly beyond the margin, else (or with too few differing units) undecided."""
    if eq.reason:
        return UNDECIDED
    if eq.equivalent:
        return REPRODUCED
    return CONTRADICTED if eq.lo > eq.margin or eq.hi < -eq.margin else UNDECIDED


# An observed difference of means below this is float noise, not an effect: two variants whose per-question
# scores differ yet average the same give a difference of ~1e-17, and sizing for it asked for ~1e33 questions,
# past any integer column (the figures job of a default run with `precision: fp32` failed on it).
NOISE_EFFECT = 1e-9


def n_needed(sd_diff: float, effect: float, alpha_z: float = Z_ALPHA, power_z: float = Z_POWER) -> int | None:
    """Questions a paired two-sided 5% test needs to detect ``effect`` with 80% power, given the standard
    deviation of the per-question differences: ``ceil(((z_0.975 + z_0.8) * sd_diff / effect) ** 2)``.
    None when there is nothing to size (no spread, or no effect: one below :data:`NOISE_EFFECT`)."""
    if math.isnan(sd_diff) or math.isnan(effect) or not (sd_diff > 0 and abs(effect) >= NOISE_EFFECT):
        return None
    return math.ceil(((alpha_z + power_z) * sd_diff / abs(effect)) ** 2)


def detectable_effect(sd_diff: float, n: int, alpha_z: float = Z_ALPHA, power_z: float = Z_POWER) -> float | None:
    """The effect :func:`n_needed` would size to ``n`` questions (its inverse): the smallest true difference a
    paired two-sided 5% test on ``n`` questions detects with 80% power, given the per-question spread."""
    if not (sd_diff > 0 and n > 0) or math.isnan(sd_diff):
        return None
    return (alpha_z + power_z) * sd_diff / math.sqrt(n)


def min_detectable(lo: float, hi: float) -> float:
    """Smallest true difference a two-sided 5% test detects with 80% power, from the 95% interval."""
    return (Z_ALPHA + Z_POWER) * (hi - lo) / (2 * Z_ALPHA)


def holm(p: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (monotone, capped at 1), in the input order."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def holm_by_family(p: Sequence[float], families: Sequence[str]) -> list[float]:
    """:func:`holm` within each family (rows of one dataset and split), in the input order."""
    if len(p) != len(families):
        raise ValueError("holm_by_family: one family per p-value")
    out = [0.0] * len(p)
    for fam in dict.fromkeys(families):
        idx = [i for i, f in enumerate(families) if f == fam]
        for i, adj in zip(idx, holm([p[i] for i in idx]), strict=True):
            out[i] = adj
    return out
