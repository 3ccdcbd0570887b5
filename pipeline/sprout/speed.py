"""The attention pass's speed, from the file ``bench --sprout`` writes (reports/bench/sprout.json, with its
manifest: pipeline.report.bench_doc), rendered into docs/sprout-speed.md: per kernel, not the flat table."""

from __future__ import annotations

from pathlib import Path

from pipeline import markdown


def merge_order(da, logits) -> list[tuple[int, int]]:
    """The (left, right) node pairs of a document's tree in merge order: equal lists = identical trees."""
    from pipeline.sprout.build import build_tree
    from pipeline.sprout.heads import mutual_scores

    tree = build_tree(da.doc_id, da.n_chunks, da.pairs, mutual_scores(da.head_values, logits), da.leaf_vectors)
    return [m[:2] for m in tree.merges()]


def render(reports_dir: Path) -> str:
    """Markdown table of the last ``bench --sprout``: per kernel, windows/s, CPU s per window and per phase,
    the projected WattBot pass; then the fused kernel's agreement with the eager reference."""
    import json

    from pipeline.report.bench_doc import bench_path

    path = bench_path(reports_dir, "sprout")
    if not path.exists():
        return "_No measurement yet: run `python -m pipeline bench --sprout` (writes reports/bench/sprout.json)._"
    b = json.loads(path.read_text())
    if "kernels" not in b:  # written by a bench from before the per-kernel figures
        return "_The bench file has no per-kernel figures: rerun `python -m pipeline bench --sprout`._"
    threads = b["attention"]["threads"]
    lines = [
        f"{b['windows']} windows of {len(b['docs'])} WattBot documents ({', '.join(b['docs'])}), "
        f"{threads} thread{'' if threads == 1 else 's'}, {b['cpus']} CPUs, OMP_WAIT_POLICY={b.get('omp_wait_policy')}; "
        f"WattBot has {b['corpus_windows']} windows.",
        "",
    ]
    rows = (
        [
            kernel,
            f"{r['windows_per_s']}",
            f"{r['cpu_s_per_window']}",
            " / ".join(f"{r['cpu_s_by_phase'].get(phase, 0)}" for phase in ("tokenize", "encoder", "aggregate")),
            f"{r['corpus_minutes_idle_estimate']}",
        ]
        for kernel, r in b["kernels"].items()
    )
    lines += markdown.table_lines(
        [
            "kernel",
            "windows/s (wall)",
            "CPU s / window",
            "CPU s: tokenize / encoder / aggregate",
            "WattBot pass, idle estimate (min)",
        ],
        rows,
    )
    if "speedup_cpu_per_window_vs_eager" in b:
        lines += [
            "",
            f"CPU per window: {b['speedup_cpu_per_window_vs_eager']}x faster than eager; largest per-head "
            f"value difference {b['max_abs_head_value_diff_vs_eager']:.1e}; trees identical: "
            f"{'yes' if b['trees_identical_to_eager'] else 'NO'}.",
        ]
    return "\n".join(lines)
