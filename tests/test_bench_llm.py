"""`python -m pipeline bench --llm` on a slice: real test questions through the stand-in process,
faults retried, nothing lost, the rerun makes no call and gives the same records; the figures file
renders as the docs block."""
import json

import pytest

from pipeline.bench.llm import run_llm_bench
from pipeline.publish.bench_doc import render_llm_bench as render
from pipeline.datasets.paths import REPO


@pytest.mark.slow  # a stand-in process and litellm's first-call warm-up: ~30 s on 2 busy cores
def test_llm_bench_on_a_slice_loses_nothing_and_reruns_from_cache(tmp_path):
    out = run_llm_bench(str(REPO / "config.yaml"), tmp_path, n_questions=8,
                        standin={"mean_latency_s": 0.02, "share_429": 0.1, "retry_after_s": 0, "share_5xx": 0.05,
                                 "share_stall": 0.0},
                        client={"concurrency": 8, "backoff_s": 0.01, "max_backoff_s": 0.05})
    assert out["questions"] == 8 and out["distinct_calls"] >= 40  # 5 samples each, plus blank-retries
    assert out["calls_lost"] == 0 and out["rerun_calls"] == 0 and out["rerun_identical"]
    assert out["calls"] == out["distinct_calls"] + out["retries"]
    saved = json.loads((tmp_path / "bench" / "llm.json").read_text())
    assert saved["ratio"] == out["ratio"]
    block = render(tmp_path)
    assert "| ratio |" in block and "| calls lost | 0 |" in block
    assert out["planner_wall_s"] > 0 and "| LLM query planner, 8 questions" in block


@pytest.mark.local_llm  # two Gemma servers; they refuse a request without the job's key (#46), as this bench once sent
def test_the_local_servers_bench_measures_both_set_ups(tmp_path):
    from pipeline.bench.llm import run_local_servers_bench

    out = run_local_servers_bench(str(REPO / "config.yaml"), tmp_path, calls=2)
    assert out["one_server_s"] > 0 and out["two_servers_s"] > 0 and out["calls"] == 2
    assert json.loads((tmp_path / "bench" / "llm_local.json").read_text())["speedup"] == out["speedup"]
