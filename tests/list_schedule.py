"""What Snakemake's local scheduler does with a DAG's priorities, simulated on N cores (list scheduling).

Snakemake 9 selects jobs at the start and each time a job ends, among the ready jobs that fit the free
cores (a job needs its ``threads`` cores, at most ``--cores``), and never leaves a core idle while a
ready job fits. Which ones: its default ILP scheduler starts the set with the largest SUM of priorities
(more cores busy breaks a tie: snakemake/scheduling/milp.py), the greedy one (the ILP's fallback) the
highest priority that fits, then the next (snakemake/scheduling/greedy.py). Job lengths are exact here,
so the simulated makespan measures the order the priorities give, nothing else.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SimJob:
    seconds: float
    cores: int = 1
    dependents: tuple[str, ...] = ()


Selector = Callable[[Sequence[str], int, Mapping[str, int], Mapping[str, int]], list[str]]


def ilp(ready: Sequence[str], free: int, priority: Mapping[str, int], cores: Mapping[str, int]) -> list[str]:
    """The set of ready jobs that fits ``free`` cores with the largest sum of priorities, then of cores
    (a 0/1 knapsack over the few free cores; Snakemake solves the same objective as an ILP)."""
    best: list[tuple[tuple[int, int], list[str]]] = [((0, 0), []) for _ in range(free + 1)]
    for job in sorted(ready, key=lambda j: (-priority[j], j)):
        c = cores[job]
        for cap in range(free, c - 1, -1):
            (p, used), chosen = best[cap - c]
            if (p + priority[job], used + c) > best[cap][0]:
                best[cap] = ((p + priority[job], used + c), [*chosen, job])
    return best[free][1]


def greedy(ready: Sequence[str], free: int, priority: Mapping[str, int], cores: Mapping[str, int]) -> list[str]:
    """The highest priority that fits, then the next that still fits, until nothing does."""
    chosen = []
    for job in sorted(ready, key=lambda j: (-priority[j], j)):
        if cores[job] <= free:
            chosen.append(job)
            free -= cores[job]
    return chosen


def makespan(jobs: Mapping[str, SimJob], priority: Mapping[str, int], n_cores: int, select: Selector = ilp) -> float:
    """Seconds from the first job's start to the last one's end when ``select`` picks the jobs to start."""
    cores = {j: min(max(1, s.cores), n_cores) for j, s in jobs.items()}
    waiting = {j: 0 for j in jobs}
    for spec in jobs.values():
        for d in spec.dependents:
            waiting[d] += 1
    ready = {j for j, n in waiting.items() if n == 0}
    running: list[tuple[float, str]] = []
    now, free = 0.0, n_cores
    while ready or running:
        for job in select(sorted(ready), free, priority, cores):
            ready.discard(job)
            free -= cores[job]
            heapq.heappush(running, (now + jobs[job].seconds, job))
        now = running[0][0]
        while running and running[0][0] == now:  # every job ending now frees its cores before the next pick
            _, done = heapq.heappop(running)
            free += cores[done]
            for d in jobs[done].dependents:
                waiting[d] -= 1
                if waiting[d] == 0:
                    ready.add(d)
    return now
