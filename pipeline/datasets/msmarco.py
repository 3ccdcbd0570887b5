"""MS MARCO passages with the TREC Deep Learning 2019/2020 graded judgments (NIST qrels, grades 0-3).

Each passage is a document; a judged passage with grade >= ``min_grade`` is a whole-document gold
span carrying its grade (for nDCG). Only judgments whose passage text is in the offline pool count
(``qrels_with_text.tsv``): judged-relevant passages outside the pool are unreachable and left out,
so recall is over pool-covered gold. TREC DL itself uses grade >= 2 for binary metrics; the default
here is >= 1 ("related" counts).
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.config_schema import key, parse_spec
from pipeline.datasets.suite import PilotSubset, SuiteTables, make_suite_tables, pilot_draw, read_records
from pipeline.registry.suite_datasets import SuiteDataset, register

# MS MARCO v1's passage collection, of which passages.jsonl holds the TREC DL pool: 8,841,823 passages
# (Craswell et al., "Overview of the TREC 2019 Deep Learning Track", arXiv:2003.07820, Table 1; the collection of
# Nguyen et al., "MS MARCO: A Human Generated MAchine Reading COmprehension Dataset", arXiv:1611.09268). The scale
# projection's target (docs/scale.md) is this count times the pool's measured mean passage length.
V1_PASSAGES = 8_841_823
PASSAGES_FILE = "passages.jsonl"

# 20 seeded queries x (up to) 30 of their judged passages, plus 200 unjudged pool passages as
# distractors: 790 passages, 2,573 sentences after parse_text, 20 queries, 293 graded gold passages.
DEFAULT_SUBSET = {"n_queries": 20, "judged_per_query": 30, "n_distractors": 200, "seed": 0}


@dataclass(frozen=True, kw_only=True)
class Subset(PilotSubset):
    """The part of the collection a run loads: ``suite.datasets.msmarco`` (a sampling unit is a query); a
    size set to null keeps everything (every judged query, all its judged passages, the whole unjudged pool)."""

    n_queries: int | None = key(
        "judged queries drawn (seeded)", type=("integer", "null"), default=None, schema={"minimum": 1}
    )
    judged_per_query: int | None = key(
        "judged passages kept per query", type=("integer", "null"), default=None, schema={"minimum": 1}
    )
    n_distractors: int | None = key(
        "unjudged passages added as distractors", type=("integer", "null"), default=None, schema={"minimum": 0}
    )
    min_grade: int = key("gold: judged passages of at least this grade", type="integer", default=1)
    tracks: list[str] | None = key(
        "only queries of these TREC tracks (dl19, dl20; null: both)",
        type=("array", "null"),
        default=None,
        schema={"items": {"type": "string"}},
    )


def load(root: str | Path, **subset: Any) -> SuiteTables:
    """The dataset restricted to :class:`Subset` ``(**subset)`` (the loader protocol's keys)."""
    sub = parse_spec(Subset, subset, "suite.datasets.msmarco")
    root = Path(root)
    queries = _tsv(root / "queries.tsv")
    qrels = _tsv(root / "qrels_with_text.tsv")
    if sub.tracks is not None:
        queries = [q for q in queries if q["track"] in set(sub.tracks)]
    rng = random.Random(sub.seed)
    if sub.pilot is not None:
        cap = sub.n_queries or len(queries)
        final = lambda k: (q["qid"] for q in random.Random(sub.seed).sample(queries, min(k, len(queries))))  # noqa: E731
        drawn = set(pilot_draw([q["qid"] for q in queries], final, cap, sub.pilot, sub.pilot_seed))
        queries = sorted((q for q in queries if q["qid"] in drawn), key=lambda q: (q["track"], q["qid"]))
    elif sub.n_queries is not None:
        queries = sorted(rng.sample(queries, min(sub.n_queries, len(queries))), key=lambda q: (q["track"], q["qid"]))
    kept = {q["qid"] for q in queries}
    qrels = [r for r in qrels if r["qid"] in kept]
    judged: dict[str, list[str]] = {}
    for r in qrels:
        judged.setdefault(r["qid"], []).append(r["pid"])
    pids: set[str] = set()
    for qid in sorted(judged):
        pool = sorted(judged[qid])
        pids.update(pool if sub.judged_per_query is None else rng.sample(pool, min(sub.judged_per_query, len(pool))))
    texts = {p["pid"]: p["text"] for p in read_records(root / PASSAGES_FILE)}
    unjudged = sorted(set(texts) - {r["pid"] for r in qrels})
    pids.update(unjudged if sub.n_distractors is None else rng.sample(unjudged, min(sub.n_distractors, len(unjudged))))

    gold = [
        {
            "query_id": r["qid"],
            "doc_id": _doc_id(r["pid"]),
            "start": 0,
            "end": len(texts[r["pid"]]),
            "grade": int(r["relevance"]),
        }
        for r in qrels
        if r["pid"] in pids and int(r["relevance"]) >= sub.min_grade and texts[r["pid"]].strip()
    ]
    with_gold = {g["query_id"] for g in gold}
    query_rows = [
        {"id": q["qid"], "question": q["query"], "track": q["track"]} for q in queries if q["qid"] in with_gold
    ]
    docs = [
        {"doc_id": _doc_id(p), "title": "", "text": texts[p], "source_id": p}
        for p in sorted(pids, key=int)
        if texts[p].strip()
    ]
    return make_suite_tables("msmarco", docs, query_rows, gold)


def passage_lengths(root: str | Path) -> list[int]:
    """Characters of each non-blank passage of the pool (``len(text)``, as the export's ``n_chars`` counts a
    document): what the scale projection measures MS MARCO's mean passage length on."""
    return [len(p["text"]) for p in read_records(Path(root) / PASSAGES_FILE) if p["text"].strip()]


def _doc_id(pid: str) -> str:
    return f"msmarco-{pid}"


def _tsv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


register(SuiteDataset("msmarco", __name__, "msmarco", ("msmarco_dl", "trec_dl"), subset=Subset))
