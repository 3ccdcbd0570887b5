"""The evaluate stage of the retrieval suite: one retrieval run against projected gold."""

from __future__ import annotations

from pipeline.io import atomic_write_json, atomic_write_text, read_jsonl
from pipeline.parse.suite_export import read_gold
from pipeline.provenance import write_manifest
from pipeline.score.retrieval_metrics import evaluate_run


def evaluate_suite_run(retrieval: str, gold: str, out: str, per_query_out: str, ks: list[int]) -> dict:
    table, summary = evaluate_run(read_jsonl(retrieval), read_gold(gold), tuple(ks))
    atomic_write_json(out, {"ks": list(ks), "summary": summary})
    atomic_write_text(per_query_out, table.to_csv(index=False, lineterminator="\n", float_format="%.6g"))
    write_manifest(out, {"ks": list(ks)}, [retrieval, gold])
    return summary
