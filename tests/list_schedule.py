"""What Snakemake's local scheduler does with a DAG's priorities, simulated on N cores (list scheduling).

Snakemake 9 selects jobs at the start and each time a job ends, among the ready jobs that fit the free
cores (a job needs its ``threads`` cores, at most ``--cores``) and the free ``llm_api`` units (a job
takes its model's share: pipeline/workflow/llm_shares.py), and never leaves a core idle while a ready
job fits. Which ones: its default ILP scheduler starts the set with the largest SUM of priorities
(more cores busy breaks a tie: snakemake/scheduling/milp.py), the greedy one (the ILP's fallback) the
highest priority that fits, then the next (snakemake/scheduling/greedy.py). Job lengths are exact here,
so the simulated makespan measures the order the priorities give, nothing else.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

Need = tuple[int, int]  # (cores, llm_api units) a job holds while it runs


@dataclass(frozen=True)
class SimJob:
    seconds: float
    cores: int = 1
    dependents: tuple[str, ...] = ()
    llm_api: int = 0


Selector = Callable[[Sequence[str], Need, Mapping[str, int], Mapping[str, Need]], list[str]]


def _fits(need: Need, free: Need) -> bool:
    return need[0] <= free[0] and need[1] <= free[1]


def _left(free: Need, need: Need) -> Need:
    return free[0] - need[0], free[1] - need[1]


def ilp(ready: Sequence[str], free: Need, priority: Mapping[str, int], need: Mapping[str, Need]) -> list[str]:
    """The set of ready jobs that fits the ``free`` cores and llm_api units with the largest sum of
    priorities, then of cores (a 0/1 knapsack over what is free; Snakemake solves the same objective as an ILP)."""
    best: dict[Need, tuple[tuple[int, int], list[str]]] = {free: ((0, 0), [])}  # by what the set leaves free
    for job in sorted(ready, key=lambda j: (-priority[j], j)):
        for left, ((p, used), chosen) in list(best.items()):
            if _fits(need[job], left):
                rest, score = _left(left, need[job]), (p + priority[job], used + need[job][0])
                if rest not in best or score > best[rest][0]:
                    best[rest] = (score, [*chosen, job])
    return max(best.values(), key=lambda v: v[0])[1]


def greedy(ready: Sequence[str], free: Need, priority: Mapping[str, int], need: Mapping[str, Need]) -> list[str]:
    """The highest priority that fits, then the next that still fits, until nothing does."""
    chosen = []
    for job in sorted(ready, key=lambda j: (-priority[j], j)):
        if _fits(need[job], free):
            chosen.append(job)
            free = _left(free, need[job])
    return chosen


def schedule(
    jobs: Mapping[str, SimJob],
    priority: Mapping[str, int],
    n_cores: int,
    select: Selector = ilp,
    llm_api: int | None = None,
) -> dict[str, tuple[float, float]]:
    """Each job's (start, end) in seconds when ``select`` picks the jobs to start; ``llm_api``: the run's
    total (None: no limit), each job's share capped at it as the Snakefile does."""
    api = llm_api if llm_api is not None else sum(s.llm_api for s in jobs.values())
    need = {j: (min(max(1, s.cores), n_cores), min(s.llm_api, api)) for j, s in jobs.items()}
    waiting = {j: 0 for j in jobs}
    for spec in jobs.values():
        for d in spec.dependents:
            waiting[d] += 1
    ready = {j for j, n in waiting.items() if n == 0}
    running: list[tuple[float, str]] = []
    times: dict[str, tuple[float, float]] = {}
    now, free = 0.0, (n_cores, api)
    while ready or running:
        for job in select(sorted(ready), free, priority, need):
            ready.discard(job)
            free = _left(free, need[job])
            times[job] = (now, now + jobs[job].seconds)
            heapq.heappush(running, (now + jobs[job].seconds, job))
        now = running[0][0]
        while running and running[0][0] == now:  # every job ending now frees its share before the next pick
            _, done = heapq.heappop(running)
            free = (free[0] + need[done][0], free[1] + need[done][1])
            for d in jobs[done].dependents:
                waiting[d] -= 1
                if waiting[d] == 0:
                    ready.add(d)
    return times


def makespan(
    jobs: Mapping[str, SimJob],
    priority: Mapping[str, int],
    n_cores: int,
    select: Selector = ilp,
    llm_api: int | None = None,
) -> float:
    """Seconds from the first job's start to the last one's end (:func:`schedule`)."""
    return max((end for _, end in schedule(jobs, priority, n_cores, select, llm_api).values()), default=0.0)
