"""docs/scale.md's ``scale-projection`` block (#45 item 7): the scale model carried to MS MARCO v1's full passage
collection, each figure with its derivation (pipeline/publish/scale_projection.py does the arithmetic).

The target's size is measured, not typed: MS MARCO v1's passage count (a published constant,
pipeline/datasets/msmarco.py) times the mean length of the passages the suite holds of it (the TREC DL pool), read
from the data when the block is rendered. How the DAG cuts the target (``shards.max_chars`` and which index kinds
build in shards) is read from the default config and the index-kind registry, as the bench ran that config.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline import markdown
from pipeline.publish.bench_doc import bench_path
from pipeline.publish.scale_projection import (
    LATENCY,
    SHARD,
    Break,
    Projected,
    Projection,
    Target,
    project,
)

# What one query of each index kind does over the corpus: the search whose latency the projection carries.
KIND_QUERY = {
    "tree": "exact k-NN over one sqlite-vec table (every sentence and section)",
    "chunks": "exact k-NN over one sqlite-vec table (every chunk)",
    "bm25": "rank-bm25 scores every node",
    "sprout": "beam search through every document's tree",
}
FIGURES = {"cpu_s": "CPU-s", "peak_rss_mb": "peak MB", "output_bytes": "output bytes", LATENCY: "ms a query"}
BEYOND = 1000  # a break past this many times the target is named, not sized
SHARDED_ALWAYS = frozenset({"sprout_attention"})  # its passes run one job per shard (pipeline/rules/shards.smk)


@dataclass(frozen=True)
class MsMarco:
    """MS MARCO v1's collection as characters: its published passage count times the pool's mean length."""

    passages: int
    pool: int  # passages measured
    mean_chars: float

    @staticmethod
    def root() -> Path:
        """The suite's MS MARCO folder (``WATTBENCH_DATA`` or ../shared/data); importing its loader registers it."""
        import pipeline.datasets.suite_loaders  # noqa: F401 - registers the datasets default_root looks up
        from pipeline.datasets.suite import default_root

        return default_root("msmarco")

    @classmethod
    def measure(cls, root: Path) -> MsMarco:
        from pipeline.datasets.msmarco import V1_PASSAGES, passage_lengths

        lengths = passage_lengths(root)
        return cls(V1_PASSAGES, len(lengths), sum(lengths) / len(lengths))

    @property
    def chars(self) -> float:
        return self.passages * self.mean_chars


def sig(x: float) -> str:
    """Three significant digits, thousands separated: a projection claims no more."""
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{float(f'{x:.3g}'):,.0f}"
    return f"{x:.3g}"


@dataclass(frozen=True)
class ShardPlan:
    """How the DAG cuts a corpus, as the config says: ``shards.max_chars`` and the indexes whose kind the registry
    says builds in shards. Parsed once from the raw config, so the projection reads typed fields."""

    max_chars: int
    sharded_indexes: frozenset[str]

    @classmethod
    def from_dict(cls, cfg: dict) -> ShardPlan:
        import pipeline.indexes  # noqa: F401 - registers the built-in index kinds
        from pipeline.registry.index_kinds import kind_of
        from pipeline.specs import ShardSpec

        indexes = cfg.get("indexes", {})
        sharded = frozenset(name for name, entry in indexes.items() if kind_of(entry).shards)
        return cls(ShardSpec.from_dict(cfg.get("shards")).max_chars, sharded)

    def sharded_stages(self, stages: list[str]) -> frozenset[str]:
        """The bench's stages the DAG runs one job per shard: SproutRAG's attention, and the index of each kind the
        registry says builds in shards (an index the config does not name counts as built whole)."""
        by_kind = {s for s in stages if s.startswith("index ") and s[len("index ") :] in self.sharded_indexes}
        return frozenset(by_kind | (SHARDED_ALWAYS & set(stages)))


