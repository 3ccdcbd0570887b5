"""bench --fixed-cost runs the DAG's own retrieve and suite-evaluate commands and prints the figure."""

import pytest


@pytest.mark.slow
def test_fixed_cost_bench_prints_the_figures(capsys, wattbot_dir):
    import pipeline.register_builtins  # noqa: F401 - as the CLI does before the bench looks an index kind up
    from pipeline.bench.fixed_cost import run_fixed_cost_bench

    out = run_fixed_cost_bench(["tests/tiny.yaml"], {"data_root": str(wattbot_dir.parent)}, runs=1)
    printed = capsys.readouterr().out
    assert printed.startswith(f"retrieve job fixed cost: {out['retrieve dense, query cached cpu_s']} CPU-s (imports ")
    # a job whose query is cached never loads the encoder: it costs less than one that must
    assert 0 < out["retrieve dense, query cached cpu_s"] < out["retrieve dense, query not cached cpu_s"]
    assert out["suite-evaluate cpu_s"] > 0 and out["sprout_query_encoder_load_cpu_s"] > 0
