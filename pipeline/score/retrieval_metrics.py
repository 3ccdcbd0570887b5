"""Span-overlap retrieval metrics for the retrieval benchmarks (docs/sproutrag.md section 5).

Inputs are retrieval rows in the JSONL contract (``{"id", "query", "hits": [{"node_id", "doc_id",
"level", "score", "text", "start", "end", ...}]}``, offsets into tree text) and projected gold rows
(``query_id, doc_id, start, end, grade``, see :func:`pipeline.parse.suite_export.export_suite_tables`).

Matching is by character overlap, not by node id, so a sentence, a paragraph or a whole document
can all be judged against the same gold: a retrieved unit is relevant when it shares at least one
character with a gold span (grade >= 1) of the same document. Hits are deduplicated in rank order
(same ``node_id``) before cutting at k; precision@k divides by k even when fewer units came back.

Per query and k: ``recall@k`` (gold spans touched by a top-k unit / gold spans), ``precision@k``
(relevant units / k), ``hit@k``, ``ie@k`` = recall x precision (per query, then averaged),
``char_precision@k`` / ``char_recall@k`` (overlapping characters over the union of retrieved /
gold characters, so nested units are not counted twice) and ``tokens@k`` (whitespace tokens of the
top-k units' ``text``, summed per unit: what a reader would be handed). ``ndcg@10`` and ``mrr`` come
from ir-measures (trec_eval, linear gains) at unit level: qrels are the retrieved units graded by
the best gold span they overlap, plus one pseudo-unit per gold span no retrieved unit touches, so
the ideal ranking also counts evidence the run missed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import ir_measures
import pandas as pd

KS = (1, 3, 5)
NDCG_CUTOFF = 10


@dataclass(frozen=True)
class Span:
    doc_id: str
    start: int
    end: int
    grade: int = 1


def overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> int:
    return max(0, min(a_end, b_end) - max(a_start, b_start))


def gold_by_query(gold: list[dict]) -> dict[str, list[Span]]:
    """Relevant gold spans (grade >= 1) per query, duplicates removed, in a stable order."""
    out: dict[str, set[Span]] = defaultdict(set)
    for g in gold:
        if int(g.get("grade", 1)) >= 1:
            out[str(g["query_id"])].add(Span(str(g["doc_id"]), int(g["start"]), int(g["end"]), int(g.get("grade", 1))))
    return {q: sorted(spans, key=lambda s: (s.doc_id, s.start, s.end, -s.grade)) for q, spans in out.items()}


def unit_key(hit: dict) -> str:
    return str(hit.get("node_id") or f"{hit['doc_id']}@{hit['start']}-{hit['end']}")


def dedup(hits: list[dict]) -> list[dict]:
    """First occurrence of each unit, rank order kept."""
    seen: set[str] = set()
    out = []
    for h in hits:
        key = unit_key(h)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def judge(hit: dict, spans: list[Span]) -> tuple[set[int], int]:
    """Indexes of the gold spans the unit overlaps, and its grade (best overlapped grade, 0 if none)."""
    touched = {
        i
        for i, s in enumerate(spans)
        if s.doc_id == str(hit["doc_id"]) and any(overlap(a, b, s.start, s.end) > 0 for a, b in intervals(hit))
    }
    return touched, max((spans[i].grade for i in touched), default=0)


def intervals(hit: dict) -> list[tuple[int, int]]:
    """The unit's character intervals: its ``spans`` when it has several (a SproutRAG subtree may join
    non-adjacent chunks: the text between them was not retrieved), else ``[start, end)``."""
    return [tuple(s) for s in hit["spans"]] if hit.get("spans") else [(hit["start"], hit["end"])]


def union_length(intervals: list[tuple[int, int]]) -> int:
    total = 0
    cur_start: int = 0
    cur_end: int | None = None
    for s, e in sorted(intervals):
        if cur_end is None or s > cur_end:
            total += (cur_end - cur_start) if cur_end is not None else 0
            cur_start, cur_end = s, e
        else:
            cur_end = max(cur_end, e)
    return total + ((cur_end - cur_start) if cur_end is not None else 0)


def char_overlap(units: list[dict], spans: list[Span]) -> tuple[int, int, int]:
    """(retrieved chars, gold chars, chars in both), each over the union of intervals per document."""
    retrieved, wanted = defaultdict(list), defaultdict(list)
    for h in units:
        retrieved[str(h["doc_id"])].extend(intervals(h))
    for s in spans:
        wanted[s.doc_id].append((s.start, s.end))
    both = 0
    for doc, ivs in retrieved.items():
        cut = [(max(a, c), min(b, d)) for a, b in ivs for c, d in wanted.get(doc, []) if min(b, d) > max(a, c)]
        both += union_length(cut)
    return (sum(union_length(v) for v in retrieved.values()), sum(union_length(v) for v in wanted.values()), both)


def query_metrics(hits: list[dict], spans: list[Span], ks=KS) -> dict[str, float]:
    units = dedup(hits)
    judged = [judge(h, spans) for h in units]
    row: dict[str, float] = {"n_gold": len(spans), "n_hits": len(units)}
    for k in ks:
        top, marks = units[:k], judged[:k]
        covered = set().union(*(t for t, _ in marks))
        relevant = sum(1 for t, _ in marks if t)
        recall, precision = len(covered) / len(spans), relevant / k
        got, want, both = char_overlap(top, spans)
        row |= {
            f"recall@{k}": recall,
            f"precision@{k}": precision,
            f"hit@{k}": float(relevant > 0),
            f"ie@{k}": recall * precision,
            f"char_precision@{k}": both / got if got else 0.0,
            f"char_recall@{k}": both / want if want else 0.0,
            f"tokens@{k}": float(sum(len(str(h.get("text", "")).split()) for h in top)),
        }
    return row


def library_inputs(rows: list[dict], gold: dict[str, list[Span]]) -> tuple[list, list]:
    """Unit-level qrels and run for ir-measures; scores follow our rank order so trec_eval's
    tie-breaking (by doc id) can never reorder units."""
    qrels, run = [], []
    for row in rows:
        qid = str(row["id"])
        spans = gold.get(qid)
        if not spans:
            continue
        units = dedup(row["hits"])
        touched_any: set[int] = set()
        for rank, h in enumerate(units):
            touched, grade = judge(h, spans)
            touched_any |= touched
            run.append(ir_measures.ScoredDoc(qid, unit_key(h), float(len(units) - rank)))
            if grade:
                qrels.append(ir_measures.Qrel(qid, unit_key(h), grade))
        qrels += [
            ir_measures.Qrel(qid, f"__missed_gold_{i}", s.grade) for i, s in enumerate(spans) if i not in touched_any
        ]
    return qrels, run


def library_scores(rows: list[dict], gold: dict[str, list[Span]], measures: list) -> dict[str, dict[str, float]]:
    """{query id: {measure name: value}} from ir-measures; queries with no hits are absent."""
    qrels, run = library_inputs(rows, gold)
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for m in ir_measures.iter_calc(measures, qrels, run):
        out[m.query_id][str(m.measure)] = m.value
    return out


def evaluate_run(rows: list[dict], gold: list[dict], ks=KS) -> tuple[pd.DataFrame, dict]:
    """Per-query metrics and their means over every query that has gold.

    A gold query missing from ``rows`` counts as an empty result (all zeros); rows without gold
    are ignored and counted in the summary.
    """
    spans = gold_by_query(gold)
    by_id = {str(r["id"]): r for r in rows}
    rows_eval = [by_id.get(q, {"id": q, "hits": []}) for q in sorted(spans)]
    ndcg, rr = ir_measures.nDCG @ NDCG_CUTOFF, ir_measures.RR
    lib = library_scores(rows_eval, spans, [ndcg, rr])
    records = []
    for row in rows_eval:
        qid = str(row["id"])
        rec = {"query_id": qid} | query_metrics(row["hits"], spans[qid], ks)
        rec |= {f"ndcg@{NDCG_CUTOFF}": lib.get(qid, {}).get(str(ndcg), 0.0), "mrr": lib.get(qid, {}).get(str(rr), 0.0)}
        records.append(rec)
    table = pd.DataFrame(records)
    summary = (
        {c: float(table[c].mean()) for c in table.columns if c not in ("query_id", "n_gold", "n_hits")}
        if records
        else {}
    )
    summary |= {
        "queries": len(records),
        "queries_without_hits": sum(1 for q in spans if q not in by_id),
        "rows_without_gold": sum(1 for q in by_id if q not in spans),
    }
    return table, summary
