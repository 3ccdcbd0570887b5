"""`make readme`: fill every generated block of README.md and docs/*.md from reports/.

A block is delimited exactly like this (NAME: letters, digits, ``.``, ``_``, ``-``)::

    <!-- BEGIN generated: NAME -->
    (rendered content)
    <!-- END generated: NAME -->

and its content is ``render(reports_dir) -> str`` of the function :data:`REGISTRY` names for NAME,
after a stamp line naming the git commit and config hash of the report file it was rendered from
(the ``.manifest.json`` of that file or, for a table a rule writes beside its main output, of the file
whose manifest covers it: :attr:`Renderer.stamp_from`). Numbers in the docs therefore always come from
a run, never from a hand. Registering a renderer is one line in :data:`REGISTRY` (an import the
contracts see, not a dotted string).

Two classes of block. A RESULT block shows what a run measured (the report rules' tables, the run's time
table): `make readme` renders them from kept runs of one commit (pipeline/publish/readme_runs.py), each
page from the run its role names (:data:`PAGE_ROLES`: README.md from the default run, docs/results.md from the
claims run; a block named ``NAME.ROLE``, e.g. ``results-leaderboard.default``, names its run itself). A
MEASUREMENT block (:data:`MEASUREMENTS`) shows what ``make bench``, ``make bench-llm``, ``make test``'s cluster
tests, ``make test-fast`` or ``make parse-quality`` measured of the code on a machine: a run does not make it, so it is rendered
from a reports folder named apart and keeps its own stamp. `make run` leaves the checkout as it was and writes
the blocks its run can render into ``reports/README.md`` (:func:`write_run_readme`), under the run's header
(pipeline/report/header.py: the run id, its one config hash, the commit, the config files); there each block
names its source and commit alone, as the hash of the slice a rule recorded is not the run's config hash. An
unknown NAME or a block without its END line is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.io import atomic_write_text
from pipeline.paths import Reports
from pipeline.provenance import manifest_path
from pipeline.publish import bench_doc, results_doc, scale_doc
from pipeline.report.header import RunHeader
from pipeline.report.pages import claims_table, ensemble_size, parse_quality, suite_power
from pipeline.report.telemetry import time_table

BEGIN, END = "<!-- BEGIN generated: {} -->", "<!-- END generated: {} -->"
BLOCK = re.compile(r"<!-- BEGIN generated: (?P<name>[\w.-]+) -->\n(?P<body>.*?)<!-- END generated: (?P=name) -->", re.S)
OPENING = re.compile(r"<!-- BEGIN generated: ([\w.-]+) -->")
RUN_README = "README.md"  # reports/README.md: `make run`'s rendering of the blocks (the checkout stays clean)


@dataclass(frozen=True)
class Renderer:
    """The function returning the block's markdown from the reports/ file ``source``; the
    stamp (commit, config hash) is read from ``stamp_from``'s manifest (default: ``source``'s), for
    tables a rule writes beside the output it records its manifest on."""

    function: Callable[[Path], str]
    source: str
    stamp_from: str = ""

    def render(self, reports_dir: Path) -> str:
        return self.function(Path(reports_dir))


R = Reports()  # sources are named relative to the reports folder
# The files whose manifests cover a rule's other tables (pipeline/report/pages/leaderboard.py and figures.py
# write one manifest per rule output they record, with the rule's params: same commit, same config hash).
BY_REPORT_RULE, BY_FIGURES_RULE = R.relative(R.leaderboard), R.relative(R.claims_csv)
# NAME -> renderer. One line per generated block; other stages add theirs here.
REGISTRY: dict[str, Renderer] = {
    "claims": Renderer(claims_table.render, R.relative(R.claims_csv)),
    "claims-measured": Renderer(claims_table.render_measured, R.relative(R.claims_csv)),
    "results-leaderboard": Renderer(results_doc.render_leaderboard, R.relative(R.leaderboard)),
    "leaderboard-lead": Renderer(results_doc.render_leaderboard_lead, R.relative(R.leaderboard)),
    "results-retrieval": Renderer(results_doc.render_retrieval, R.relative(R.retrieval_table), BY_REPORT_RULE),
    "results-suite": Renderer(results_doc.render_suite, R.relative(R.suite_metrics)),
    "suite-power": Renderer(suite_power.render, R.relative(R.suite_power)),
    "results-ablations": Renderer(results_doc.render_ablations, R.relative(R.ablation_differences), BY_FIGURES_RULE),
    "results-attribution": Renderer(results_doc.render_attribution, R.relative(R.attribution_counts), BY_FIGURES_RULE),
    "ensemble-votes": Renderer(results_doc.render_ensembles, R.relative(R.leaderboard)),
    "llm-cost": Renderer(results_doc.render_llm_cost, R.relative(R.leaderboard_telemetry), BY_REPORT_RULE),
    "ensemble-size": Renderer(ensemble_size.render, R.relative(R.ensemble_size), BY_FIGURES_RULE),
    "parse-quality": Renderer(parse_quality.render, R.relative(R.parse_quality(""))),
    "bench-main": Renderer(bench_doc.render_main, R.relative(R.bench("main"))),
    "bench-sprout": Renderer(bench_doc.render_sprout, R.relative(R.bench("sprout"))),
    "bench-fixed-cost": Renderer(bench_doc.render_fixed_cost, R.relative(R.bench("fixed_cost"))),
    "sprout-speed": Renderer(bench_doc.render_sprout_speed, R.relative(R.bench("sprout"))),
    "llm-bench": Renderer(bench_doc.render_llm_bench, R.relative(R.bench("llm"))),
    "llm-local-servers": Renderer(bench_doc.render_llm_local, R.relative(R.bench("llm_local"))),
    "llm-models": Renderer(bench_doc.render_llm_models, R.relative(R.bench("llm_models"))),
    "encoder": Renderer(bench_doc.render_encoder, R.relative(R.bench("encoder"))),
    "cluster": Renderer(bench_doc.render_cluster, R.relative(R.bench("cluster"))),
    "makespan": Renderer(bench_doc.render_makespan, R.relative(R.bench("makespan"))),
    "test-fast": Renderer(bench_doc.render_test_fast, R.relative(R.bench("test_fast"))),
    "scale": Renderer(bench_doc.render_scale, R.relative(R.bench("scale"))),
    "scale-projection": Renderer(scale_doc.render_projection, R.relative(R.bench("scale"))),
    "time": Renderer(time_table.render, "time.telemetry.csv"),
    "run-time": Renderer(time_table.render_run, "time.telemetry.csv"),
}
# The blocks a run does not make: measured by make bench / bench-scale / bench-llm / test (tests/cluster) / test-fast /
# parse-quality, or predicted from a kept run (makespan).
MEASUREMENTS = frozenset(
    {
        "bench-main",
        "bench-sprout",
        "bench-fixed-cost",
        "sprout-speed",
        "llm-bench",
        "llm-local-servers",
        "llm-models",
        "encoder",
        "cluster",
        "makespan",
        "test-fast",
        "parse-quality",
        "scale",
        "scale-projection",
    }
)
ROLES = ("default", "claims", "suite-full")  # the kept runs `make readme` renders result blocks from
# Roles whose run may come from another commit than the default and claims runs' (#45 item 8: the full-size suite
# takes hours, so it is not rerun with every commit): their blocks are named NAME.ROLE, each stamp names its
# commit, and `make readme` renders them only when that run is named (else leaves them as they are).
OWN_COMMIT_ROLES = frozenset({"suite-full"})
# page -> the role of the run its result blocks come from (a page with result blocks must be here)
PAGE_ROLES = {
    "README.md": "default",
    "docs/results.md": "claims",
    "docs/ensembles.md": "claims",
    "docs/sproutrag.md": "claims",
}


def split_name(name: str) -> tuple[str, str | None]:
    """A block name as (registered name, the role it names or None): ``results-leaderboard.default`` ->
    ("results-leaderboard", "default")."""
    base, _, role = name.rpartition(".")
    return (base, role) if base and role in ROLES else (name, None)


def is_result(name: str) -> bool:
    """Whether the block shows what a run measured (not a measurement of the code: :data:`MEASUREMENTS`)."""
    return split_name(name)[0] not in MEASUREMENTS


def doc_files(repo: Path) -> list[Path]:
    """README.md and every docs/*.md: the files that may hold generated blocks."""
    return [p for p in [repo / "README.md", *sorted((repo / "docs").glob("*.md"))] if p.exists()]


def stamp(reports_dir: Path, source: str, stamp_from: str = "", in_run: bool = False) -> str | None:
    """'Rendered from reports/<source> (commit abc1234, config hash 0123456789ab).', or None when the
    manifest that stamps it is missing or records no commit (a stamp never says "unknown"). ``in_run``
    (reports/README.md, under the run's header): 'From reports/<source> (commit abc1234).'."""
    m = manifest_path(Path(reports_dir) / (stamp_from or source))
    info = json.loads(m.read_text()) if m.exists() else {}
    commit, chash = str(info.get("git_commit") or "unknown")[:12], str(info.get("config_hash") or "unknown")[:12]
    if "unknown" in (commit, chash):
        return None
    if in_run:
        return f"<sub>From `reports/{source}` (commit `{commit}`).</sub>"
    return f"<sub>Rendered by `make readme` from `reports/{source}` (commit `{commit}`, config hash `{chash}`).</sub>"


def renderer(name: str, registry: dict[str, Renderer] | None) -> Renderer:
    reg = REGISTRY if registry is None else registry
    name = split_name(name)[0]
    if name not in reg:
        raise ValueError(
            f"generated block {name!r} has no renderer; register it in pipeline/publish/readme.py "
            f"(have {', '.join(sorted(reg))})"
        )
    return reg[name]


def render_block(
    name: str,
    reports_dir: Path,
    registry: dict[str, Renderer] | None = None,
    old: str | None = None,
    in_run: bool = False,
) -> str:
    """The full content of one block: stamp line, blank line, rendered markdown. When the run did not
    make its report file (or its manifest), ``old`` (the block's last rendering) is kept as it was;
    without one the block says what is missing."""
    r = renderer(name, registry)
    line = stamp(reports_dir, r.source, r.stamp_from, in_run) if (Path(reports_dir) / r.source).exists() else None
    if line is None:
        if old and old.strip():
            return old
        return f"*Not rendered: the last run made no `reports/{r.source}` with its manifest.*\n"
    body = r.render(Path(reports_dir)).rstrip("\n")
    return f"{line}\n\n{body}\n"


def fill(text: str, reports_dir: Path, registry: dict[str, Renderer] | None = None, where: str = "") -> str:
    """``text`` with every generated block re-rendered from one reports folder (everything outside the
    blocks unchanged)."""
    blocks(text, where)
    return BLOCK.sub(
        lambda m: (
            BEGIN.format(m.group("name"))
            + "\n"
            + render_block(m.group("name"), reports_dir, registry, old=m.group("body"))
            + END.format(m.group("name"))
        ),
        text,
    )


def blocks(text: str, where: str = "") -> list[tuple[str, str]]:
    """(name, body) of every generated block of ``text``; a block without its END line is an error."""
    opened = OPENING.findall(text)
    found = [(m.group("name"), m.group("body")) for m in BLOCK.finditer(text)]
    if opened != [n for n, _ in found]:
        raise ValueError(
            f"{where or 'text'}: generated block(s) {sorted(set(opened) - {n for n, _ in found}) or opened} "
            "without a matching END line"
        )
    return found


def block_names(repo: Path) -> list[tuple[str, str]]:
    """(page, block name) of every generated block of README.md and docs/*.md, first appearance only (a
    block naming its run, ``NAME.ROLE``, is NAME's)."""
    seen: dict[str, str] = {}
    for path in doc_files(Path(repo)):
        for name in OPENING.findall(path.read_text()):
            seen.setdefault(split_name(name)[0], path.relative_to(repo).as_posix())
    return [(page, name) for name, page in seen.items()]


def run_readme(repo: Path, reports_dir: Path, registry: dict[str, Renderer] | None = None) -> str:
    """``reports/README.md``: every generated block of the docs that this run's reports can render,
    under the page that shows it, and the list of those it cannot (their sources are not in its config);
    the run's header first (the folder above ``reports_dir`` is the run's)."""
    reg = REGISTRY if registry is None else registry
    parts, absent = [], []
    for page, name in block_names(repo):
        r = renderer(name, reg)
        if not (Path(reports_dir) / r.source).exists():
            absent.append(f"`{name}` (`reports/{r.source}`)")
            continue
        body = render_block(name, reports_dir, reg, in_run=True)
        parts.append(f"## {name} (as in {page})\n\n{BEGIN.format(name)}\n{body}{END.format(name)}\n")
    head = (
        "# This run's generated blocks\n\nWritten by `make run` from this folder: the tables README.md and "
        "docs/ show, rendered from this run. The checkout's README.md and docs/ change only with `make readme`.\n"
        f"\n{RunHeader.of(Path(reports_dir).parent).markdown()}\n"
    )
    tail = f"\nNot made by this run: {', '.join(absent)}.\n" if absent else ""
    return head + "\n" + "\n".join(parts) + tail


def write_run_readme(repo: Path, reports_dir: Path, out: Path | None = None) -> Path:
    """Write :func:`run_readme` to ``out`` (default ``<reports>/README.md``); the checkout is not touched."""
    path = Path(out) if out else Path(reports_dir) / RUN_README
    atomic_write_text(path, run_readme(repo, reports_dir))
    return path
