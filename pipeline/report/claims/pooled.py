"""A multi-dataset claim's pooled row (issue #44 item 9): ``dataset`` = ``pooled``.

SproutRAG's headline claim is "+6.1 % IE on average over the strongest baseline across four benchmarks": a
claim about the average effect, which testing each dataset alone never tests. The pooled row pools the
claim's per-dataset differences (each with its standard error, cluster-robust where its questions share
documents: :func:`pipeline.report.stats.pooling.difference_se`) by a fixed effect and by random effects
meant for few datasets (Paule-Mandel tau², modified Hartung-Knapp-Sidik-Jonkman; :mod:`pipeline.report.stats.pooling`),
with I². Its verdict reads the random-effects interval (the mean of the datasets' true effects, which may
differ): against the published average where the claim gives one (``pooled.value``), else by the claimed
direction; the note reads it against the mean of the published values of the datasets pooled too, and
names the datasets pooled, those without a published value and those the source averaged that this
harness does not have. Datasets whose row measured nothing (not run, not testable) are left out, and named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.report.claims.claim import Claim
from pipeline.report.claims.families import NOT_RUN
from pipeline.report.claims.reading import Pairs
from pipeline.report.render.tables import fmt
from pipeline.report.stats.pooling import FIXED, RANDOM, difference_se, pool
from pipeline.report.stats.verdicts import UNDECIDED, published_verdict, verdict


@dataclass(frozen=True)
class Part:
    """One dataset's row as the pooling reads it."""

    dataset: str
    pairs: Pairs | None  # None: the row measured nothing
    why_out: str = ""  # why it is left out of the pool ('' when it is in)


def _interval(e) -> str:
    return f"{fmt(e.estimate, signed=True)} [{fmt(e.lo, signed=True)}, {fmt(e.hi, signed=True)}]"


def pooled_row(claim: Claim, parts: list[Part], alpha: float) -> dict:
    """The pooled row's measured columns, verdict and note (the caller adds the claim's own columns)."""
    use = [p for p in parts if p.pairs is not None and not p.why_out]
    est = [float(np.mean(p.pairs.t - p.pairs.c)) for p in use if p.pairs is not None]
    ses = [difference_se(p.pairs.t, p.pairs.c, p.pairs.clusters) for p in use if p.pairs is not None]
    res = pool(est, ses, [p.dataset for p in use], alpha)
    named = [p.dataset for p in use]
    published = claim.effect.on if claim.effect else (lambda _d: None)
    with_value = [d for d in named if published(d) is not None]
    notes = [f"pooled: {', '.join(named) or 'none'}"]
    if claim.effect and (without := [d for d in named if published(d) is None]):
        notes.append(f"no published value: {', '.join(without)}")
    if claim.pooled and claim.pooled.absent:
        notes.append(
            "averaged by the source, absent here: " + "; ".join(f"{d} ({w})" for d, w in claim.pooled.absent.items())
        )
    if out := [f"{p.dataset} ({p.why_out})" for p in parts if p.why_out]:
        notes.append("left out: " + "; ".join(out))
    n = int(sum(len(p.pairs.t) for p in use if p.pairs is not None))
    base = {"n": n, "units": f"{len(use)} datasets", "scale": "difference", "test": RANDOM, "level": 1 - alpha}
    if not use and parts and all(p.why_out == NOT_RUN for p in parts):
        return base | {"verdict": NOT_RUN, "reason": "", "note": "no dataset of the claim ran"}
    if res.random is None or res.fixed is None:
        return base | {"verdict": UNDECIDED, "reason": res.reason, "note": "; ".join([res.reason, *notes])}
    re, fe = res.random, res.fixed
    target = claim.pooled.value if claim.pooled and claim.pooled.value is not None else None
    mean_published = float(np.mean([published(d) for d in with_value])) if with_value else None
    v = verdict(claim.direction, re.lo, re.hi) if target is None else published_verdict(re.lo, re.hi, target)
    notes.insert(0, f"{FIXED}: {_interval(fe)}; I² {res.i2:.0%}, tau² {res.tau2:.2g}")
    if mean_published is not None:
        vs_mean = published_verdict(re.lo, re.hi, mean_published)
        mean = fmt(mean_published, 4, signed=True)
        notes.insert(1, f"against the mean of the published values of {', '.join(with_value)} ({mean}): {vs_mean}")
    return base | {
        "estimate": re.estimate,
        "lo": re.lo,
        "hi": re.hi,
        "diff": re.estimate,
        "p": re.p,
        "published": target,
        "verdict": v,
        "reason": "",
        "note": "; ".join(notes),
        "mc_se": 0.0,
        "mc_se_ends": math.nan,
    }
