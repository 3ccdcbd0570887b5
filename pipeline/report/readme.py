"""`make readme`: fill every generated block of README.md and docs/*.md from reports/.

A block is delimited exactly like this (NAME: letters, digits, ``.``, ``_``, ``-``)::

    <!-- BEGIN generated: NAME -->
    (rendered content)
    <!-- END generated: NAME -->

and its content is ``render(reports_dir) -> str`` of the function :data:`REGISTRY` names for NAME,
after a stamp line naming the git commit and config hash of the report file it was rendered from
(that file's ``.manifest.json``). Numbers in the docs therefore always come from the last run, never
from a hand. Registering a renderer is one line in :data:`REGISTRY`.

A block whose report file is missing (its variants were not in the run's config) says so instead of
keeping stale numbers; an unknown NAME or a block without its END line is an error.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.io import atomic_write_text
from pipeline.layout import Reports
from pipeline.provenance import manifest_path

BEGIN, END = "<!-- BEGIN generated: {} -->", "<!-- END generated: {} -->"
BLOCK = re.compile(r"<!-- BEGIN generated: (?P<name>[\w.-]+) -->\n(?P<body>.*?)<!-- END generated: (?P=name) -->", re.S)
OPENING = re.compile(r"<!-- BEGIN generated: ([\w.-]+) -->")


@dataclass(frozen=True)
class Renderer:
    """``module:function`` returning the block's markdown, and the reports/ file whose manifest
    stamps it (commit, config hash)."""

    function: str
    source: str

    def render(self, reports_dir: Path) -> str:
        module, name = self.function.split(":")
        return getattr(importlib.import_module(module), name)(Path(reports_dir))


R = Reports()  # sources are named relative to the reports folder
# NAME -> renderer. One line per generated block; other stages add theirs here.
REGISTRY: dict[str, Renderer] = {
    "claims": Renderer("pipeline.report.claims:render", R.relative(R.claims_csv)),
    "results-leaderboard": Renderer("pipeline.report.results_doc:render_leaderboard", R.relative(R.leaderboard)),
    "results-retrieval": Renderer("pipeline.report.results_doc:render_retrieval", R.relative(R.retrieval_table)),
    "results-suite": Renderer("pipeline.report.results_doc:render_suite", R.relative(R.suite_metrics)),
    "results-ablations": Renderer("pipeline.report.results_doc:render_ablations", R.relative(R.ablation_differences)),
    "results-attribution": Renderer("pipeline.report.results_doc:render_attribution", R.relative(R.attribution_counts)),
    "ensemble-votes": Renderer("pipeline.report.results_doc:render_ensembles", R.relative(R.leaderboard)),
    "ensemble-size": Renderer("pipeline.report.ensemble_size:render", R.relative(R.ensemble_size)),
    "parse-quality": Renderer("pipeline.parse.quality_report:render", R.relative(R.parse_quality(""))),
    "bench-main": Renderer("pipeline.report.bench_doc:render_main", R.relative(R.bench("main"))),
    "bench-sprout": Renderer("pipeline.report.bench_doc:render_sprout", R.relative(R.bench("sprout"))),
    "sprout-speed": Renderer("pipeline.sprout.speed:render", R.relative(R.bench("sprout"))),
    "llm-bench": Renderer("pipeline.bench_llm:render", R.relative(R.bench("llm"))),
    "llm-local-servers": Renderer("pipeline.bench_llm:render_local", R.relative(R.bench("llm_local"))),
    "encoder": Renderer("pipeline.bench_encoder:render", R.relative(R.bench("encoder"))),
    "time": Renderer("pipeline.report.time_table:render", "time.telemetry.csv"),
    "run-time": Renderer("pipeline.report.time_table:render_run", "time.telemetry.csv"),
}


def doc_files(repo: Path) -> list[Path]:
    """README.md and every docs/*.md: the files that may hold generated blocks."""
    return [p for p in [repo / "README.md", *sorted((repo / "docs").glob("*.md"))] if p.exists()]


def stamp(reports_dir: Path, source: str) -> str:
    """'Rendered from reports/<source> (commit abc1234, config hash 0123456789ab).'"""
    m = manifest_path(Path(reports_dir) / source)
    info = json.loads(m.read_text()) if m.exists() else {}
    commit, chash = str(info.get("git_commit", "unknown"))[:12], str(info.get("config_hash", "unknown"))[:12]
    return f"<sub>Rendered by `make readme` from `reports/{source}` (commit `{commit}`, config hash `{chash}`).</sub>"


def render_block(name: str, reports_dir: Path, registry: dict[str, Renderer] | None = None) -> str:
    """The full content of one block: stamp line, blank line, rendered markdown."""
    reg = REGISTRY if registry is None else registry
    if name not in reg:
        raise ValueError(
            f"generated block {name!r} has no renderer; register it in pipeline/report/readme.py "
            f"(have {', '.join(sorted(reg))})"
        )
    r = reg[name]
    if not (Path(reports_dir) / r.source).exists():
        return f"*Not rendered: `reports/{r.source}` was not produced by the last run (its variants are not in its config).*\n"
    body = r.render(Path(reports_dir)).rstrip("\n")
    return f"{stamp(reports_dir, r.source)}\n\n{body}\n"


def fill(text: str, reports_dir: Path, registry: dict[str, Renderer] | None = None, where: str = "") -> str:
    """``text`` with every generated block re-rendered (everything outside the blocks unchanged)."""
    opened = OPENING.findall(text)
    closed = [m.group("name") for m in BLOCK.finditer(text)]
    if opened != closed:
        raise ValueError(
            f"{where or 'text'}: generated block(s) {sorted(set(opened) - set(closed)) or opened} "
            "without a matching END line"
        )
    return BLOCK.sub(
        lambda m: (
            BEGIN.format(m.group("name"))
            + "\n"
            + render_block(m.group("name"), reports_dir, registry)
            + END.format(m.group("name"))
        ),
        text,
    )


def fill_docs(repo: Path, reports_dir: Path, registry: dict[str, Renderer] | None = None) -> list[Path]:
    """Re-render the blocks of README.md and docs/*.md in place; return the files that changed."""
    changed = []
    for path in doc_files(Path(repo)):
        old = path.read_text()
        new = fill(old, reports_dir, registry, where=str(path))
        if new != old:
            atomic_write_text(path, new)
            changed.append(path)
    return changed
