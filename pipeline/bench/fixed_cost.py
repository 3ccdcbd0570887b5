"""`python -m pipeline bench --fixed-cost`: what one ``retrieve`` and one ``suite-evaluate`` job spend
before their real work (the default grid runs 64 and 36 of them, each its own Python process).

The jobs are the DAG's own commands on a one-document WattBot index and one question, each run
``runs`` times in a fresh process; a figure is the median CPU-s (user + sys) of those processes.
Parts: the bare interpreter, the imports a retrieve job does, and the query encoder's load (paid only
by a job with a query not in the embedding cache: the searchers load their encoder lazily).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import index_slice, load_config, retrieval_slice
from pipeline.embed.factory import ensure_model_files
from pipeline.make_steps import children_cpu_s
from pipeline.specs import EncoderSpec

# What a retrieve job imports before it searches (the CLI, the stage, both index kinds' searchers).
RETRIEVE_IMPORTS = (
    "import pipeline.cli, pipeline.retrieve.run, pipeline.index_structures.dense, pipeline.index_structures.bm25"
)
# The query encoder's load alone: imports and weights, after the modules every job imports anyway.
ENCODER_LOAD = (
    "import sys, time, json; from pipeline.embed import make_encoder; spec = json.loads(sys.argv[1]);"
    "t = time.process_time(); make_encoder(spec).load(); print(time.process_time() - t)"
)


def cpu_s(cmd: list[str], cwd: Path) -> float:
    """The CPU-s (user + sys) of one process running ``cmd``."""
    before = children_cpu_s()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return children_cpu_s() - before


def median_cpu(cmd: list[str], cwd: Path, runs: int) -> float:
    return round(statistics.median(cpu_s(cmd, cwd) for _ in range(runs)), 3)


def encoder_load_s(spec: EncoderSpec, cwd: Path, runs: int) -> float:
    """Median CPU-s of building and loading the encoder ``spec`` in a fresh process."""
    cmd = [sys.executable, "-c", ENCODER_LOAD, json.dumps(spec.as_dict())]
    out = [float(subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout) for _ in range(runs)]
    return round(statistics.median(out), 3)


@dataclass(frozen=True)
class FixedJobs:
    """What the measured jobs read of the config: WattBot's folder and document subset, and the params
    (as the DAG passes them, JSON) of the ``hier`` and ``bm25`` indexes and their retrieval variants."""

    wattbot: Path
    docs: tuple[str, ...]
    index_params: dict[str, str]
    retrieval_params: dict[str, str]


def _prepare(jobs: FixedJobs, work: Path) -> dict[str, list[str]]:
    """One WattBot tree, its ``hier`` and ``bm25`` indexes, one question, a warm embedding cache, and a
    gold file for suite-evaluate (the first hit's span): the commands of the jobs measured."""
    py = [sys.executable, "-m", "pipeline"]
    wattbot = jobs.wattbot
    doc = min(jobs.docs or [p.stem for p in (wattbot / "corpus").glob("*.json")])
    tree = work / "trees" / f"{doc}.json"
    subprocess.run([*py, "tree", "--source", str(wattbot / "corpus" / f"{doc}.json"), "--doc-id", doc, "--out", str(tree)],
                   cwd=work, check=True, capture_output=True)  # fmt: skip
    for name in ("hier", "bm25"):
        params = jobs.index_params[name]
        subprocess.run([*py, "index", "--trees", str(tree), "--params", params, "--cache-dir", "cache",
                        "--out", f"index/{name}.sqlite"], cwd=work, check=True, capture_output=True)  # fmt: skip
    (work / "questions.csv").write_text("id,question\nq1,How much energy does training a model use?\n")

    def retrieve(variant: str, cache: str) -> list[str]:
        params = jobs.retrieval_params[variant]
        return [*py, "retrieve", "--index-dir", "index", "--questions", "questions.csv", "--params", params,
                "--cache-dir", cache, "--out", f"{variant}.jsonl"]  # fmt: skip

    subprocess.run(retrieve("hier-dense", "cache"), cwd=work, check=True, capture_output=True)  # warms the cache
    hit = json.loads((work / "hier-dense.jsonl").read_text().splitlines()[0])
    first = hit["hits"][0]
    gold = {"query_id": hit["id"], "doc_id": first["doc_id"], "start": first["start"], "end": first["end"], "grade": 1}
    (work / "gold.jsonl").write_text(json.dumps(gold) + "\n")
    evaluate = [*py, "suite-evaluate", "--retrieval", "hier-dense.jsonl", "--gold", "gold.jsonl", "--ks", "1", "3",
                "--out", "scores.json", "--per-query", "per_query.csv"]  # fmt: skip
    return {
        "retrieve dense, query cached": retrieve("hier-dense", "cache"),
        "retrieve dense, query not cached": retrieve("hier-dense", "cold-cache"),  # a fresh folder each run
        "retrieve bm25": retrieve("bm25", "cache"),
        "suite-evaluate": evaluate,
    }


def run_fixed_cost_bench(configfiles: Sequence[str | Path] = (), overrides: dict | None = None, runs: int = 5) -> dict:
    """The figures (median CPU-s of ``runs`` processes each), printed as a table and returned."""
    cfg = load_config(configfiles, overrides)
    ensure_model_files(cfg["embedding"])  # a backend's built model files are a DAG output, missing outside it
    cwd = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("data",):  # built model files (onnx-qint8's) are found relative to the working directory
            if (cwd / name).exists():
                os.symlink(cwd / name, work / name)
        fixed = FixedJobs(
            Path(cfg["wattbot"]["dir"]),
            tuple(cfg["wattbot"].get("docs") or ()),
            {n: json.dumps(index_slice(cfg, n), sort_keys=True) for n in ("hier", "bm25")},
            {v: json.dumps(retrieval_slice(cfg, v), sort_keys=True) for v in ("hier-dense", "bm25")},
        )
        jobs = _prepare(fixed, work)
        out: dict = {"runs": runs, "encoder": cfg["embedding"]["backend"], "cpus": os.cpu_count()}
        out["interpreter_cpu_s"] = median_cpu([sys.executable, "-c", "pass"], work, runs)
        out["retrieve_imports_cpu_s"] = round(median_cpu([sys.executable, "-c", RETRIEVE_IMPORTS], work, runs)
                                              - out["interpreter_cpu_s"], 3)  # fmt: skip
        out["query_encoder_load_cpu_s"] = encoder_load_s(EncoderSpec.from_dict(cfg["embedding"]), work, runs)
        torch = EncoderSpec.from_dict({"backend": "torch", "max_tokens": 512})
        out["sprout_query_encoder_load_cpu_s"] = encoder_load_s(torch, work, runs)
        for name, cmd in jobs.items():
            if "not cached" in name:
                samples = []
                for i in range(runs):
                    samples.append(cpu_s([a if a != "cold-cache" else f"cold-cache-{i}" for a in cmd], work))
                out[f"{name} cpu_s"] = round(statistics.median(samples), 3)
            else:
                out[f"{name} cpu_s"] = median_cpu(cmd, work, runs)
    print(
        f"retrieve job fixed cost: {out['retrieve dense, query cached cpu_s']} CPU-s "
        f"(imports {out['retrieve_imports_cpu_s']}, interpreter {out['interpreter_cpu_s']}, "
        f"encoder {out['query_encoder_load_cpu_s']} more when a query is not cached; "
        f"sprout's torch query encoder {out['sprout_query_encoder_load_cpu_s']})"
    )
    print(f"suite-evaluate job fixed cost: {out['suite-evaluate cpu_s']} CPU-s")
    print(json.dumps(out, indent=1))
    return out
