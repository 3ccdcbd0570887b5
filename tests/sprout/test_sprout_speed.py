"""The speed record: both kernels measured on real text, written, and rendered for docs/sprout-speed.md."""
from __future__ import annotations

from dataclasses import replace

from pipeline.bench.throughput import _attention_run
from pipeline.publish.bench_doc import render_sprout_speed as render
from pipeline.publish.bench_doc import save_bench
from pipeline.specs import AttentionSpec
from pipeline.sprout.chunks import leaf_chunks
from pipeline.sprout.heads import uniform_logits
from pipeline.sprout.speed import merge_order


def test_bench_record_renders_both_kernels(small_trees, tmp_path):
    spec = AttentionSpec.from_dict({"window_tokens": 64, "stride_tokens": 40})
    docs = [(t.doc_id, t.text, leaf_chunks(t, 2)) for t in small_trees[:1]]
    runs = {k: _attention_run(replace(spec, kernel=k), docs) for k in ("eager", "sdpa")}
    for _, attn, speed in runs.values():
        assert speed["cpu_s"] > 0 and set(speed["cpu_s_by_phase"]) == {"tokenize", "encoder", "aggregate"}
        speed["corpus_minutes_idle_estimate"] = 1.0
    (_, fused, s), (_, eager, e) = runs["sdpa"], runs["eager"]
    same = merge_order(fused[0], uniform_logits(6, 12)) == merge_order(eager[0], uniform_logits(6, 12))
    bench = {"docs": [d[0] for d in docs], "windows": fused[0].n_windows, "tokens": fused[0].n_tokens, "cpus": 2,
             "corpus_windows": 1614, "kernels": {k: r[2] for k, r in runs.items()}, "attention": spec.as_dict(),
             "max_abs_head_value_diff_vs_eager": 0.0, "trees_identical_to_eager": same,
             "omp_wait_policy": "PASSIVE", "speedup_cpu_per_window_vs_eager": round(e["cpu_s_per_window"] / s["cpu_s_per_window"], 2)}
    assert render(tmp_path).startswith("_No measurement yet")
    save_bench(bench, tmp_path, "sprout", {})
    text = render(tmp_path)
    rows = [line for line in text.splitlines() if line.startswith(("| eager", "| sdpa"))]
    assert len(rows) == 2 and f"| {s['cpu_s_per_window']} |" in rows[1]
    assert "trees identical: yes" in text and f"{fused[0].n_windows} windows" in text
    save_bench({"windows_per_s": 1.0}, tmp_path, "sprout", {})  # an older bench file: no stale table
    assert "no per-kernel figures" in render(tmp_path)
