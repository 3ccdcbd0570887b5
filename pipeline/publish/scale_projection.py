"""The scale model projected to a corpus no run has measured (#45 item 7): docs/scale.md's MS MARCO projection.

Every figure is one measurement carried along its fitted power law: the stage's cost at the largest corpus the
scale bench measured (``reports/bench/scale.json``), times the ratio of the target's characters to that corpus's,
raised to the stage's exponent. Nothing is assumed about a stage's growth beyond what the bench fitted, so each
projected figure shows its derivation (measured, exponent, ratio, result) and is only as good as a three-point
slope: a fixed part (an encoder's load) flattens a small corpus's slope and the projection then reads low. A
negative exponent (noise on a flat cost) is read as flat: a cost does not shrink as its corpus grows.

A job that runs one per shard (pipeline/shards.py) sees at most ``shards.max_chars`` characters, whatever the
corpus: its memory and CPU per job are projected to one shard, its total CPU and output to the whole corpus. A
job that runs once per dataset sees the whole corpus. A component *breaks* when its projected cost passes a
stated bound (:class:`Bounds`); the corpus size at which it does is the power law solved for that bound, so the
first component to break is the one with the smallest such size. Pure functions of the bench file: the renderer
(pipeline/publish/scale_doc.py) reads the target's size and the bounds' values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

METRICS = ("cpu_s", "peak_rss_mb", "output_bytes")  # what the scale bench measures of each stage's job
LATENCY = "median_ms"  # per-query latency: the bench's median of single-query searches
CORPUS, SHARD = "corpus", "shard"  # the size a figure is projected to: the whole target, or one shard of it
RETRIEVE = "retrieve "  # the prefix of the retrieval stages (one job asking the bench's queries)
FAR = math.log(1e30)  # a break further than this ratio of sizes is none (a near-flat slope would overflow)


@dataclass(frozen=True)
class Bounds:
    """Where a component breaks. Assumptions, not measurements (docs/scale.md shows them as such): a job's
    memory over one node's, a job's CPU over one scheduler slot's limit, a query slower than interactive."""

    node_memory_mb: float = 16 * 1024  # a 2-core node (the cluster simulation's, #45 item 6) with 8 GiB a core
    job_cpu_s: float = 24 * 3600  # a common Slurm partition's longest job, on one core
    query_ms: float = 1000.0  # a retrieval a person waits for before the LLM's answer starts

    def of(self, metric: str) -> float | None:
        """The bound on ``metric`` (None: the metric is reported, not bounded: output bytes)."""
        return {"peak_rss_mb": self.node_memory_mb, "cpu_s": self.job_cpu_s, LATENCY: self.query_ms}.get(metric)


