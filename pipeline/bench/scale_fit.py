"""The scale model's fit (#45 item 5): a stage's cost against corpus size as a power law, ``cost ~ size^k``,
its exponent ``k`` the least-squares slope of log cost on log size.

Why a slope and no interval: the bench measures a few sizes (three by default), so the exponent is a rough
reading of how the cost grows, with the number of points it rests on said beside it, never a confidence it
does not have. A fixed cost (the interpreter, a model's load) flattens a small corpus's slope: the exponent of
a stage whose fixed part dominates reads below its growth at scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

SUPERLINEAR = 1.1  # the bound: a stage growing faster than this is explained or fixed
METRICS = ("cpu_s", "peak_rss_mb", "output_bytes")  # what the bench measures of each stage's job


@dataclass(frozen=True)
class Fit:
    """``cost ~ size^exponent`` through ``points`` (size, cost) pairs; ``superlinear`` above :data:`SUPERLINEAR`."""

    exponent: float
    points: int
    superlinear: bool

    def as_dict(self) -> dict:
        return asdict(self)


def loglog_fit(sizes: Sequence[float], costs: Sequence[float]) -> Fit | None:
    """The least-squares slope of ``log cost`` on ``log size`` over the pairs with both positive; None with
    fewer than two such pairs or a single size (no slope to read)."""
    pairs = [(math.log(s), math.log(c)) for s, c in zip(sizes, costs, strict=True) if s > 0 and c > 0]
    if len(pairs) < 2:
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    if sxx == 0:
        return None
    k = sum((x - mx) * (y - my) for x, y in pairs) / sxx
    return Fit(round(k, 3), len(pairs), k > SUPERLINEAR)


def stage_fits(sizes: Sequence[float], stages: Mapping[str, Sequence[Mapping[str, float]]]) -> dict[str, dict]:
    """Per stage, per measured metric (:data:`METRICS`): its :class:`Fit` as a dict (None where no slope can
    be read). ``stages[name][i]`` is the stage's measurement at ``sizes[i]``."""
    return {
        name: {m: fit_dict(sizes, [r[m] for r in rows]) for m in METRICS if all(m in r for r in rows)}
        for name, rows in stages.items()
    }


def superlinear(fits: Mapping[str, Mapping[str, dict | None]]) -> list[str]:
    """``"<stage> <metric>"`` of every fit whose exponent exceeds :data:`SUPERLINEAR`, in the fits' order."""
    return [f"{stage} {m}" for stage, by in fits.items() for m, f in by.items() if f and f["superlinear"]]


def fit_dict(sizes: Sequence[float], costs: Sequence[float]) -> dict | None:
    """:func:`loglog_fit` as the bench file keeps it (None: no slope)."""
    fit = loglog_fit(sizes, costs)
    return fit.as_dict() if fit else None
