"""Cost and latency per answering variant.

Split in two on purpose: what the answers record (LLM calls, prompt and completion tokens) is a
result and goes into byte-identical files; what a run measures (latency, cache hits, wall time)
differs between a cold and a cached rerun, so it goes into ``*.telemetry.csv`` beside them.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from pipeline.io import atomic_write_text, read_jsonl
from pipeline.paths import answers_telemetry
from pipeline.registry import metrics


def calls_of(record: dict) -> list[dict]:
    """An answer's LLM call records: ``call`` (one) or ``calls`` (several: retries, ensembles)."""
    if record.get("calls"):
        return list(record["calls"])
    return [record["call"]] if record.get("call") else []


def cost_row(answers: list[dict], score: dict) -> dict:
    """Deterministic cost of one variant on the scored split, with its score and context size."""
    calls = [c for r in answers for c in calls_of(r)]
    n = max(len(answers), 1)
    prompt = sum(int(c.get("prompt_tokens") or 0) for c in calls)
    completion = sum(int(c.get("completion_tokens") or 0) for c in calls)
    return {
        "questions": len(answers),
        "llm_calls": len(calls),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "tokens_per_question": round((prompt + completion) / n, 1),
        "context_tokens": score["retrieval"].get("context_tokens"),
        "score": round(score[metrics.primary().name]["all"]["score"], 4),
    }


def cost_table(variants: list[str], answers: dict[str, list[dict]], scores: dict[str, dict]) -> pd.DataFrame:
    rows = [{"variant": v, **cost_row(answers[v], scores[v])} for v in variants]
    return pd.DataFrame(rows)


def benchmark_seconds(path: Path) -> float | None:
    """Wall time of one Snakemake job from its ``benchmark:`` TSV (column ``s``), when present."""
    if not path.exists():
        return None
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return float(rows[-1]["s"]) if rows else None


def telemetry_row(answers_path: Path, n_questions: int, bench_path: Path) -> dict:
    """Run-dependent numbers of one variant: cache hits and latency of its LLM calls (from
    ``<answers>.jsonl.telemetry.jsonl``) and the answer job's wall time per question."""
    tele_path = Path(answers_telemetry(str(answers_path)))
    tele = read_jsonl(tele_path) if tele_path.exists() else []
    latency = sum(float(t.get("latency_s") or 0) for t in tele)
    wall = benchmark_seconds(bench_path)
    n = max(n_questions, 1)
    return {
        "telemetry_calls": len(tele),
        "cache_hits": sum(bool(t.get("cached")) for t in tele),
        "llm_latency_s": round(latency, 3),
        "llm_latency_per_question_s": round(latency / n, 4),
        "wall_s_per_question": None if wall is None else round(wall / n, 4),
        "telemetry_file": str(tele_path) if tele else "",
    }


def leaderboard_telemetry(cost_csv: str, answers: dict[str, str], benchmarks: dict[str, str], out: str) -> None:
    """``leaderboard.telemetry.csv``: the cost table plus each variant's run telemetry (``answers``,
    ``benchmarks``: variant -> its answers JSONL and its answer job's benchmark TSV). Written after a
    run (Snakemake's ``onsuccess``), outside the DAG: a benchmark TSV is no rule's output, so no rule
    may read it, and the numbers differ between runs anyway."""
    cost = pd.read_csv(cost_csv)
    rows = [
        {"variant": v, **telemetry_row(Path(answers[v]), int(n), Path(benchmarks[v]))}
        for v, n in zip(cost["variant"], cost["questions"])
        if v in answers
    ]
    tele = pd.DataFrame(rows or {"variant": []})
    atomic_write_text(out, cost.merge(tele, on="variant").to_csv(index=False, lineterminator="\n"))


def pareto_front(points: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Rows no other row beats on both axes (fewer or equal ``x``, higher or equal ``y``, one strictly)."""
    keep = []
    for i, r in points.iterrows():
        dominated = ((points[x] <= r[x]) & (points[y] >= r[y]) & ((points[x] < r[x]) | (points[y] > r[y]))).any()
        if not dominated:
            keep.append(i)
    return points.loc[keep].sort_values([x, y])
