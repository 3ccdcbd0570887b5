"""Where a run's time went: wall and CPU seconds per rule (and per LLM job, and for the run as a
whole) from Snakemake's benchmark files, and the run's CPU as the kernel counted it where ``make run``
recorded it (make_steps.py: the benchmarks' CPU is sampled); the files it writes: docs/outputs.md.

A step after Snakemake (``python -m pipeline time-table``, run by ``make run``), not a rule: the
``benchmark:`` TSVs of other jobs are no declared outputs a rule could depend on, and a rule reading
them would itself be timed. Timings differ on every run, so the files are run telemetry
(``.telemetry.`` names, outside the byte-identical set of results/ and reports/). Rules are
recognised by their benchmark path patterns, kept here in one place (:data:`BENCHMARK_PATTERNS`);
a file no pattern matches counts under ``other``.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline import paths
from pipeline.io import atomic_write_bytes, atomic_write_text
from pipeline.make_steps import CPU_SUFFIX, RUSAGE
from pipeline.provenance import write_manifest
from pipeline.report.telemetry.timeline import lanes, planned_critical_path, timeline_png
from pipeline.run_ids import STATE, read_state

BENCHMARK_DIR = "benchmarks"
# rule -> its `benchmark:` path (Snakemake wildcards in braces), relative to the working directory.
BENCHMARK_PATTERNS: dict[str, str] = {rule: paths.rule_benchmark(rule) for rule in paths.BENCHMARK_JOBS}
# The answer jobs' per-call telemetry (pipeline/verbs/answer.py cmd_answer writes it beside the answers).
ANSWER_TELEMETRY = "results/wattbot/answers/*/*.jsonl.telemetry.jsonl"
TABLE, FIGURE, PAGE = "time.telemetry.csv", "time.telemetry.png", "time.telemetry.html"
TIMELINE = "time-timeline.telemetry.png"  # the jobs over time, critical path marked (telemetry/timeline.py)
LLM_TABLE = "time-llm.telemetry.csv"
RUN_SUMMARY = "time-run.telemetry.json"
# "start|setup|dag <epoch seconds>" and "setup_cpu_s|dag_cpu_s <seconds>" lines, written by `make run` (make_steps.py)
MAKE_RUN_TIMES = "logs/make-run.times"
SAMPLED = "benchmarks (sampled)"  # run_summary's cpu_s_source without make run's count (make_steps.RUSAGE)
# Said under the table and on the page: what the per-rule CPU is, and what it misses.
SAMPLED_NOTE = (
    "Per-job CPU is Snakemake's `cpu_time`, sampled (psutil, every few seconds, over the job's processes): it misses "
    "processes that start and end between samples, so short jobs read low. The run's CPU below is the kernel's count "
    "(rusage) of `make run`'s steps and every process under them, where `make run` recorded it."
)
COLUMNS = ["rule", "jobs", "wall_s", "cpu_s", "cpu_per_wall", "max_rss_mb", "slowest_job", "slowest_wall_s"]


@dataclass(frozen=True)
class JobTime:
    """One job's benchmark line: Snakemake's ``s`` (wall), ``cpu_time`` and ``max_rss`` (MB)."""

    rule: str
    job: str
    wall_s: float
    cpu_s: float
    max_rss_mb: float
    end: float = 0.0  # epoch seconds the job ended (the TSV's mtime: Snakemake writes it at the job's end)


def _regex(pattern: str) -> re.Pattern:
    """A benchmark pattern as a regex over paths relative to the working directory (a wildcard
    matches what Snakemake's default does: anything, slashes included, e.g. scope ``sample/``)."""
    parts = re.split(r"(\{\w+\})", pattern)
    return re.compile("".join(".+" if p.startswith("{") else re.escape(p) for p in parts) + "$")


RULE_REGEXES = [(rule, _regex(p)) for rule, p in BENCHMARK_PATTERNS.items()]


def rule_of(relpath: str) -> str:
    """The rule whose benchmark pattern matches ``relpath`` (e.g. ``benchmarks/wattbot/index/hier.tsv``)."""
    return next((rule for rule, rx in RULE_REGEXES if rx.match(relpath)), "other")


def _number(value: str | None) -> float:
    try:
        return float(value) if value not in (None, "", "NA", "-") else 0.0
    except ValueError:
        return 0.0


def read_benchmarks(root: str | Path) -> list[JobTime]:
    """Every ``benchmarks/**/*.tsv`` under ``root`` (a Snakemake working directory); a file with
    several lines (``benchmark: repeat(...)``) counts its last one, as the leaderboard does."""
    root = Path(root)
    jobs = []
    for path in sorted((root / BENCHMARK_DIR).rglob("*.tsv")):
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if not rows:
            continue
        rel = path.relative_to(root).as_posix()
        last = rows[-1]
        jobs.append(
            JobTime(
                rule_of(rel),
                rel[len(BENCHMARK_DIR) + 1 : -len(".tsv")],
                _number(last.get("s")),
                _number(last.get("cpu_time")),
                _number(last.get("max_rss")),
                path.stat().st_mtime,
            )
        )
    return jobs


def invocation_start(root: str | Path) -> float:
    """When the last Snakemake invocation in ``root`` began (``logs/run.json``'s ``invoked``, stamped at its
    ``onstart``: pipeline/run_ids.py); 0 when unknown (then every benchmark file counts, as before)."""
    state = read_state(Path(root) / STATE)
    return state.invoked if state is not None else 0.0


def invocation_jobs(root: str | Path) -> tuple[list[JobTime], dict[str, float]]:
    """The benchmark files of the last invocation's jobs (written since it began: the files of jobs it did not
    rerun are older) and the ``make run`` stamps when that ``make run`` ran this invocation."""
    since = invocation_start(root)
    return [j for j in read_benchmarks(root) if j.end >= since], make_run_times(root, since)


def make_run_times(root: str | Path, invoked: float = 0.0) -> dict[str, float]:
    """The stamps of the last ``make run`` (``start``, ``setup`` done, ``dag`` done, and each step's CPU seconds,
    ``setup_cpu_s`` and ``dag_cpu_s``, where it recorded them), when complete and in order,
    and, given the invocation's start ``invoked``, only when its Snakemake step is that invocation (a plain
    ``snakemake`` or ``make resume`` after it leaves the stamps stale)."""
    path = Path(root) / MAKE_RUN_TIMES
    if not path.exists():
        return {}
    stamps = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        stamps[key] = _number(value)
    if not all(stamps.get(k) for k in ("start", "setup", "dag")) or not (
        stamps["start"] <= stamps["setup"] <= stamps["dag"]
    ):
        return {}
    if invoked and not stamps["setup"] <= invoked <= stamps["dag"]:
        return {}
    return stamps


def nothing_to_do(root: str | Path) -> dict[str, float]:
    """The stamps of the last ``make run`` when its Snakemake step found every output up to date; else ``{}``.
    Snakemake then calls no ``onstart``, so no invocation began inside that step: logs/run.json still names
    the run before it, and the figures of that run are the last ones (kept as they were, not recomputed)."""
    stamps = make_run_times(root)
    invoked = invocation_start(root)
    return stamps if stamps and 0 < invoked < stamps["setup"] else {}


STEPS = (("setup", "setup"), ("snakemake", "dag"))  # make run's timed steps: the summary's name, the stamp's


def run_summary(jobs: list[JobTime], stamps: dict[str, float] | None = None) -> dict:
    """The run's span (first job start to last job end), its jobs, CPU seconds and average cores busy
    (:func:`run_cpu`); after ``make run`` only the jobs of that run's Snakemake step count (older benchmark
    files are of jobs it did not rerun), and its set-up and Snakemake wall (and CPU) seconds are added."""
    stamps = stamps or {}
    since = stamps.get("setup", 0.0)
    ran = [j for j in jobs if j.end >= since]
    if not ran:
        return {}
    span = max(j.end for j in ran) - min(j.end - j.wall_s for j in ran)
    out = {"jobs": len(ran), "span_s": round(span, 1), **run_cpu(sum(j.cpu_s for j in ran), span, stamps)}
    if stamps:
        out |= {
            "make_run_setup_s": round(stamps["setup"] - stamps["start"], 1),
            "make_run_snakemake_s": round(stamps["dag"] - stamps["setup"], 1),
            "make_run_total_s": round(stamps["dag"] - stamps["start"], 1),
        }
    cpu = {f"make_run_{n}_cpu_s": round(stamps[s + CPU_SUFFIX], 1) for n, s in STEPS if s + CPU_SUFFIX in stamps}
    if len(cpu) == len(STEPS):
        cpu["make_run_total_cpu_s"] = round(sum(cpu.values()), 1)
    return out | cpu


def run_cpu(sampled: float, span: float, stamps: dict[str, float]) -> dict:
    """The DAG's CPU seconds and cores busy: the kernel's count for make run's Snakemake step (every job, and
    Snakemake's own scheduling) over that step's wall, where make run recorded it; else the jobs' benchmark
    ``cpu_time`` summed (sampled: an undercount) over the jobs' span. ``benchmarks_cpu_s``: that sum either way."""
    if "dag" + CPU_SUFFIX in stamps:
        cpu, wall, source = stamps["dag" + CPU_SUFFIX], stamps["dag"] - stamps["setup"], RUSAGE
    else:
        cpu, wall, source = sampled, span, SAMPLED
    return {
        "cpu_s": round(cpu, 1),
        "cores_busy": round(cpu / wall, 2) if wall > 0 else None,
        "cpu_s_source": source,
        "benchmarks_cpu_s": round(sampled, 1),
    }


def time_table(jobs: list[JobTime]) -> pd.DataFrame:
    """Per rule, the slowest first: jobs, summed wall and CPU seconds, CPU/wall (cores kept busy),
    largest RSS, and the slowest job; a last row ``all`` sums every rule."""
    if not jobs:
        return pd.DataFrame(columns=COLUMNS)
    df = pd.DataFrame([j.__dict__ for j in jobs])
    rows = []
    for rule, g in df.groupby("rule", sort=False):
        slow = g.loc[g["wall_s"].idxmax()]
        rows.append(
            {
                "rule": rule,
                "jobs": len(g),
                "wall_s": g["wall_s"].sum(),
                "cpu_s": g["cpu_s"].sum(),
                "max_rss_mb": g["max_rss_mb"].max(),
                "slowest_job": slow["job"],
                "slowest_wall_s": slow["wall_s"],
            }
        )
    out = pd.DataFrame(rows).sort_values(["wall_s", "rule"], ascending=[False, True])
    slow = df.loc[df["wall_s"].idxmax()]
    total = {
        "rule": "all",
        "jobs": len(df),
        "wall_s": df["wall_s"].sum(),
        "cpu_s": df["cpu_s"].sum(),
        "max_rss_mb": df["max_rss_mb"].max(),
        "slowest_job": slow["job"],
        "slowest_wall_s": slow["wall_s"],
    }
    out = pd.concat([out, pd.DataFrame([total])], ignore_index=True)
    out["cpu_per_wall"] = (out["cpu_s"] / out["wall_s"].where(out["wall_s"] > 0)).round(2)
    for c in ("wall_s", "cpu_s", "slowest_wall_s"):
        out[c] = out[c].round(1)
    out["max_rss_mb"] = out["max_rss_mb"].round(0)
    return out[COLUMNS]


def llm_table(root: str | Path) -> pd.DataFrame:
    """One row per LLM answering job (variant, split) from its telemetry file: what its calls cost."""
    from pipeline.answer.llm_answer import telemetry_summary
    from pipeline.io import read_jsonl

    rows = []
    for path in sorted(Path(root).glob(ANSWER_TELEMETRY)):
        split = path.name[: -len(".jsonl.telemetry.jsonl")]
        rows.append({"variant": path.parent.name, "split": split, **telemetry_summary(read_jsonl(path))})
    return pd.DataFrame(rows)


def figure_png(table: pd.DataFrame) -> bytes:
    """Horizontal bars per rule: wall seconds and CPU seconds summed over its jobs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = table[table["rule"] != "all"].iloc[::-1]
    fig, ax = plt.subplots(figsize=(7, 0.45 * max(len(t), 2) + 1.2), dpi=110)
    y = range(len(t))
    ax.barh([i + 0.2 for i in y], t["wall_s"], height=0.4, label="wall s (summed over jobs)")
    ax.barh([i - 0.2 for i in y], t["cpu_s"], height=0.4, label="CPU s")
    ax.set_yticks(list(y), [f"{r} ({n})" for r, n in zip(t["rule"], t["jobs"])])
    ax.set_xlabel("seconds")
    ax.set_title("Time per rule (jobs), from benchmarks/*.tsv")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def page_html(table: pd.DataFrame, png: bytes, llm: pd.DataFrame | None = None, timeline: bytes | None = None) -> str:
    """A self-contained page: the timeline and the figure inline, the table, and the LLM jobs' table."""
    img = base64.b64encode(png).decode()
    lanes = (
        "<h2>Timeline</h2><p>Every job as a bar from its start to its end, in lanes of jobs that ran side by "
        "side; outlined in black, the critical path planned at the run's start (each job's priority is the "
        'longest chain of work below it: docs/architecture.md, "Scheduling").</p>'
        f"<img alt='timeline of the run' src='data:image/png;base64,{base64.b64encode(timeline).decode()}'>"
        if timeline
        else ""
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>wattbench: time per rule</title></head>"
        "<body style='font-family:sans-serif;max-width:60em;margin:auto'>"
        "<h1>Time per rule</h1><p>Wall and CPU seconds summed over each rule's jobs, from Snakemake's "
        "benchmark files of the last run (jobs run side by side: the sum is not the run's elapsed time). "
        f"{html.escape(SAMPLED_NOTE)} Table: <a href='{TABLE}'>{TABLE}</a>.</p>"
        + lanes
        + f"<h2>Per rule</h2><img alt='time per rule' src='data:image/png;base64,{img}'>"
        + table.to_html(index=False, escape=True, na_rep="")
        + ("" if llm is None or llm.empty else "<h2>LLM answering jobs</h2>" + llm.to_html(index=False, na_rep=""))
        + "</body></html>\n"
    )


def write_time_table(root: str | Path, reports: str | Path) -> pd.DataFrame:
    """Read ``<root>/benchmarks`` and write the table, figure and page into ``reports``."""
    jobs = read_benchmarks(root)
    table = time_table(jobs)
    reports = Path(reports)
    out = reports / TABLE
    atomic_write_text(out, table.to_csv(index=False, lineterminator="\n"))
    write_manifest(out, {"benchmark_patterns": BENCHMARK_PATTERNS}, jobs=len(jobs), **run_commit(root))
    llm = llm_table(root)
    atomic_write_text(reports / LLM_TABLE, llm.to_csv(index=False, lineterminator="\n"))
    path = planned_critical_path(root)
    if not nothing_to_do(root):  # else the last run's summary stays as that run wrote it
        summary = {**run_summary(*invocation_jobs(root)), "critical_path": path}
        atomic_write_text(reports / RUN_SUMMARY, json.dumps(summary, indent=1) + "\n")
    if len(table):
        png, timeline = figure_png(table), timeline_png(lanes(jobs, set(path)))
        atomic_write_bytes(reports / FIGURE, png)
        atomic_write_bytes(reports / TIMELINE, timeline)
        atomic_write_text(reports / PAGE, page_html(table, png, llm, timeline))
    return table


def run_commit(root: str | Path) -> dict:
    """``{"git_commit": ...}`` of the run the benchmarks come from (its newest result manifest), so the
    README stamp names the run's commit even when the table is made later; ``{}`` when there is none."""
    manifests = sorted(Path(root).glob("results/**/*.manifest.json"), key=lambda p: p.stat().st_mtime)
    for m in reversed(manifests):
        try:
            commit = json.loads(m.read_text()).get("git_commit")
        except (OSError, ValueError):
            continue
        if commit:
            return {"git_commit": commit}
    return {}


def _duration(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def run_sentence(summary: dict) -> str:
    """'The run: 211 jobs, 17 min 02 s from the first job's start to the last job's end ...', with its CPU
    as the kernel counted it for make run's steps, or as Snakemake's benchmarks sampled it (said which)."""
    exact = summary.get("cpu_s_source") == RUSAGE  # files without the key are of runs before it: sampled
    busy = f", {summary['cores_busy']} cores busy on average" if summary.get("cores_busy") else ""
    sampled = (
        f", {_duration(summary['cpu_s'])} of CPU as Snakemake's benchmarks sample it (an undercount: processes that "
        f"start and end between samples are missed){busy}"
    )
    text = (
        f"**The run**: {summary['jobs']} jobs, {_duration(summary['span_s'])} from the first job's start to the "
        f"last job's end{'' if exact else sampled}."
    )
    if "make_run_total_s" in summary:
        text += (
            f" `make run`: set-up {_duration(summary['make_run_setup_s'])} (the virtual environment and the "
            f"parse-quality PDFs), Snakemake {_duration(summary['make_run_snakemake_s'])}, together "
            f"{_duration(summary['make_run_total_s'])} (the time table, the summary and the browser check after it "
            "are not counted)."
        )
    if exact:
        setup = f"set-up {_duration(summary['make_run_setup_cpu_s'])}, " if "make_run_setup_cpu_s" in summary else ""
        text += (
            f" CPU, the kernel's count (rusage) of each step and every process under it: {setup}Snakemake "
            f"{_duration(summary['cpu_s'])}{busy} over its wall (its jobs' benchmarks, sampled, read "
            f"{_duration(summary['benchmarks_cpu_s'])})."
        )
    return text


def render_run(reports_dir: Path) -> str:
    """The README's one line on the last run's elapsed time (``reports/time-run.telemetry.json``)."""
    path = Path(reports_dir) / RUN_SUMMARY
    summary = json.loads(path.read_text()) if path.exists() else {}
    return run_sentence(summary) + "\n" if summary else "*No benchmark files in the last run.*\n"


def render(reports_dir: Path) -> str:
    """The README's time section: the rules by summed wall time (``reports/time.telemetry.csv``), then
    the LLM answering jobs' tokens and tokens/s (``reports/time-llm.telemetry.csv``) when there are any."""
    t = pd.read_csv(Path(reports_dir) / TABLE, keep_default_na=False)
    if t.empty:
        return "*No benchmark files in the last run.*\n"
    lines = ["| rule | jobs | wall (summed) | CPU | CPU/wall | slowest job |", "|---|---:|---:|---:|---:|---|"]
    for r in t.itertuples(index=False):
        name = "**all**" if r.rule == "all" else f"`{html.escape(r.rule)}`"
        lines.append(
            f"| {name} | {r.jobs} | {_duration(r.wall_s)} | {_duration(r.cpu_s)} | {r.cpu_per_wall} | "
            f"`{r.slowest_job}` ({_duration(r.slowest_wall_s)}) |"
        )
    lines += [
        "",
        "Summed over each rule's jobs from Snakemake's `benchmarks/*.tsv` (every rule writes one); "
        "jobs run side by side, so the sum exceeds the run's elapsed time. Figure: "
        f"`reports/{FIGURE}`, page: `reports/{PAGE}`. {SAMPLED_NOTE}",
    ]
    summary_path = Path(reports_dir) / RUN_SUMMARY
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    if summary:
        lines += ["", run_sentence(summary)]
    llm_path = Path(reports_dir) / LLM_TABLE
    llm = pd.read_csv(llm_path, keep_default_na=False) if llm_path.exists() and llm_path.stat().st_size > 1 else None
    if llm is not None and not llm.empty:
        lines += [
            "",
            "LLM answering jobs (calls not answered from the cache; tokens/s = generated tokens / seconds of "
            "their last tries):",
            "",
            "| job | calls | from cache | tries | prompt tokens | generated tokens | seconds in calls | tokens/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| `{r.variant}/{r.split}` | {r.calls} | {r.cached} | {r.tries} | {r.prompt_tokens} | "
            f"{r.completion_tokens} | {r.call_s} | {r.tok_s} |"
            for r in llm.itertuples(index=False)
        ]
    return "\n".join(lines) + "\n"
