"""`make bench` figures into the docs: the bench writes ``reports/bench/<name>.json`` (one flat-ish JSON
object per bench) and these renderers turn it into a table, so no speed is ever typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline import markdown
from pipeline.io import atomic_write_json
from pipeline.layout import Reports
from pipeline.provenance import write_manifest


def bench_path(reports_dir: Path, name: str) -> Path:
    """Where bench ``name`` (``main`` or ``sprout``) keeps its figures."""
    return Path(Reports.at(reports_dir).bench(name))


def save_bench(figures: dict, reports_dir: Path, name: str, config_slice: dict, inputs: tuple = ()) -> Path:
    """Write the figures atomically with a manifest (the stamp of the generated block reads it)."""
    path = bench_path(reports_dir, name)
    atomic_write_json(path, figures)
    write_manifest(path, config_slice, inputs)
    return path


def flatten(obj: dict, prefix: str = "") -> list[tuple[str, object]]:
    """Nested dicts as ``outer · inner`` keys, lists joined, in the file's (sorted) order."""
    rows: list[tuple[str, object]] = []
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            rows += flatten(v, key + " · ")
        else:
            rows.append((key, ", ".join(map(str, v)) if isinstance(v, list) else v))
    return rows


def table(reports_dir: Path, name: str) -> str:
    """A two-column markdown table, ``figure | value``, of one bench file."""
    figures = json.loads(bench_path(reports_dir, name).read_text())
    rows = ([f"{k}".replace("\n", " "), f"{v}".replace("\n", " ")] for k, v in flatten(figures))
    return markdown.table(["figure", "value"], rows) + "\n"


def render_main(reports_dir: Path) -> str:
    """`python -m pipeline bench`: indexing and encoder throughput, retrieval latency, int8 fidelity."""
    return table(reports_dir, "main")


def render_sprout(reports_dir: Path) -> str:
    """`python -m pipeline bench --sprout`: windows/s, tree build, beam search, projected corpus time."""
    return table(reports_dir, "sprout")