def default_plan() -> ShardPlan:
    """The shard plan of the config the bench runs by default (config.yaml), as resolved, unvalidated (validating
    needs every registry, which only a driver loads)."""
    from pipeline.config import DEFAULT_CONFIG, resolve_config
    from pipeline.datasets.paths import REPO

    return ShardPlan.from_dict(resolve_config([REPO / DEFAULT_CONFIG]))


def target(bench: dict, marco: MsMarco, plan: ShardPlan) -> Target:
    name = "MS MARCO v1 passages"
    return Target(name, marco.chars, plan.max_chars, plan.sharded_stages(list(bench["stages"])))


def render_projection(reports_dir: Path) -> str:
    """The block: the target's size and how it was read, the totals, every figure's derivation, the latency per
    index kind, each bounded component's breaking size and the first to break."""
    root = MsMarco.root()
    if not root.is_dir():
        return f"*Not rendered: MS MARCO's passages, which size the target, are not at `{root}`.*"
    bench = json.loads(bench_path(reports_dir, "scale").read_text())
    marco, plan = MsMarco.measure(root), default_plan()
    p = project(bench, target(bench, marco, plan))
    lines = [_head(bench, marco, p), "", *_totals(p), "", *_stage_table(p), "", *_latency_table(bench, p)]
    return "\n".join([*lines, "", *_break_lines(p, marco, bench.get("index_kinds", {}))])


def _head(bench: dict, marco: MsMarco, p: Projection) -> str:
    t = p.target
    return (
        f"Target: MS MARCO v1's passage collection, {marco.passages:,} passages (the TREC 2019 Deep Learning "
        f"track's overview) × {marco.mean_chars:.1f} characters a passage (the mean over the "
        f"passages of the TREC DL pool in `msmarco/passages.jsonl`, its SOURCE.md's count) = {sig(t.chars)} characters, "
        f"{sig(t.chars / p.largest_chars)} times the largest corpus the bench measured ({bench['dataset']}, "
        f"{p.largest_chars:,.0f} characters). `shards.max_chars` = {t.shard_chars:,}: {t.shards():,} shard jobs at "
        "least. Each figure is the measurement at the largest size × (target ÷ that size)^k, k the stage's fitted "
        "exponent (a negative k read as 0); a sharded stage's job is carried to one shard instead."
    )


def _largest(figures: list[Projected]) -> str:
    top = max(figures, key=lambda f: f.value or 0.0, default=None)
    return f"{sig(top.value or 0.0)} ({top.component})" if top else "none"


def _totals(p: Projection) -> list[str]:
    shard_mem = [f for f in p.stages if f.scope == SHARD and f.metric == "peak_rss_mb"]
    whole_mem = [
        f for f in p.stages if f.scope != SHARD and f.metric == "peak_rss_mb" and f.component not in p.target.sharded
    ]
    index_bytes = sum(
        f.value or 0.0 for f in p.stages if f.metric == "output_bytes" and f.component.startswith("index ")
    )
    rows = [
        ["CPU-hours to build (export, attention, indexes)", sig(p.total("cpu_s") / 3600)],
        [f"CPU-hours of the retrieval jobs ({p.queries} queries each)", sig(p.total("cpu_s", retrieval=True) / 3600)],
        ["index size, all indexes (GB)", sig(index_bytes / 1e9)],
        ["peak MB of one shard's job, the largest", _largest(shard_mem)],
        ["peak MB of a job that sees the whole corpus, the largest", _largest(whole_mem)],
    ]
    return markdown.table_lines(["projected to the target", "value"], rows)


def _stage_table(p: Projection) -> list[str]:
    rows = [
        [
            f.component,
            FIGURES[f.metric],
            "one shard" if f.scope == SHARD else "whole corpus",
            sig(f.measured),
            _k(f),
            sig(f.ratio),
            "no slope" if f.value is None else sig(f.value),
        ]
        for f in p.stages
    ]
    return markdown.table_lines(["stage", "figure", "projected to", "measured", "k", "size ratio", "projected"], rows)


