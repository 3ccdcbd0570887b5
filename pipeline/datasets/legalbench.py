"""LegalBench-RAG: any benchmark JSON (``benchmarks/<name>.json``) with its corpus folder.

Format (Pipitone & Alami 2024): ``{"tests": [{"query", "snippets": [{"file_path", "span": [s, e]}], ...}]}``
with ``file_path`` relative to ``corpus/`` and spans as Python str indices over the file read as
UTF-8 with ``newline=""`` (so ``\\r`` is kept; offsets would shift otherwise). The offline copy has
CUAD only, with two extra flags per test: ``excluded_by_legalbenchrag_filter`` (tests LegalBench-RAG
drops) and ``in_legalbenchrag_mini_doc_set`` (LegalBench-RAG-mini's documents).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.config_schema import key, parse_spec
from pipeline.datasets.suite import (
    PilotSubset,
    SuiteTables,
    make_suite_tables,
    pilot_draw,
    read_records,
    safe_id,
)
from pipeline.registry.suite_datasets import SuiteDataset, register

# 8 seeded LegalBench-RAG-mini contracts and all their queries: 2,624 sentences after parse_text,
# 54 queries, 93 gold spans.
DEFAULT_SUBSET = {"benchmark": "cuad", "mini": True, "n_docs": 8, "seed": 0}


@dataclass(frozen=True, kw_only=True)
class Subset(PilotSubset):
    """The tests a run loads: ``suite.datasets.legalbench_rag`` (a sampling unit is a document)."""

    benchmark: str = key(
        "benchmarks/<name>.json under the dataset's folder, or a path to any such JSON", type="string", default="cuad"
    )
    mini: bool = key("keep the LegalBench-RAG-mini documents only", type="boolean", default=False)
    n_docs: int | None = key(
        "documents drawn (seeded), keeping the tests whose snippets all lie in them; null: all",
        type=("integer", "null"),
        default=None,
        schema={"minimum": 1},
    )
    apply_filter: bool = key("drop the tests LegalBench-RAG itself excludes", type="boolean", default=True)


def load(root: str | Path, **subset: Any) -> SuiteTables:
    """Tests of ``root/benchmarks/<benchmark>.json`` (or a path to any such JSON) and the files they cite
    (:class:`Subset` ``(**subset)``).

    ``mini`` keeps the LegalBench-RAG-mini documents (``<benchmark>_mini_doc_list.txt`` or the
    per-test flag); ``n_docs`` samples that many documents (seeded) and keeps the tests whose
    snippets all lie in them; ``apply_filter`` drops tests LegalBench-RAG itself excludes; ``pilot``
    samples that many documents instead, none of which a draw of up to ``n_docs`` takes (``pilot_draw``:
    no test of the pilot cites a document of a final selection, so no query is in both).
    The documents are those the kept tests cite (not every file of its corpus/ folder).
    """
    sub = parse_spec(Subset, subset, "suite.datasets.legalbench_rag")
    benchmark, mini, n_docs, seed, pilot = sub.benchmark, sub.mini, sub.n_docs, sub.seed, sub.pilot
    root = Path(root)
    bench_path = Path(benchmark) if str(benchmark).endswith(".json") else root / "benchmarks" / f"{benchmark}.json"
    corpus = root / "corpus" if (root / "corpus").is_dir() else bench_path.parent.parent / "corpus"
    records = read_records(bench_path)
    tests = records[0]["tests"] if len(records) == 1 and "tests" in records[0] else records
    prefix = bench_path.stem
    indexed = [
        (i, t)
        for i, t in enumerate(tests)
        if not (sub.apply_filter and t.get("excluded_by_legalbenchrag_filter", False))
    ]
    if mini:
        allowed = _mini_docs(bench_path, tests)
        indexed = [(i, t) for i, t in indexed if {s["file_path"] for s in t["snippets"]} <= allowed]
    if n_docs is not None or pilot is not None:
        cited = sorted({s["file_path"] for _, t in indexed for s in t["snippets"]})
        draw = lambda k: random.Random(seed).sample(cited, min(k, len(cited)))  # noqa: E731
        if pilot is None:
            chosen = set(draw(n_docs))
        else:
            chosen = set(pilot_draw(cited, draw, n_docs or len(cited), pilot, sub.pilot_seed))
        indexed = [(i, t) for i, t in indexed if {s["file_path"] for s in t["snippets"]} <= chosen]

    files = sorted({s["file_path"] for _, t in indexed for s in t["snippets"]})
    ids = {f: safe_id(f.removesuffix(".txt")) for f in files}
    docs = []
    for f in files:
        with open(corpus / f, encoding="utf-8", newline="") as fh:  # newline="": the spans count "\r"
            text = fh.read()
        docs.append({"doc_id": ids[f], "title": Path(f).stem, "text": text, "source_id": f})
    queries, gold = [], []
    for i, t in indexed:
        qid = str(t.get("query_id", f"{prefix}-{i}"))
        queries.append(
            {
                "id": qid,
                "question": t["query"],
                "category": t.get("category", ""),
                "source_file": t["snippets"][0]["file_path"] if t["snippets"] else "",
            }
        )
        for s in t["snippets"]:
            start, end = s["span"]
            gold.append({"query_id": qid, "doc_id": ids[s["file_path"]], "start": start, "end": end, "grade": 1})
    return make_suite_tables(f"legalbench_rag-{prefix}", docs, queries, gold)


def _mini_docs(bench_path: Path, tests: list[dict]) -> set[str]:
    listed = bench_path.with_name(f"{bench_path.stem}_mini_doc_list.txt")
    if listed.exists():
        return {line.strip() for line in listed.read_text(encoding="utf-8").splitlines() if line.strip()}
    if any("in_legalbenchrag_mini_doc_set" in t for t in tests):
        return {s["file_path"] for t in tests if t.get("in_legalbenchrag_mini_doc_set") for s in t["snippets"]}
    raise ValueError(f"{bench_path}: no mini document set (no {listed.name}, no per-test flag)")


register(
    SuiteDataset(
        "legalbench_rag",
        __name__,
        "legalbench_rag",
        ("legalbench", "legalbench-rag"),
        train_group="span",
        subset=Subset,
    )
)
