"""The scale model projected to MS MARCO's full collection (#45 item 7): the power law carried exactly, a stage
above 1.1 flagged, a sharded job carried to one shard, the first component to break chosen by its bound, the
block rendered from a bench file (or saying it is not), and the target's mean passage length read off the data."""
from __future__ import annotations

import json
import math

import pytest

from pipeline.bench.scale_fit import stage_fits
from pipeline.publish.scale_projection import CORPUS, SHARD, Bounds, Target, power_law, project

SIZES = [1e6, 3e6, 1e7]
TARGET = 1e9  # a hundred times the largest size


def bench(stages: dict, latency: dict | None = None) -> dict:
    """A scale bench file as :func:`pipeline.bench.scale.figures` writes it, the exponents fitted as it fits them."""
    latency = latency or {"bm25": [{"median_ms": 2e-6 * x, "p95_ms": 1.0, "load_s": 0.1} for x in SIZES]}
    lat_fits = {v: stage_fits(SIZES, {"x": [{"cpu_s": r["median_ms"]} for r in rs]})["x"]["cpu_s"] for v, rs in latency.items()}
    return {
        "dataset": "toy",
        "sizes": [{"fraction": x / SIZES[-1], "chars": x, "docs": 1, "sentences": 1, "queries": 1} for x in SIZES],
        "stages": stages, "fits": stage_fits(SIZES, stages), "latency": latency, "latency_fits": lat_fits,
        "index_kinds": {"bm25": "bm25"}, "retrieval_queries": 7,
    }  # fmt: skip


def rows(cpu, mem, out):
    return [{"cpu_s": cpu(x), "peak_rss_mb": mem(x), "wall_s": 1.0, "output_bytes": out(x)} for x in SIZES]


STAGES = {
    "export": rows(lambda x: 3e-6 * x, lambda x: 200.0, lambda x: 2 * x),  # linear CPU, flat memory
    "index hier": rows(lambda x: 1e-5 * x, lambda x: 100 + 0.0 * x, lambda x: 1.5 * x),
    "retrieve bm25": rows(lambda x: 1e-10 * x**1.5, lambda x: 1e-4 * x, lambda x: 500),  # superlinear CPU
}


def target(bounds: Bounds | None = None, shard: int = 4_000_000) -> Target:
    return Target("toy", TARGET, shard, frozenset({"index hier"}), bounds or Bounds())


def figure(p, component, metric, scope=CORPUS):
    return next(f for f in [*p.stages, *p.latency] if (f.component, f.metric, f.scope) == (component, metric, scope))


def test_each_figure_is_the_largest_measurement_carried_along_its_power_law():
    p = project(bench(STAGES), target())
    export_cpu = figure(p, "export", "cpu_s")
    assert export_cpu.measured == 30.0 and export_cpu.ratio == 100 and math.isclose(export_cpu.exponent, 1.0, abs_tol=1e-3)
    assert math.isclose(export_cpu.value, 3e-6 * TARGET, rel_tol=1e-2)  # the power law, exactly (to the fit's rounding)
    retrieve = figure(p, "retrieve bm25", "cpu_s")
    assert math.isclose(retrieve.value, 1e-10 * TARGET**1.5, rel_tol=2e-2) and retrieve.superlinear
    assert not export_cpu.superlinear and math.isclose(figure(p, "bm25", "median_ms").value, 2e-6 * TARGET, rel_tol=1e-2)
    assert figure(p, "export", "peak_rss_mb").value == 200.0  # flat stays flat
    assert power_law(10.0, 100.0, -0.2) == 10.0  # a negative exponent is read as flat
    # the build's CPU sums the whole-corpus figures, retrieval apart
    assert math.isclose(p.total("cpu_s"), export_cpu.value + figure(p, "index hier", "cpu_s").value)
    assert p.total("cpu_s", retrieval=True) == retrieve.value


def test_a_sharded_stage_is_carried_to_one_shard_for_its_jobs():
    p = project(bench(STAGES), target(shard=2_000_000))
    per_shard = figure(p, "index hier", "cpu_s", SHARD)
    assert per_shard.to_chars == 2_000_000 and math.isclose(per_shard.value, 1e-5 * 2e6, rel_tol=1e-2)
    assert figure(p, "index hier", "cpu_s").to_chars == TARGET  # its total still the whole corpus's
    assert not any(f.scope == SHARD for f in p.stages if f.component != "index hier")
    assert target(shard=2_000_000).shards() == 500
    # a job's figures are the ones its scope runs at: the shard's for the sharded stage
    jobs = {(b.figure.component, b.figure.metric, b.figure.scope) for b in p.breaks}
    assert ("index hier", "peak_rss_mb", SHARD) in jobs and ("index hier", "peak_rss_mb", CORPUS) not in jobs
    assert all(b.figure.metric != "output_bytes" for b in p.breaks)  # sizes are reported, not bounded


def test_the_first_to_break_is_the_smallest_corpus_that_passes_its_bound():
    # retrieve bm25's memory is 1e-4 MB a character: 1,000 MB at 1e7; a 10,000 MB bound breaks at 1e8
    p = project(bench(STAGES), target(Bounds(node_memory_mb=10_000, job_cpu_s=1e12, query_ms=1e9)))
    first = p.first_break()
    assert (first.figure.component, first.figure.metric) == ("retrieve bm25", "peak_rss_mb")
    assert math.isclose(first.chars, 1e8, rel_tol=2e-2)
    # a tighter latency bound (2e-6 ms a character: 20 ms at 1e7, 100 ms at 5e7) breaks sooner and comes first
    p = project(bench(STAGES), target(Bounds(node_memory_mb=10_000, job_cpu_s=1e12, query_ms=100)))
    assert p.first_break().figure.component == "bm25" and math.isclose(p.first_break().chars, 5e7, rel_tol=2e-2)
    # bounds nothing reaches by the target: no first break, and a flat figure under its bound never breaks
    p = project(bench(STAGES), target(Bounds(node_memory_mb=1e9, job_cpu_s=1e15, query_ms=1e9)))
    assert p.first_break() is None
    assert next(b for b in p.breaks if b.figure.component == "export" and b.figure.metric == "peak_rss_mb").chars is None


