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

Each is a measure of pipeline/registry/metrics.py, registered below: a span measure is a function of one
query's top-k units judged against its gold spans (:class:`Cut`), computed at every k of ``benchmarks.ks`` in
the order registered; a library measure names its ir-measures measure (:class:`TrecMeasure`). A new suite
measure is one registration (tests/score/toy_metric.py). ir-measures and pandas are imported where they
compute, so registering loads neither.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from pipeline.registry import metrics
from pipeline.registry.metrics import SUITE, SUITE_KS, Measure, everywhere, register

if TYPE_CHECKING:
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


@dataclass(frozen=True)
class Cut:
    """One query's top ``k`` units (deduplicated, in rank order), each with the gold spans it overlaps: what a
    span measure is computed from."""

    units: list[dict]
    touched: list[set[int]]  # per unit, the indexes of the gold spans it overlaps
    spans: list[Span]
    k: int

    @cached_property
    def covered(self) -> set[int]:
        """The gold spans some unit touches."""
        return set().union(*self.touched)

    @cached_property
    def relevant(self) -> int:
        """Units that touch a gold span."""
        return sum(1 for t in self.touched if t)

    @cached_property
    def chars(self) -> tuple[int, int, int]:
        """(retrieved chars, gold chars, chars in both): :func:`char_overlap`."""
        return char_overlap(self.units, self.spans)


@dataclass(frozen=True)
class TrecMeasure:
    """A measure ir-measures computes over every query at once (``name`` with ``@k`` at a cutoff)."""

    name: str


def recall(c: Cut) -> float:
    return len(c.covered) / len(c.spans)


def precision(c: Cut) -> float:
    return c.relevant / c.k


def span_measures() -> list[Measure]:
    """The registered suite measures computed per query and k (the others are ir-measures')."""
    return [m for m in metrics.in_order([SUITE]) if callable(m.compute)]


def query_metrics(hits: list[dict], spans: list[Span], ks=KS) -> dict[str, float]:
    units = dedup(hits)
    touched = [judge(h, spans)[0] for h in units]
    row: dict[str, float] = {"n_gold": len(spans), "n_hits": len(units)}
    measured = span_measures()
    for k in ks:
        cut = Cut(units[:k], touched[:k], spans, k)
        row |= {m.at(k): m.compute(cut) for m in measured}
    return row


def library_inputs(rows: list[dict], gold: dict[str, list[Span]]) -> tuple[list, list]:
    """Unit-level qrels and run for ir-measures; scores follow our rank order so trec_eval's
    tie-breaking (by doc id) can never reorder units."""
    import ir_measures

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
    import ir_measures

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
    import ir_measures
    import pandas as pd

    spans = gold_by_query(gold)
    by_id = {str(r["id"]): r for r in rows}
    rows_eval = [by_id.get(q, {"id": q, "hits": []}) for q in sorted(spans)]
    trec = library_measures()
    lib = library_scores(rows_eval, spans, [ir_measures.parse_measure(name) for name in trec.values()])
    records = []
    for row in rows_eval:
        qid = str(row["id"])
        rec = {"query_id": qid} | query_metrics(row["hits"], spans[qid], ks)
        rec |= {column: lib.get(qid, {}).get(name, 0.0) for column, name in trec.items()}
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


def library_measures() -> dict[str, str]:
    """Column -> ir-measures name of the registered library measures (``ndcg@10`` -> ``nDCG@10``)."""
    out = {}
    for m in metrics.in_order([SUITE]):
        if isinstance(m.compute, TrecMeasure):
            for k in m.computed() or (None,):
                out[m.at(k)] = m.compute.name if k is None else f"{m.compute.name}@{k}"
    return out


def _span(name: str, what: str, fn: Callable[[Cut], float], on_page: bool = True, **kw) -> Measure:
    """A span measure at every k of ``benchmarks.ks``, shown in the suite's table (and page: ``on_page``),
    MLflow and claims, and in the views of ``shown``."""
    views = (metrics.SUITE_TABLE, metrics.MLFLOW, metrics.CLAIMS, *([metrics.SUITE_PAGE] if on_page else []))
    shown = everywhere(*views) | kw.pop("shown", {})
    return Measure(name, SUITE, what, shown, cutoffs=SUITE_KS, defined_on="queries", compute=fn, **kw)


_LARGEST = {metrics.DOCS_SUITE: metrics.LARGEST, metrics.SUITE_FIGURE: metrics.EVERY}
for _m in (
    _span("recall", "the share of the gold spans a top-k unit touches", recall, shown=_LARGEST, doc_label="R"),
    _span("precision", "the share of the top k that touch a gold span", precision, shown=_LARGEST, doc_label="P"),
    _span("hit", "a top-k unit touches a gold span", lambda c: float(c.relevant > 0), on_page=False),
    _span(
        "ie",
        "information efficiency, SproutRAG's: recall@k x precision@k",
        lambda c: recall(c) * precision(c),
        shown={
            **everywhere(metrics.SUITE_FIGURE, metrics.ABLATIONS_RETRIEVAL, metrics.SPROUT, metrics.KEPT),
            **everywhere(metrics.DOCS_SUITE),
            metrics.HEADLINE: metrics.LARGEST,
            metrics.DOCS_ABLATIONS: (5,),
        },
        label="IE",
        parts=("recall", "precision"),
    ),
    _span(
        "char_precision",
        "the share of the top k's characters inside gold spans",
        lambda c: c.chars[2] / c.chars[0] if c.chars[0] else 0.0,
        label="char P",
    ),
    _span(
        "char_recall",
        "the share of the gold characters inside the top k",
        lambda c: c.chars[2] / c.chars[1] if c.chars[1] else 0.0,
        label="char R",
    ),
    _span(
        "tokens",
        "whitespace tokens of the top k units' text (what a reader is handed)",
        lambda c: float(sum(len(str(h.get("text", "")).split()) for h in c.units)),
        better=metrics.LOWER,
    ),
):
    register(_m)
_LIBRARY = everywhere(metrics.SUITE_TABLE, metrics.SUITE_PAGE, metrics.MLFLOW, metrics.CLAIMS, metrics.DOCS_SUITE)
register(
    Measure(
        "ndcg",
        SUITE,
        "nDCG (trec_eval, linear gains) over units graded by the best gold span they overlap",
        _LIBRARY,
        cutoffs=(NDCG_CUTOFF,),
        defined_on="graded",
        label="nDCG",
        compute=TrecMeasure("nDCG"),
    )
)
register(
    Measure(
        "mrr",
        SUITE,
        "reciprocal rank of the first unit that touches a gold span",
        _LIBRARY,
        defined_on="queries",
        label="MRR",
        compute=TrecMeasure("RR"),
    )
)
