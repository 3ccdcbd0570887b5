"""`make bench-scale` (#45 item 5): the scale model. Each stage's cost (CPU-s, peak memory, output bytes) at
several corpus sizes of one suite dataset, its power-law exponent, and per-query retrieval latency per index kind.

The sizes are shares of one subset's documents (``doc_fraction``: whole documents, each share inside the next).
At every size the DAG's own jobs run, as its rules' shell lines run them (the same verbs and params), in a
scratch folder laid out as results/: the export (load, parse into trees), the SproutRAG attention pass where an
index needs it, one index per index variant the retrieval variants search, then each retrieval variant.

Measured by the kernel, per job: its CPU seconds and peak resident memory (``wait4``: the job's process and the
processes it waited for, not sampled), its wall seconds and the bytes of what it wrote. Each size has a cold
embedding cache of its own, so every encoding is paid at every size. Retrieval asks the same queries (the first
``queries`` of the largest size's export) at every size, so its exponent is the corpus's alone: a run's retrieval
cost is that times its query count. The latency of one query is read apart, in a process of its own per variant
(pipeline/bench/query_latency.py): its searchers loaded once, then each query's search timed alone.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pipeline import paths
from pipeline.bench.scale_fit import fit_dict, stage_fits, superlinear
from pipeline.config import load_config, retrieval_indexes, retrieval_root
from pipeline.cores import GRANT_VARIABLE
from pipeline.embed.factory import ensure_model_files
from pipeline.embed.kernels import cpu_model
from pipeline.io import read_csv_columns
from pipeline.workflow.datasets import tree_files_arg
from pipeline.workflow.indexes import index_extra_args, index_inputs
from pipeline.workflow.params import index_params, retrieval_params
from pipeline.workflow.sprout import sprout_attention_params
from pipeline.workflow.suite import suite_export_params
from pipeline.workflow.threads import encoder_threads, sprout_threads

FRACTIONS = (0.1, 0.3, 1.0)
VARIANTS = ("hier-dense", "flat-dense", "bm25", "sprout-uniform")  # one per index kind: tree, chunks, bm25, sprout


@dataclass(frozen=True)
class ScaleRun:
    """What to measure: ``dataset``'s ``subset`` (a ``suite.datasets`` entry) at each share of its documents,
    through ``variants`` (retrieval variants of the config) asking ``queries`` queries at every size."""

    dataset: str = "legalbench_rag"
    subset: dict = field(default_factory=lambda: {"full": True})  # CUAD: every contract the kept queries cite
    fractions: tuple[float, ...] = FRACTIONS
    variants: tuple[str, ...] = VARIANTS
    queries: int = 200
    work: Path | None = None  # the scratch folder, kept (default: a temporary one, removed after)


@dataclass
class Size:
    """One corpus size: its share, its folder (results/, cache/, logs/ as the DAG lays them out)."""

    fraction: float
    root: Path

    def log(self, stage: str) -> Path:
        return self.root / "logs" / (stage.replace(" ", "_") + ".log")


# The job is started by a small interpreter that forks, execs it and reads its rusage with wait4. Why not from
# here: a forked child's peak RSS counts its parent's pages at fork (Linux keeps the larger of the old and the new
# image's high-water mark across exec), and this process holds encoders and indexes; the launcher holds a few MB.
LAUNCHER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump([os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, ru.ru_maxrss], fh)
"""


def measure(cmd: list[str], cwd: Path, log: Path, outputs: list[str], threads: int = 1) -> dict:
    """Run one job to its end with its rule's ``threads`` granted as Snakemake grants them (``OMP_NUM_THREADS``,
    pipeline/cores.py): CPU-s and peak RSS of it and what it waited for (``wait4``), wall s, output bytes."""
    log.parent.mkdir(parents=True, exist_ok=True)
    usage = log.with_suffix(".rusage.json")
    t0 = time.perf_counter()
    with open(log, "wb") as fh:
        subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(usage), *cmd], cwd=cwd, stdout=fh,
                       stderr=subprocess.STDOUT, check=True, env={**os.environ, GRANT_VARIABLE: str(threads)})  # fmt: skip
    wall = time.perf_counter() - t0
    status, cpu, maxrss_kib = json.loads(usage.read_text())
    if status:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{shlex.join(cmd)} exited {status} (log {log}):\n{tail}")
    return {
        "cpu_s": round(cpu, 3),
        "peak_rss_mb": round(maxrss_kib / 1024, 1),  # Linux: KiB
        "wall_s": round(wall, 3),
        "output_bytes": sum(_bytes(cwd / o) for o in outputs),
    }


def _bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