def test_a_sharded_job_breaks_only_within_one_shard():
    heavy = {"index hier": rows(lambda x: 1.0, lambda x: 1e-3 * x, lambda x: x)}  # 1 MB per 1,000 characters
    under = project(bench(heavy), target(Bounds(node_memory_mb=5_000), shard=4_000_000))  # 4,000 MB a shard
    assert next(b for b in under.breaks if b.figure.metric == "peak_rss_mb").chars is None
    over = project(bench(heavy), target(Bounds(node_memory_mb=3_000), shard=4_000_000))
    b = next(b for b in over.breaks if b.figure.metric == "peak_rss_mb")
    assert math.isclose(b.chars, 3e6, rel_tol=2e-2) and over.first_break() == b


def test_a_stage_without_a_slope_is_named_not_projected():
    stages = {"export": rows(lambda x: 0.0, lambda x: 100.0, lambda x: 10)}
    p = project(bench(stages), target())
    assert figure(p, "export", "cpu_s").value is None and "export cpu_s" in p.unprojected()


def write_bench(reports, b: dict) -> None:
    from pipeline.publish.bench_doc import save_bench

    save_bench(b, reports, "scale", {"k": 1})


@pytest.fixture
def marco(tmp_path, monkeypatch):
    """A data folder whose MS MARCO pool is three passages of 100, 200 and 300 characters (and a blank one)."""
    folder = tmp_path / "data" / "retrieval" / "msmarco"
    folder.mkdir(parents=True)
    lines = [{"pid": str(i), "text": "x" * n} for i, n in enumerate((100, 200, 300))] + [{"pid": "9", "text": " "}]
    (folder / "passages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    monkeypatch.setenv("WATTBENCH_DATA", str(tmp_path / "data"))
    return folder


def test_the_block_shows_each_derivation_and_the_first_break(tmp_path, marco):
    from pipeline.datasets.msmarco import V1_PASSAGES
    from pipeline.publish.readme import BEGIN, END, MEASUREMENTS, REGISTRY, fill

    reports = tmp_path / "reports"
    write_bench(reports, bench(STAGES))
    doc = f"{BEGIN.format('scale-projection')}\nold\n{END.format('scale-projection')}\n"
    text = fill(doc, reports)
    assert "scale-projection" in MEASUREMENTS and REGISTRY["scale-projection"].source == "bench/scale.json"
    assert f"{V1_PASSAGES:,} passages" in text and "× 200.0 characters a passage" in text and "over 16 GiB" in text
    chars = V1_PASSAGES * 200.0
    assert f"= {float(f'{chars:.3g}'):,.0f} characters" in text
    # the export's CPU row: measured 30 CPU-s, k 1.00, the ratio of sizes, the product
    ratio = chars / 1e7
    row = f"| export | CPU-s | whole corpus | 30 | 1.00 | {float(f'{ratio:.3g}'):,.0f} |"
    assert row in text, text
    assert "| index hier | peak MB | one shard |" in text and "retrieve bm25 cpu_s" in text  # the superlinear one named
    assert "**First to break:" in text and "rank-bm25 scores every node" in text


def test_no_bench_file_is_not_rendered_and_no_data_says_so(tmp_path, monkeypatch):
    from pipeline.publish.readme import BEGIN, END, fill
    from pipeline.publish.scale_doc import render_projection

    doc = f"{BEGIN.format('scale-projection')}\n{END.format('scale-projection')}\n"
    assert "*Not rendered: the last run made no `reports/bench/scale.json`" in fill(doc, tmp_path / "reports")
    write_bench(tmp_path / "reports", bench(STAGES))
    monkeypatch.setenv("WATTBENCH_DATA", str(tmp_path / "nowhere"))
    assert render_projection(tmp_path / "reports").startswith("*Not rendered: MS MARCO's passages")


def test_the_sharded_stages_are_the_registrys_and_the_attention():
    from pipeline.publish.scale_doc import ShardPlan

    cfg = {"indexes": {"hier": {"kind": "tree"}, "flat": {"kind": "chunks"}, "bm25": {"kind": "bm25"},
                       "sprout-uniform": {"kind": "sprout"}}}  # fmt: skip
    stages = ["export", "sprout_attention", "index hier", "index flat", "index bm25", "index sprout-uniform", "index gone"]
    assert ShardPlan.from_dict(cfg).sharded_stages(stages) == {"index hier", "index flat", "sprout_attention"}


@pytest.mark.data
def test_the_target_is_ms_marcos_count_times_the_pools_measured_mean():
    from pipeline.datasets.msmarco import V1_PASSAGES
    from pipeline.datasets.suite import default_root
    from pipeline.publish.scale_doc import MsMarco

    root = default_root("msmarco")
    assert root.is_dir(), f"retrieval data not found at {root}; set WATTBENCH_DATA"
    texts = [json.loads(line)["text"] for line in (root / "passages.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [t for t in texts if t.strip()]
    m = MsMarco.measure(root)
    assert m.pool == len(texts) > 20_000 and m.passages == V1_PASSAGES
    assert math.isclose(m.mean_chars, sum(map(len, texts)) / len(texts))
    assert 200 < m.mean_chars < 600  # MS MARCO passages: about 60 words (SOURCE.md), a few hundred characters
    assert math.isclose(m.chars, V1_PASSAGES * m.mean_chars)
