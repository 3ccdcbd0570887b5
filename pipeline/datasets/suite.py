"""The export stage of the retrieval suite: one benchmark -> trees, queries and projected gold."""

from __future__ import annotations

from pathlib import Path

from pipeline.datasets.benchmarks import export_benchmark, load_benchmark
from pipeline.provenance import write_manifest
from pipeline.suite_datasets import get as get_dataset


def dataset_root(root: str | Path, name: str) -> Path:
    """``<benchmarks.root>/<the dataset's folder>``."""
    return Path(root) / get_dataset(name).folder


def export_dataset(name: str, root: str | Path, subset: dict, out_dir: str | Path) -> dict:
    bench = load_benchmark(name, dataset_root(root, name), subset or None)
    counts = export_benchmark(bench, out_dir)
    write_manifest(Path(out_dir) / "queries.csv", {"dataset": name, "subset": bench.params}, inputs=[], counts=counts)
    return counts