@dataclass(frozen=True)
class Jobs:
    """The DAG's commands for one dataset, as its rules write them (paths relative to a size's folder)."""

    cfg: dict
    dataset: str
    variants: tuple[str, ...]

    @classmethod
    def from_dict(cls, cfg: dict, run: ScaleRun, fraction: float) -> Jobs:
        """The resolved config with the dataset's share and an absolute data folder (jobs run in a scratch folder)."""
        cfg = copy.deepcopy(cfg)
        suite = cfg.setdefault("suite", {})
        suite["root"] = str(Path(retrieval_root(cfg)).resolve())
        suite["datasets"] = {run.dataset: {**run.subset, "doc_fraction": fraction}}
        return cls(cfg, run.dataset, run.variants)

    def index_kinds(self) -> dict[str, str]:
        """Each retrieval variant's index kind (its own index's, not its hybrid partner's)."""
        return {v: self.cfg["indexes"][self.cfg["retrieval"][v]["index"]]["kind"] for v in self.variants}

    @property
    def py(self) -> list[str]:
        return [sys.executable, "-m", "pipeline"]

    def indexes(self) -> list[str]:
        return list(dict.fromkeys(n for v in self.variants for n in retrieval_indexes(self.cfg, v)))

    def needs_attention(self) -> bool:
        return any(
            paths.sprout_attention(self.dataset) in index_inputs(self.cfg, self.dataset, n) for n in self.indexes()
        )

    def export(self) -> tuple[list[str], list[str]]:
        out = paths.export_dir(self.dataset)
        return [*self.py, "suite-export", "--params", suite_export_params(self.cfg, self.dataset), "--out-dir", out], [
            out
        ]

    def attention(self) -> tuple[list[str], list[str]]:
        out = paths.sprout_attention(self.dataset)
        trees = tree_files_arg(self.cfg, self.dataset)
        return [*self.py, "sprout-attention", "--trees", trees, "--params", sprout_attention_params(self.cfg),
                "--out", out], [out]  # fmt: skip

    def index(self, name: str) -> tuple[list[str], list[str]]:
        out = paths.index(self.dataset, name)
        extra = shlex.split(index_extra_args(self.cfg, self.dataset, name))
        if any(not a.startswith(("--input", "sprout_attention=")) for a in extra):
            raise ValueError(f"index {name}: inputs the scale bench does not make: {extra}")
        return [*self.py, "index", "--trees", tree_files_arg(self.cfg, self.dataset), "--params",
                index_params(self.cfg, name), "--cache-dir", "cache", "--out", out, *extra], [out]  # fmt: skip

    def retrieve(self, variant: str, questions: str) -> tuple[list[str], list[str]]:
        out = paths.retrieval(self.dataset, variant, "queries")
        return [*self.py, "retrieve", "--index-dir", paths.index_dir(self.dataset), "--questions", questions,
                "--params", retrieval_params(self.cfg, variant), "--cache-dir", "cache", "--out", out], [out]  # fmt: skip


def corpus_size(size: Size, dataset: str) -> dict:
    """Documents, characters, sentences and queries of one size's export (its docs.csv and manifest)."""
    export = size.root / paths.export_dir(dataset)
    docs = read_csv_columns(export / "docs.csv")
    counts = json.loads((export / "queries.csv.manifest.json").read_text())["counts"]
    return {
        "fraction": size.fraction,
        "docs": len(docs["doc_id"]),
        "chars": sum(int(n) for n in docs["n_chars"]),
        "sentences": counts["sentences"],
        "queries": counts["queries"],
    }


def link_data(work: Path) -> None:
    """Built model files (onnx-qint8's) are found relative to the working directory: the checkout's data/."""
    if (Path.cwd() / "data").exists() and not (work / "data").exists():
        os.symlink(Path.cwd() / "data", work / "data")


def measure_size(jobs: Jobs, size: Size, questions: str) -> tuple[dict[str, dict], dict[str, dict]]:
    """Every stage after the export at one size, in the DAG's order (attention, indexes, retrievals), each with
    its rule's threads; then each variant's per-query latency (:mod:`pipeline.bench.query_latency`)."""
    cfg = jobs.cfg
    steps = [("sprout_attention", jobs.attention(), sprout_threads(cfg))] if jobs.needs_attention() else []
    steps += [(f"index {n}", jobs.index(n), encoder_threads(cfg)) for n in jobs.indexes()]
    steps += [(f"retrieve {v}", jobs.retrieve(v, questions), 1) for v in jobs.variants]
    costs = {}
    for stage, (cmd, outputs), threads in steps:
        costs[stage] = measure(cmd, size.root, size.log(stage), outputs, threads)
        print(f"  {size.fraction:g}: {stage}: {costs[stage]}", flush=True)
    return costs, latency_pass(jobs, size, questions)


def latency_pass(jobs: Jobs, size: Size, questions: str) -> dict[str, dict]:
    """Each variant's per-query latency at one size (:mod:`pipeline.bench.query_latency`), on the indexes built
    in ``size``'s folder."""
    cfg = jobs.cfg
    lat = {}
    for v in jobs.variants:
        out = size.root / "latency" / f"{v}.json"
        cmd = [sys.executable, "-m", "pipeline.bench.query_latency", "--params", retrieval_params(cfg, v),
               "--index-dir", paths.index_dir(jobs.dataset), "--cache-dir", "cache", "--questions", questions,
               "--out", str(out)]  # fmt: skip
        measure(cmd, size.root, size.log(f"latency {v}"), [])
        lat[v] = json.loads(out.read_text())
        print(f"  {size.fraction:g}: latency {v}: {lat[v]}", flush=True)
    return lat


