"""The run as a timeline: one bar per job over wall-clock time, in lanes of jobs that ran side by side,
the planned critical path marked (``logs/critical_path.json``, written at ``onstart`` by
pipeline/workflow/critical_path.py). It shows where a core waited and what the last link of the
longest chain waited for. Drawn from the benchmark files, so it is run telemetry like the time table.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

CRITICAL_PATH = Path("logs") / "critical_path.json"


class Timed(Protocol):
    """A benchmark record (``time_table.JobTime``): named here so this module does not import its reader."""

    @property
    def job(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def end(self) -> float: ...


@dataclass(frozen=True)
class Bar:
    job: str
    rule: str
    start: float  # seconds since the run's first job started
    end: float
    lane: int
    critical: bool


def lanes(jobs: Sequence[Timed], critical: set[str]) -> list[Bar]:
    """Jobs in start order, each in the first lane free when it starts (a lane is a slot of the run's
    parallelism: 2 lanes on 2 cores when every job took one)."""
    if not jobs:
        return []
    t0 = min(j.end - j.wall_s for j in jobs)
    free_at: list[float] = []
    bars = []
    for j in sorted(jobs, key=lambda j: (j.end - j.wall_s, j.job)):
        start, end = j.end - j.wall_s - t0, j.end - t0
        lane = next((i for i, t in enumerate(free_at) if t <= start + 0.5), len(free_at))
        if lane == len(free_at):
            free_at.append(end)
        free_at[lane] = end
        bars.append(Bar(j.job, j.rule, start, end, lane, j.job in critical))
    return bars


def planned_critical_path(root: str | Path) -> list[str]:
    try:
        return list(json.loads((Path(root) / CRITICAL_PATH).read_text(encoding="utf-8"))["jobs"])
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return []


def timeline_png(bars: list[Bar]) -> bytes:
    """Bars per lane over minutes, coloured by rule; the critical path's jobs outlined in black."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rules = sorted({b.rule for b in bars})
    colours = {r: plt.get_cmap("tab20" if i < 20 else "tab20b")(i % 20) for i, r in enumerate(rules)}
    n_lanes = max(b.lane for b in bars) + 1
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.5 * n_lanes), dpi=110)
    for b in bars:
        ax.barh(
            b.lane,
            (b.end - b.start) / 60,
            left=b.start / 60,
            height=0.8,
            color=colours[b.rule],
            edgecolor="black" if b.critical else "white",
            linewidth=1.6 if b.critical else 0.3,
        )
    ax.set_yticks(range(n_lanes), [f"lane {i + 1}" for i in range(n_lanes)])
    ax.invert_yaxis()
    ax.set_xlabel("minutes since the first job started")
    ax.set_title("Jobs over time (black outline: the planned critical path)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[r]) for r in rules]
    ax.legend(
        handles,
        rules,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25 - 0.3 / n_lanes),
        ncol=4,
        fontsize=8,
        frameon=False,
    )
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
