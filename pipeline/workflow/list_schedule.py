"""What Snakemake's scheduler does with a DAG's priorities, simulated on N nodes of C cores (list scheduling).

Why a simulation: job priorities (pipeline/workflow/critical_path.py) and the cluster prediction
(pipeline/workflow/makespan.py) are judged by the makespan they give, and a run on every node count is not
to be had. Job lengths are exact here, so the simulated makespan measures the order and the placement the
scheduler gives, nothing else.

One machine (``nodes=1``, ``latency_s=0``) is a local run: Snakemake 9 selects jobs at the start and each
time a job ends, among the ready jobs that fit the free cores (a job needs its ``threads`` cores, at most
``--cores``) and the free ``llm_api`` units (a job takes its model's share: pipeline/workflow/llm_shares.py),
and never leaves a core idle while a ready job fits. Which ones: its default ILP scheduler starts the set
with the largest SUM of priorities (more cores busy breaks a tie: snakemake/scheduling/milp.py), the greedy
one (the ILP's fallback) the highest priority that fits, then the next (snakemake/scheduling/greedy.py).

Several nodes are a cluster (SLURM): a job runs on one node and needs all its threads there (a job
declaring more threads than a node has is scaled down to the node, as ``--cores`` scales it locally);
``llm_api`` stays one total across nodes. A job becomes ready when the last job it depends on ends, and
starts no sooner than ``latency_s`` later (sbatch to running: the submission's own cost, paid by every job,
so along a chain once per job). Nodes take jobs in their order, each picking from the ready jobs with
``select`` on its own free cores.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

Need = tuple[int, int]  # (cores, llm_api units) a job holds while it runs


@dataclass(frozen=True)
class SimJob:
    """One job: its wall seconds, the cores it holds, the jobs waiting on it, its ``llm_api`` share."""

    seconds: float
    cores: int = 1
    dependents: tuple[str, ...] = ()
    llm_api: int = 0


@dataclass(frozen=True)
class Nodes:
    """How many nodes of ``n_cores`` each, and the seconds from a job's submission to its start."""

    count: int = 1
    latency_s: float = 0.0


LOCAL = Nodes()  # one machine, no submissions: a local run

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


@dataclass
class _State:
    """The simulation's moving parts: free cores per node, free llm_api units, and the three queues."""

    free: list[int]
    api: int
    waiting: dict[str, int]
    ready: set[str] = field(default_factory=set)
    submitted: list[tuple[float, str]] = field(default_factory=list)  # (when it may start, job): the latency
    running: list[tuple[float, str, int]] = field(default_factory=list)  # (end, job, node)
    times: dict[str, tuple[float, float]] = field(default_factory=dict)


def _start(s: _State, now: float, jobs: Mapping[str, SimJob], need: Mapping[str, Need], pick: Callable) -> None:
    """Every job whose latency has passed is ready; each node in turn starts what ``pick`` chooses."""
    while s.submitted and s.submitted[0][0] <= now:
        s.ready.add(heapq.heappop(s.submitted)[1])
    for node, cores in enumerate(s.free):
        if not cores or not s.ready:
            continue
        for job in pick(sorted(s.ready), (s.free[node], s.api)):
            s.ready.discard(job)
            s.free[node] -= need[job][0]
            s.api -= need[job][1]
            s.times[job] = (now, now + jobs[job].seconds)
            heapq.heappush(s.running, (now + jobs[job].seconds, job, node))


def _finish(s: _State, now: float, jobs: Mapping[str, SimJob], need: Mapping[str, Need], latency_s: float) -> None:
    """Every job ending ``now`` frees its share before the next pick; its dependents left with nothing to
    wait for are submitted, to start ``latency_s`` later."""
    while s.running and s.running[0][0] == now:
        _, done, node = heapq.heappop(s.running)
        s.free[node] += need[done][0]
        s.api += need[done][1]
        for d in jobs[done].dependents:
            s.waiting[d] -= 1
            if s.waiting[d] == 0:
                heapq.heappush(s.submitted, (now + latency_s, d))


def _needs(jobs: Mapping[str, SimJob], n_cores: int, llm_api: int | None) -> tuple[dict[str, Need], int]:
    """Each job's (cores, llm_api) capped at a node's cores and the run's total, and that total."""
    api = llm_api if llm_api is not None else sum(s.llm_api for s in jobs.values())
    return {j: (min(max(1, s.cores), n_cores), min(s.llm_api, api)) for j, s in jobs.items()}, api


def schedule(
    jobs: Mapping[str, SimJob],
    priority: Mapping[str, int],
    n_cores: int,
    select: Selector = ilp,
    llm_api: int | None = None,
    nodes: Nodes = LOCAL,
) -> dict[str, tuple[float, float]]:
    """Each job's (start, end) in seconds on ``nodes.count`` nodes of ``n_cores`` cores when ``select``
    picks the jobs each node starts; ``llm_api``: the run's total (None: no limit), each job's share capped
    at it as the Snakefile does; ``nodes.latency_s``: from a job's submission (its last input done) to its start."""
    need, api = _needs(jobs, n_cores, llm_api)
    waiting = {j: 0 for j in jobs}
    for spec in jobs.values():
        for d in spec.dependents:
            waiting[d] += 1
    s = _State([n_cores] * nodes.count, api, waiting)
    s.submitted = [(nodes.latency_s, j) for j, n in sorted(waiting.items()) if n == 0]
    heapq.heapify(s.submitted)
    now = 0.0
    while s.submitted or s.ready or s.running:
        _start(s, now, jobs, need, lambda ready, free: select(ready, free, priority, need))
        if not s.running and not s.submitted:
            raise ValueError(f"jobs that can never start: {sorted(s.ready)[:5]}")
        now = min([*(t for t, _, _ in s.running[:1]), *(t for t, _ in s.submitted[:1])])
        _finish(s, now, jobs, need, nodes.latency_s)
    return s.times


def makespan(times: Mapping[str, tuple[float, float]]) -> float:
    """Seconds from the first submission to the last job's end of a :func:`schedule`."""
    return max((end for _, end in times.values()), default=0.0)
