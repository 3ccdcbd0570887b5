"""The scale model (#45 item 5): the log-log fit recovers known power laws and flags those above 1.1; the bench runs
the DAG's jobs at nested shares of a real dataset and writes every stage at every size, its figure and its block."""
from __future__ import annotations

import json
import math

import pytest

from pipeline.bench.scale_fit import SUPERLINEAR, fit_dict, loglog_fit, stage_fits, superlinear

SIZES = [1e4, 3e4, 1e5]


@pytest.mark.parametrize("k", [0.0, 0.5, 1.0, 1.5, 2.0])
def test_a_power_law_gives_its_exponent_back(k):
    fit = loglog_fit(SIZES, [7.3 * s**k for s in SIZES])
    assert fit is not None and fit.points == 3 and math.isclose(fit.exponent, k, abs_tol=1e-3)
    assert fit.superlinear == (k > SUPERLINEAR)


def test_a_fixed_cost_flattens_the_slope_and_noise_is_least_squares():
    with_fixed = loglog_fit(SIZES, [100 + 1e-3 * s for s in SIZES])  # linear growth under a large fixed cost
    assert with_fixed is not None and 0 < with_fixed.exponent < 0.5
    noisy = loglog_fit([1, 2, 4, 8], [1, 2.2, 3.8, 8.1])
    xs, ys = [math.log(x) for x in (1, 2, 4, 8)], [math.log(y) for y in (1, 2.2, 3.8, 8.1)]
    mx, my = sum(xs) / 4, sum(ys) / 4
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    assert noisy is not None and noisy.points == 4 and math.isclose(noisy.exponent, slope, abs_tol=1e-3)


def test_no_slope_without_two_positive_points_or_two_sizes():
    assert loglog_fit([1e4, 3e4], [0, 5]) is None and loglog_fit([5, 5, 5], [1, 2, 3]) is None
    assert fit_dict([1e4], [3]) is None
    assert loglog_fit([1e4, 3e4, 1e5], [0, 2, 4]).points == 2  # a zero cost is left out, and counted out


def test_stage_fits_flag_the_stages_above_the_bound():
    stages = {
        "export": [{"cpu_s": s / 1e4, "peak_rss_mb": 100.0, "output_bytes": int(s)} for s in SIZES],
        "retrieve": [{"cpu_s": (s / 1e4) ** 2, "peak_rss_mb": 100.0 + s / 1e3, "output_bytes": 10} for s in SIZES],
    }
    fits = stage_fits(SIZES, stages)
    assert set(fits) == {"export", "retrieve"} and set(fits["export"]) == {"cpu_s", "peak_rss_mb", "output_bytes"}
    assert math.isclose(fits["retrieve"]["cpu_s"]["exponent"], 2.0, abs_tol=1e-3)
    assert superlinear(fits) == ["retrieve cpu_s"]


def bench_file(tmp_path, stages=None):
    """A scale bench file as the bench writes it (its sizes, stages, latencies, fits)."""
    from pipeline.bench.scale import Jobs, ScaleRun, figures

    stages = stages or {
        "export": [{"cpu_s": 1.0 + i, "peak_rss_mb": 150.0, "wall_s": 2.0, "output_bytes": 1000 * (i + 1)} for i in range(3)],
        "index hier": [{"cpu_s": 2.0 * 3**i, "peak_rss_mb": 340.0, "wall_s": 3.0, "output_bytes": 9000} for i in range(3)],
    }
    lat = {"hier-dense": [{"median_ms": 0.5 * (i + 1), "p95_ms": 1.0, "load_s": 0.01} for i in range(3)]}
    corpus = [{"fraction": f, "docs": d, "chars": 20000 * d, "sentences": 100 * d, "queries": d} for f, d in
              [(0.1, 1), (0.3, 3), (1.0, 9)]]
    cfg = {"indexes": {"hier": {"kind": "tree"}}, "retrieval": {"hier-dense": {"index": "hier"}},
           "embedding": {"backend": "onnx-qint8"}, "data_root": str(tmp_path)}
    jobs = Jobs.from_dict(cfg, ScaleRun(variants=("hier-dense",)), 1.0)
    return figures(jobs, corpus, stages, lat, 7)


