"""One retrieval variant's per-query latency, in a process of its own as a retrieve job runs (the scale bench,
pipeline/bench/scale.py, starts it with the job's one thread): ``python -m pipeline.bench.query_latency``.

The variant's searchers are loaded once (the load timed), its queries encoded first, then each query's search
timed alone, best of ``REPEATS``: the best filters a search another process preempted on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from pipeline.retrieve.run import RetrieveJob, Searchers

REPEATS = 3


def query_latency(job: RetrieveJob, questions: list[str]) -> dict:
    """Searchers' load (s), then each query's search (ms, best of :data:`REPEATS`): median and 95th percentile."""
    t0 = time.perf_counter()
    searchers = Searchers(job)
    load_s = time.perf_counter() - t0
    vecs = list(searchers.encoder.encode(questions)) if searchers.encoder else [None] * len(questions)
    ms = []
    for q, v in zip(questions, vecs):
        best = float("inf")
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            searchers.search(q, v)
            best = min(best, (time.perf_counter() - t0) * 1000)
        ms.append(best)
    ms.sort()
    return {
        "median_ms": round(statistics.median(ms), 3),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3),
        "load_s": round(load_s, 3),
    }


def main(argv: list[str] | None = None) -> None:
    import pipeline.register_builtins  # noqa: F401 - the index kinds, as the CLI loads them
    from pipeline.io import atomic_write_json, read_csv_columns

    p = argparse.ArgumentParser(prog="python -m pipeline.bench.query_latency", description=__doc__)
    p.add_argument("--params", required=True, help="the retrieval variant's params, as the retrieve rule passes them")
    p.add_argument("--index-dir", required=True, type=Path)
    p.add_argument("--cache-dir", required=True, type=Path)
    p.add_argument("--questions", required=True, help="a CSV with a question column")
    p.add_argument("--out", required=True, type=Path)
    a = p.parse_args(argv)
    questions = read_csv_columns(a.questions)["question"]
    job = RetrieveJob.from_params(json.loads(a.params), a.index_dir, a.cache_dir)
    atomic_write_json(a.out, query_latency(job, questions))


if __name__ == "__main__":
    main()
