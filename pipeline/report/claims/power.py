"""Honest power for a claims row (issue #44 item 6): the n its reading needs and the chance it reads what the
claim needs, by simulating the planned procedure at the published effect, never at the observed one.

The population is a pilot's question pairs tilted to the published effect
(:mod:`pipeline.report.stats.sizing`): for a WattBot row on a held-out split the score split's pairs of the
same two variants (train: the questions defaults were chosen on, none of the held-out ones), else the row's
own pairs, whose ties and score levels it keeps while the tilt sets their effect to the published one. A
``negligible`` claim is sized for concluding equivalence within its margin when the paper's own effect is
the truth (0 when it has none, or one beyond the margin). The test simulated is the row's own (its scale,
its level: alpha / m for a family of m, the first Holm step), on questions drawn independently (the
document clustering of the row's own test is not simulated). A claim without a published effect or margin
has nothing to size for.

Cost (2 cores): each simulated sample is one sign-flip test of :data:`SIM_RESAMPLES` patterns; a row costs
:data:`REPLICATES` samples at its own n plus about ten n of the search, which starts from the normal
formula's n (:func:`pipeline.report.stats.verdicts.n_needed`) and stops at :data:`N_MAX`: seconds a row, a
minute or two for a claims table. Results are cached by their inputs within a process (the same pilot,
effect and level give the same sizing).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace

import numpy as np

from pipeline.report.render.tables import fmt
from pipeline.report.stats.signflip import ALPHA, Settings
from pipeline.report.stats.sizing import (
    Search,
    effect_reading,
    equivalence_reading,
    n_for_power,
    population,
    simulate,
)
from pipeline.report.stats.verdicts import n_needed

REPLICATES = 200  # simulated samples per n: Monte Carlo SE of a power near 0.8 is 0.03
SIM_RESAMPLES = 1000  # sign patterns per simulated test
N_MAX = 3000  # the largest n searched ("more than 3000" beyond)


@dataclass(frozen=True)
class Target:
    """What a row is sized for: the truth on the test's scale and how the sample is read."""

    truth: float
    scale: str
    margin: float | None  # an equivalence reading against ±margin; None: the published effect's reading
    label: str  # n_needed_for: 'published +0.031', 'equivalence within ±0.05 at the published +0.031'


def target_of(direction: str, published: float | None, scale: str, margin: float | None) -> Target | None:
    """The row's sizing target (None: no published effect and no margin, nothing to size for)."""
    if direction == "negligible" and margin:
        truth = published if published is not None and abs(published) < margin else 0.0
        at = f"the published {fmt(truth, signed=True)}" if truth else "no difference"
        return Target(truth, "difference", margin, f"equivalence within ±{margin:g} at {at}")
    if published is None:
        return None
    shown = f"{published:+.0%} relative" if scale == "ratio" else fmt(published, signed=True)
    return Target(published, scale, None, f"published {shown}")


_CACHE: dict[str, dict] = {}


def _key(t: np.ndarray, c: np.ndarray, n: int, target: Target, alpha: float, seed: int) -> str:
    h = hashlib.sha256()
    for part in (t, c):
        h.update(np.ascontiguousarray(part, dtype=float).tobytes())
    h.update(repr((n, target, alpha, seed, REPLICATES, SIM_RESAMPLES, N_MAX)).encode())
    return h.hexdigest()


def _start(t: np.ndarray, c: np.ndarray, target: Target) -> int:
    """The normal formula's n, where the search starts: for the effect (a relative one times the pilot's
    control mean), or for the distance from the truth to the margin."""
    d = t - c
    sd = float(np.std(d, ddof=1)) if len(d) > 1 else math.nan
    effect = target.truth * float(c.mean()) if target.scale == "ratio" else target.truth
    if target.margin is not None:
        effect = target.margin - abs(effect)
    return min(N_MAX, max(8, n_needed(sd, effect) or 8))


def size_row(pilot_t, pilot_c, n: int, target: Target, alpha: float = ALPHA, seed: int = 0) -> dict:
    """``power`` (the chance of reading what the claim needs at this row's n), ``p_consistent`` (of reading
    "consistent with published" there), ``n_needed`` (the smallest n with power 0.8; None beyond
    :data:`N_MAX`) and ``n_needed_for`` (the target), from the pilot tilted to the target's truth."""
    t, c = np.asarray(pilot_t, dtype=float), np.asarray(pilot_c, dtype=float)
    key = _key(t, c, n, target, alpha, seed)
    if key in _CACHE:
        return _CACHE[key]
    settings = Settings(alpha=alpha, resamples=SIM_RESAMPLES, seed=seed)
    if target.margin is not None:
        reading = equivalence_reading(target.margin, settings)
    else:
        reading = effect_reading(target.truth, target.scale, settings)
    out: dict = {"n_needed_for": target.label}
    pop = population(t, c, target.truth, target.scale)
    if pop is None or n < 1:
        why = "no pilot pair on both sides of it" if pop is None else "no question"
        out |= {"power": None, "p_consistent": None, "n_needed": None, "n_needed_for": f"{target.label}: {why}"}
    else:
        here = simulate(pop, n, reading, REPLICATES, seed)
        search = Search(start=_start(t, c, target), n_max=N_MAX, replicates=REPLICATES, seed=seed)
        found = n_for_power(t, c, target.truth, reading, target.scale, search)
        out |= {
            "power": here.power,
            "p_consistent": here.consistent if target.margin is None else None,
            "n_needed": found.n_needed,
        }
        if found.n_needed is None:
            out["n_needed_for"] = f"{target.label}: more than {N_MAX}"
    _CACHE[key] = out
    return out


def with_level(settings: Settings, m: int) -> Settings:
    """The settings of a test at the first Holm step of a family of ``m``."""
    return replace(settings, alpha=settings.alpha / max(1, m))