def remeasure_latency(
    bench: dict, stages_commit: str, configfiles=(), overrides: dict | None = None, run: ScaleRun = ScaleRun()
) -> dict:
    """The latency pass alone, again, on the indexes a kept scale bench built (``run.work``, its ``--work``), the
    stages' costs kept from ``bench`` (its scale.json). Why: per-query latency is a wall-clock figure, the one a
    shared machine disturbs most, and the whole bench takes hours; the indexes do not change between the two.
    The file says which figures were measured again, when and on which CPU (``latency_measured``), and the
    commit the stages' costs were measured at (``stages_commit``; the file's manifest names this one's)."""
    if run.work is None or not Path(run.work, "questions.csv").exists():
        raise SystemExit(f"--latency-only needs --work: the folder of a kept scale bench ({run.work}/questions.csv)")
    cfg = load_config(configfiles, overrides)
    fractions = sorted(run.fractions)
    measured_at = [s["fraction"] for s in bench["sizes"]]
    if measured_at != fractions or list(bench["variants"]) != list(run.variants) or bench["dataset"] != run.dataset:
        raise SystemExit(f"--latency-only: the bench file measured {bench['dataset']} at {measured_at} through "
                         f"{bench['variants']}, not {run.dataset} at {fractions} through {list(run.variants)}")  # fmt: skip
    lat: dict[str, list[dict]] = {v: [] for v in run.variants}
    for f in fractions:
        size = Size(f, Path(run.work) / f"share-{f:g}")
        for v, r in latency_pass(Jobs.from_dict(cfg, run, f), size, str(Path(run.work) / "questions.csv")).items():
            lat[v].append(r)
    again = figures(Jobs.from_dict(cfg, run, 1.0), bench["sizes"], bench["stages"], lat, bench["retrieval_queries"])
    stamp = {k: again[k] for k in ("cpus", "cpu_model", "date")}
    kept = {k: bench[k] for k in ("cpus", "cpu_model", "date")}
    return {**again, **kept, "latency_measured": stamp, "stages_commit": bench.get("stages_commit", stages_commit)}


def run_scale_bench(configfiles=(), overrides: dict | None = None, run: ScaleRun = ScaleRun()) -> dict:
    """Measure every stage at every size; fit the exponents; return the figures (``reports/bench/scale.json``)."""
    cfg = load_config(configfiles, overrides)
    ensure_model_files(cfg["embedding"])  # a backend's built model files are a DAG output, missing outside it
    fractions = sorted(run.fractions)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(run.work or tmp)
        sizes = [Size(f, work / f"share-{f:g}") for f in fractions]
        stages: dict[str, list[dict]] = {}
        for size in sizes:  # the exports first: the largest's queries are asked at every size
            size.root.mkdir(parents=True, exist_ok=True)
            link_data(size.root)
            cmd, outputs = Jobs.from_dict(cfg, run, size.fraction).export()
            stages.setdefault("export", []).append(measure(cmd, size.root, size.log("export"), outputs))
        asked = read_csv_columns(sizes[-1].root / paths.export_split(run.dataset))
        questions = {k: v[: run.queries] for k, v in asked.items()}
        qfile = work / "questions.csv"
        _write_questions(qfile, questions)
        lat: dict[str, list[dict]] = {v: [] for v in run.variants}
        for size in sizes:
            costs, latencies = measure_size(Jobs.from_dict(cfg, run, size.fraction), size, str(qfile))
            for stage, cost in costs.items():
                stages.setdefault(stage, []).append(cost)
            for v, r in latencies.items():
                lat[v].append(r)
        corpus = [corpus_size(s, run.dataset) for s in sizes]
    return figures(Jobs.from_dict(cfg, run, 1.0), corpus, stages, lat, len(questions["question"]))


def _write_questions(path: Path, questions: dict) -> None:
    import pandas as pd

    from pipeline.io import atomic_write_text

    atomic_write_text(path, pd.DataFrame(questions).to_csv(index=False, lineterminator="\n"))


def figures(jobs: Jobs, corpus: list[dict], stages: dict, lat: dict, asked: int) -> dict:
    """The bench file's content: sizes, costs, latencies, and the exponents against corpus characters."""
    x = [c["chars"] for c in corpus]
    fits = stage_fits(x, stages)
    lat_fits = {v: fit_dict(x, [r["median_ms"] for r in rows]) for v, rows in lat.items()}
    return {
        "dataset": jobs.dataset,
        "subset": {k: v for k, v in jobs.cfg["suite"]["datasets"][jobs.dataset].items() if k != "doc_fraction"},
        "variants": list(jobs.variants),
        "index_kinds": jobs.index_kinds(),
        "encoder": jobs.cfg["embedding"]["backend"],
        "retrieval_queries": asked,
        "size_unit": "characters",
        "sizes": corpus,
        "stages": stages,
        "latency": lat,
        "fits": fits,
        "latency_fits": lat_fits,
        "superlinear": superlinear(fits) + [f"latency {v}" for v, f in lat_fits.items() if f and f["superlinear"]],
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "date": time.strftime("%Y-%m-%d"),
    }