def test_the_block_and_figure_come_from_the_bench_file(tmp_path):
    from pipeline.publish.bench_doc import render_scale, save_bench
    from pipeline.publish.readme import MEASUREMENTS, REGISTRY
    from pipeline.report.render.scale_figure import draw_scale

    b = bench_file(tmp_path)
    assert b["superlinear"] == [] and b["index_kinds"] == {"hier-dense": "tree"} and b["subset"] == {"full": True}
    save_bench(b, tmp_path, "scale", {"k": 1})
    text = render_scale(tmp_path)
    assert "| export | 1.00 | 2.00 | 3.00 |" in text and "7 queries asked at every size" in text
    assert "| hier-dense (tree) | 0.50 / 1.00 |" in text and "Above the bound of 1.1: none." in text
    assert "scale" in MEASUREMENTS and REGISTRY["scale"].source == "bench/scale.json"
    png, svg = draw_scale(b, tmp_path / "bench" / "scale")
    assert png.stat().st_size > 10_000 and svg.suffix == ".svg"


@pytest.mark.slow
@pytest.mark.data
def test_the_bench_runs_every_stage_at_every_size_on_a_real_slice(tmp_path, capsys):
    """HotpotQA's 12-question subset (120 paragraphs) at quarter, half and whole: every stage measured at every
    size by the DAG's own jobs, positive costs, nested sizes, a latency per index kind, the figure drawn."""
    import pipeline.register_builtins  # noqa: F401 - as the CLI does before the bench looks an index kind up
    from pipeline.cli import main

    args = ["bench", "--scale", "--dataset", "hotpotqa", "--subset", '{"n_questions": 12}', "--fractions",
            "0.25,0.5,1", "--scale-queries", "6", "--reports", str(tmp_path), "--work", str(tmp_path / "work")]  # fmt: skip
    main(args)
    b = json.loads((tmp_path / "bench" / "scale.json").read_text())
    assert [s["fraction"] for s in b["sizes"]] == [0.25, 0.5, 1.0]
    docs = [s["docs"] for s in b["sizes"]]
    assert docs == [30, 60, 120] and [s["chars"] for s in b["sizes"]] == sorted(s["chars"] for s in b["sizes"])
    expected = {"export", "sprout_attention", "index hier", "index flat", "index bm25", "index sprout-uniform",
                "retrieve hier-dense", "retrieve flat-dense", "retrieve bm25", "retrieve sprout-uniform"}  # fmt: skip
    assert set(b["stages"]) == expected
    for stage, rows in b["stages"].items():
        assert len(rows) == 3 and all(r["cpu_s"] > 0 and r["peak_rss_mb"] > 0 and r["output_bytes"] > 0 for r in rows), stage
        assert b["fits"][stage]["cpu_s"]["points"] == 3
    # what grows with the corpus grows: the trees exported, the attention file
    assert b["stages"]["export"][0]["output_bytes"] < b["stages"]["export"][2]["output_bytes"]
    assert b["fits"]["sprout_attention"]["output_bytes"]["exponent"] > 0.8
    assert set(b["latency"]) == {"hier-dense", "flat-dense", "bm25", "sprout-uniform"} and b["retrieval_queries"] == 6
    assert all(r["median_ms"] > 0 for rows in b["latency"].values() for r in rows)
    assert (tmp_path / "bench" / "scale.png").stat().st_size > 10_000
    assert (tmp_path / "bench" / "scale.json.manifest.json").exists()
    assert "wrote " in capsys.readouterr().out
    # docs/scale.md's projection (#45 item 7) renders from what the bench wrote, every stage carried to MS MARCO
    from pipeline.publish.scale_doc import render_projection

    text = render_projection(tmp_path)
    assert all(f"| {stage} | CPU-s | whole corpus |" in text for stage in expected), text
    assert "| index hier | peak MB | one shard |" in text and "sprout-uniform (sprout)" in text
    assert "**First to break:" in text or "Nothing passes its bound" in text
    # the latency alone measured again on the kept indexes: the stages' costs and sizes kept, the latency new,
    # and the file and its block say so
    manifest = json.loads((tmp_path / "bench" / "scale.json.manifest.json").read_text())
    main([*args, "--latency-only"])
    again = json.loads((tmp_path / "bench" / "scale.json").read_text())
    assert again["stages"] == b["stages"] and again["sizes"] == b["sizes"] and again["fits"] == b["fits"]
    assert again["date"] == b["date"] and again["stages_commit"] == manifest["git_commit"]
    assert set(again["latency"]) == set(b["latency"]) and again["latency_measured"]["cpu_model"] == b["cpu_model"]
    assert all(r["median_ms"] > 0 for rows in again["latency"].values() for r in rows)
    from pipeline.publish.bench_doc import render_scale

    assert "measured again on" in render_scale(tmp_path) and "--latency-only" in render_scale(tmp_path)
    with pytest.raises(SystemExit, match="not hotpotqa at \\[0.5, 1.0\\]"):
        main([*args[:7], "0.5,1", *args[8:], "--latency-only"])
