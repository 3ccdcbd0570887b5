"""The attention pass's speed record: written by ``bench --sprout``, rendered into docs/sprout-speed.md.

The figures are run telemetry (machine- and load-dependent), so they live in reports/bench/, outside the
byte-identical results; the page shows the last bench's numbers, never hand-typed ones.
"""
from __future__ import annotations

from pathlib import Path

from pipeline.provenance import atomic_write_json

SPEED_FILE = "bench/sprout_attention.telemetry.json"  # run telemetry, like *.telemetry.csv


def merge_order(da, logits) -> list[tuple[int, int]]:
    """The (left, right) node pairs of a document's tree in merge order: equal lists = identical trees."""
    from pipeline.sprout.build import build_tree
    from pipeline.sprout.heads import mutual_scores

    tree = build_tree(da.doc_id, da.n_chunks, da.pairs, mutual_scores(da.head_values, logits), da.leaf_vectors)
    return [m[:2] for m in tree.merges()]


def write_speed(reports_dir: str | Path, bench: dict) -> Path:
    keep = ("docs", "windows", "tokens", "cpus", "corpus_windows", "kernels", "omp_wait_policy",
            "max_abs_head_value_diff_vs_eager",
            "trees_identical_to_eager", "speedup_cpu_per_window_vs_eager")
    path = Path(reports_dir) / SPEED_FILE
    atomic_write_json(path, {k: bench[k] for k in keep if k in bench} | {"threads": bench["attention"]["threads"]})
    return path


def render(reports_dir: Path) -> str:
    """Markdown table of the last ``bench --sprout``: per kernel, windows/s, CPU s per window and per phase,
    the projected WattBot pass; then the fused kernel's agreement with the eager reference."""
    import json

    path = Path(reports_dir) / SPEED_FILE
    if not path.exists():
        return f"_No measurement yet: run `python -m pipeline bench --sprout` (writes {SPEED_FILE})._"
    b = json.loads(path.read_text())
    lines = [f"{b['windows']} windows of {len(b['docs'])} WattBot documents ({', '.join(b['docs'])}), "
             f"{b['threads']} threads, {b['cpus']} CPUs, OMP_WAIT_POLICY={b.get('omp_wait_policy')}; "
             f"WattBot has {b['corpus_windows']} windows.", "",
             "| kernel | windows/s (wall) | CPU s / window | CPU s: tokenize / encoder / aggregate "
             "| WattBot pass, idle estimate (min) |",
             "|---|---|---|---|---|"]
    for kernel, r in b["kernels"].items():
        ph = r["cpu_s_by_phase"]
        lines.append(f"| {kernel} | {r['windows_per_s']} | {r['cpu_s_per_window']} | "
                     f"{ph.get('tokenize', 0)} / {ph.get('encoder', 0)} / {ph.get('aggregate', 0)} | "
                     f"{r['corpus_minutes_idle_estimate']} |")
    if "speedup_cpu_per_window_vs_eager" in b:
        lines += ["", f"CPU per window: {b['speedup_cpu_per_window_vs_eager']}x faster than eager; largest per-head "
                      f"value difference {b['max_abs_head_value_diff_vs_eager']:.1e}; trees identical: "
                      f"{'yes' if b['trees_identical_to_eager'] else 'NO'}."]
    return "\n".join(lines)