@dataclass(frozen=True)
class Target:
    """The corpus projected to, in characters (the bench's size unit), and how the DAG cuts it."""

    name: str
    chars: float
    shard_chars: int  # shards.max_chars: a per-shard job's corpus
    sharded: frozenset[str] = frozenset()  # the bench's stages that run one job per shard
    bounds: Bounds = field(default_factory=Bounds)

    def shards(self) -> int:
        """Shard jobs of the target: its characters over the bound, rounded up (whole documents fill a shard
        to at most the bound, so this is a floor on the count)."""
        return max(1, -(-int(self.chars) // self.shard_chars))


@dataclass(frozen=True)
class Projected:
    """One figure: ``measured`` at ``at_chars`` (the bench's largest corpus) carried to ``to_chars`` along
    ``cost ~ size^exponent``; ``value`` None where the bench read no slope."""

    component: str  # a stage ("index hier", "retrieve bm25") or a variant's per-query latency ("bm25")
    metric: str
    scope: str  # CORPUS or SHARD
    measured: float
    at_chars: float
    to_chars: float
    exponent: float | None
    superlinear: bool

    @property
    def ratio(self) -> float:
        return self.to_chars / self.at_chars

    @property
    def value(self) -> float | None:
        return None if self.exponent is None else power_law(self.measured, self.ratio, self.exponent)

    def breaks_at(self, bound: float) -> float | None:
        """The corpus characters at which this figure reaches ``bound`` along its power law (below the bench's
        sizes when it is already over); a flat or unfitted figure over its bound breaks at any size (0), one
        under it (or one whose break lies beyond :data:`FAR`) never (None)."""
        if self.exponent is None or self.exponent <= 0 or self.measured <= 0:
            return 0.0 if self.measured >= bound else None
        log_ratio = math.log(bound / self.measured) / self.exponent
        return None if log_ratio > FAR else self.at_chars * math.exp(log_ratio)


def power_law(measured: float, ratio: float, exponent: float) -> float:
    """``measured * ratio ** k``, ``k`` read as at least 0 (a cost does not shrink as its corpus grows)."""
    return measured * ratio ** max(exponent, 0.0)


@dataclass(frozen=True)
class Break:
    """Where one job or query passes its bound: ``chars`` of corpus (None: not along its power law)."""

    figure: Projected
    bound: float
    chars: float | None

    def within(self, target: Target) -> bool:
        return self.chars is not None and self.chars <= target.chars


@dataclass(frozen=True)
class Projection:
    """Every projected figure of one bench file to one target, and where each bounded one breaks."""

    target: Target
    largest_chars: float
    queries: int  # the retrieval stages' jobs each ask these
    stages: list[Projected]
    latency: list[Projected]
    breaks: list[Break]

    def first_break(self) -> Break | None:
        """The component that breaks at the smallest corpus, if any breaks by the target's size."""
        hit = [b for b in self.breaks if b.within(self.target)]
        return min(hit, key=lambda b: b.chars or 0.0) if hit else None

    def total(self, metric: str, retrieval: bool = False) -> float:
        """Sum over the whole-corpus figures of ``metric``: the build's stages, or (``retrieval``) the retrieval
        jobs'. Figures without a slope are left out (:meth:`unprojected` names them)."""
        return sum(
            p.value or 0.0
            for p in self.stages
            if p.scope == CORPUS and p.metric == metric and p.component.startswith(RETRIEVE) == retrieval
        )

    def unprojected(self) -> list[str]:
        return [f"{p.component} {p.metric}" for p in [*self.stages, *self.latency] if p.value is None]


def _figure(what: tuple[str, str, str], rows: list, fit: Mapping | None, at: float, to: float) -> Projected:
    """One stage's (or variant's) ``metric`` (``what``: component, metric, scope) at the bench's largest size,
    projected to ``to`` characters."""
    component, metric, scope = what
    k = fit["exponent"] if fit else None
    return Projected(component, metric, scope, float(rows[-1][metric]), at, to, k, bool(fit and fit["superlinear"]))


def stage_figures(bench: Mapping, target: Target) -> list[Projected]:
    """Each stage's CPU-s, peak memory and output bytes projected to the whole target; a sharded stage's CPU-s
    and memory also to one shard of ``shards.max_chars`` characters (what one of its jobs costs)."""
    at = float(bench["sizes"][-1]["chars"])
    out = []
    for stage, rows in bench["stages"].items():
        fits = bench["fits"].get(stage, {})
        for m in METRICS:
            if all(m in r for r in rows):
                out.append(_figure((stage, m, CORPUS), rows, fits.get(m), at, target.chars))
        if stage in target.sharded:
            shard = min(target.chars, float(target.shard_chars))
            out += [_figure((stage, m, SHARD), rows, fits.get(m), at, shard) for m in ("cpu_s", "peak_rss_mb")]
    return out


def latency_figures(bench: Mapping, target: Target) -> list[Projected]:
    """Each retrieval variant's median per-query latency projected to the whole target: a query searches the
    whole corpus's index (one table, one BM25 model, every document's tree)."""
    at = float(bench["sizes"][-1]["chars"])
    return [
        _figure((v, LATENCY, CORPUS), rows, bench["latency_fits"].get(v), at, target.chars)
        for v, rows in bench["latency"].items()
    ]


def job_figures(stages: list[Projected], target: Target) -> list[Projected]:
    """The figures of jobs as the DAG runs them: a sharded stage's per-shard ones, any other stage's whole-corpus
    ones (a retrieval job loads the whole index)."""
    return [p for p in stages if p.scope == (SHARD if p.component in target.sharded else CORPUS)]


def breaks(figures: list[Projected], bounds: Bounds, target: Target) -> list[Break]:
    """Each bounded figure with the corpus size at which it passes its bound; a per-shard figure passes it only
    if it does within one shard (beyond, its job's corpus no longer grows)."""
    out = []
    for p in figures:
        bound = bounds.of(p.metric)
        if bound is None:
            continue
        chars = p.breaks_at(bound)
        if p.scope == SHARD and chars is not None and chars > target.shard_chars:
            chars = None
        out.append(Break(p, bound, chars))
    return out


def project(bench: Mapping, target: Target) -> Projection:
    """The scale bench's file (:mod:`pipeline.bench.scale`) projected to ``target``."""
    stages = stage_figures(bench, target)
    latency = latency_figures(bench, target)
    found = breaks([*job_figures(stages, target), *latency], target.bounds, target)
    largest = float(bench["sizes"][-1]["chars"])
    return Projection(target, largest, int(bench["retrieval_queries"]), stages, latency, found)