def _k(f: Projected) -> str:
    if f.exponent is None:
        return "no slope"
    return f"{f.exponent:.2f}{' **> 1.1**' if f.superlinear else ''}"


def _latency_table(bench: dict, p: Projection) -> list[str]:
    kinds = bench.get("index_kinds", {})
    rows = [
        [
            f"{f.component} ({kinds.get(f.component, '?')})",
            KIND_QUERY.get(kinds.get(f.component, ""), ""),
            sig(f.measured),
            _k(f),
            sig(f.ratio),
            "no slope" if f.value is None else sig(f.value),
        ]
        for f in p.latency
    ]
    head = ["retrieval variant (index kind)", "a query", "ms at the largest size (median)", "k", "size ratio"]
    return markdown.table_lines([*head, "ms projected"], rows)


def _where(b: Break, p: Projection, marco: MsMarco) -> list[str]:
    """A break's corpus size in characters and in MS MARCO passages, read against the sizes measured and the
    target (a break far past the target is named as such: its figure is an extrapolation of an extrapolation)."""
    chars = b.chars or 0.0
    if chars > BEYOND * p.target.chars:
        return ["far past the target (a thousand times its size)", ""]
    within = " (within the measured sizes)" if chars <= p.largest_chars else ""
    return [sig(chars) + within, sig(chars / marco.mean_chars)]


def bound_text(b: Break) -> str:
    """A bound in the unit it is stated in (GiB, hours, seconds), not the bench's (MB, CPU-s, ms)."""
    scale = {"peak_rss_mb": (1024, "GiB"), "cpu_s": (3600, "h of one core"), LATENCY: (1000, "s")}
    div, unit = scale.get(b.figure.metric, (1, ""))
    return f"{sig(b.bound / div)} {unit}".strip()


def _scope(f: Projected) -> str:
    return "one shard" if f.scope == SHARD else "whole corpus"


def _break_lines(p: Projection, marco: MsMarco, kinds: dict) -> list[str]:
    """Every bounded figure that reaches its bound along its power law, smallest corpus first; the first to
    break; the rest named; the figures projected with an exponent above the bound of growth."""
    reach = sorted((b for b in p.breaks if b.chars is not None), key=lambda b: b.chars or 0.0)
    rows = [
        [
            f"{b.figure.component} ({_scope(b.figure)})",
            f"{FIGURES[b.figure.metric]} over {bound_text(b)}",
            *_where(b, p, marco),
            "yes" if b.within(p.target) else "no",
        ]  # fmt: skip
        for b in reach
    ]
    lines = markdown.table_lines(
        ["job or query", "bound", "breaks at (characters)", "MS MARCO passages", "by the target"], rows
    )
    first = p.first_break()
    lines += ["", _first_line(first, marco, kinds) if first else "Nothing passes its bound by the target's size."]
    never = [
        f"{b.figure.component} {FIGURES[b.figure.metric]} ({_scope(b.figure)})" for b in p.breaks if b.chars is None
    ]
    lines += [
        f"Under their bounds at any size along their power laws (a shard's: in one): {', '.join(never) or 'none'}."
    ]
    flagged = sorted({f"{f.component} {f.metric}" for f in [*p.stages, *p.latency] if f.superlinear})
    lines += [f"Projected with an exponent above 1.1 (marked in the tables): {', '.join(flagged) or 'none'}."]
    return lines + ([f"No slope, not projected: {', '.join(p.unprojected())}."] if p.unprojected() else [])


def _first_line(b: Break, marco: MsMarco, kinds: dict) -> str:
    f = b.figure
    what = f", a query: {KIND_QUERY.get(kinds.get(f.component, ''), '?')}" if f.metric == LATENCY else ""
    return (
        f"**First to break: {f.component}** ({FIGURES[f.metric]} over {bound_text(b)}{what}) at {sig(b.chars or 0.0)} "
        f"characters, about {sig((b.chars or 0.0) / marco.mean_chars)} MS MARCO passages of the "
        f"{marco.passages:,}."
    )
