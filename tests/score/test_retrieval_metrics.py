"""Span-overlap retrieval metrics on hand-made cases, and agreement with ir-measures."""
from __future__ import annotations

import math

import ir_measures
import pytest

from pipeline.score.retrieval_metrics import (dedup, evaluate_run, gold_by_query, judge, library_scores,
                                              query_metrics)

GOLD = [  # q1: two gold spans in doc a, one in doc b
    {"query_id": "q1", "doc_id": "a", "start": 10, "end": 20, "grade": 1},
    {"query_id": "q1", "doc_id": "a", "start": 30, "end": 40, "grade": 1},
    {"query_id": "q1", "doc_id": "b", "start": 0, "end": 10, "grade": 1},
]


def hit(node: str, doc: str, start: int, end: int, words: int = 3) -> dict:
    return {"node_id": node, "doc_id": doc, "level": "sentence", "score": 1.0, "start": start, "end": end,
            "text": " ".join(["w"] * words)}


def metrics(hits: list[dict], gold=GOLD, ks=(1, 3, 5)) -> dict:
    return query_metrics(hits, gold_by_query(gold)["q1"], ks)


def test_one_unit_covering_two_gold_spans():
    m = metrics([hit("a:p1", "a", 0, 50, words=10)])
    assert m["recall@1"] == pytest.approx(2 / 3) and m["precision@1"] == 1 and m["hit@1"] == 1
    assert m["ie@1"] == pytest.approx(2 / 3)
    assert m["char_precision@1"] == pytest.approx(20 / 50) and m["char_recall@1"] == pytest.approx(20 / 30)
    assert m["precision@3"] == pytest.approx(1 / 3)  # denominator is k even with one unit
    assert m["tokens@5"] == 10


def test_partial_overlap_and_a_miss():
    m = metrics([hit("a:t9", "a", 45, 60), hit("a:t1", "a", 15, 25), hit("b:t1", "b", 5, 8)])
    assert m["hit@1"] == 0 and m["recall@1"] == 0 and m["char_precision@1"] == 0
    assert m["recall@3"] == pytest.approx(2 / 3) and m["precision@3"] == pytest.approx(2 / 3)
    assert m["ie@3"] == pytest.approx(4 / 9)
    assert m["char_precision@3"] == pytest.approx((5 + 3) / (15 + 10 + 3))
    assert m["char_recall@3"] == pytest.approx((5 + 3) / 30)
    assert m["tokens@3"] == 9


def test_same_span_in_another_document_is_not_relevant():
    m = metrics([hit("c:t1", "c", 10, 20)])
    assert m["hit@5"] == 0 and m["char_precision@5"] == 0


def test_duplicate_units_are_removed_before_cutting_at_k():
    units = [hit("a:t1", "a", 10, 20), hit("a:t1", "a", 10, 20), hit("b:t1", "b", 0, 10)]
    assert len(dedup(units)) == 2
    m = metrics(units)
    assert m["recall@3"] == pytest.approx(2 / 3)
    assert metrics(units, ks=(2,))["precision@2"] == 1.0  # not 0.5: the duplicate is gone
    assert m["tokens@3"] == 6


def test_nested_units_count_characters_once():
    m = metrics([hit("a:p1", "a", 0, 50), hit("a:t1", "a", 10, 20)])
    assert m["char_precision@3"] == pytest.approx(20 / 50)  # union of retrieved characters
    assert m["precision@3"] == pytest.approx(2 / 3)


def test_empty_hits_and_k_larger_than_hits():
    m = metrics([])
    assert all(m[f"{name}@{k}"] == 0 for name in ("recall", "precision", "hit", "ie", "char_precision",
                                                    "char_recall", "tokens") for k in (1, 3, 5))
    table, summary = evaluate_run([], GOLD)
    assert len(table) == 1 and summary["recall@5"] == 0 and summary["mrr"] == 0 and summary["ndcg@10"] == 0
    assert summary["queries_without_hits"] == 1
    m = metrics([hit("b:t1", "b", 0, 10)], ks=(10,))
    assert m["precision@10"] == pytest.approx(0.1) and m["recall@10"] == pytest.approx(1 / 3)


def test_evaluate_run_averages_over_gold_queries():
    gold = GOLD + [{"query_id": "q2", "doc_id": "a", "start": 0, "end": 5, "grade": 2},
                   {"query_id": "q3", "doc_id": "a", "start": 0, "end": 5, "grade": 0}]  # grade 0: not relevant
    rows = [{"id": "q1", "query": "", "hits": [hit("x", "a", 12, 14)]},
            {"id": "q2", "query": "", "hits": [hit("y", "b", 0, 5), hit("z", "a", 3, 9)]},
            {"id": "q9", "query": "", "hits": []}]
    table, summary = evaluate_run(rows, gold)
    assert list(table["query_id"]) == ["q1", "q2"] and summary["queries"] == 2
    assert summary["rows_without_gold"] == 1
    assert summary["hit@1"] == 0.5 and summary["mrr"] == pytest.approx((1 + 0.5) / 2)
    assert summary["recall@3"] == pytest.approx((1 / 3 + 1) / 2)
    assert summary["ie@3"] == pytest.approx(table["ie@3"].mean())  # mean of products, per query
    assert table.set_index("query_id").loc["q2", "ndcg@10"] == pytest.approx(1 / math.log2(3))


def test_graded_ndcg_counts_missed_gold():
    gold = [{"query_id": "q", "doc_id": "d", "start": 0, "end": 10, "grade": 3},
            {"query_id": "q", "doc_id": "d", "start": 20, "end": 30, "grade": 1}]
    rows = [{"id": "q", "hits": [hit("u1", "d", 20, 25)]}]
    table, _ = evaluate_run(rows, gold)
    # DCG = 1/log2(2); ideal = 3/log2(2) + 1/log2(3) (the missed grade-3 span is in the ideal ranking)
    assert table.loc[0, "ndcg@10"] == pytest.approx(1 / (3 + 1 / math.log2(3)))


def reciprocal_rank(grades: list[int]) -> float:
    """1 / rank of the first relevant unit: a reference written here, to check the library against."""
    return next((1.0 / r for r, g in enumerate(grades, start=1) if g >= 1), 0.0)


def test_library_agrees_with_our_code_on_a_run():
    """Our hit@k, precision@k and reciprocal rank equal ir-measures' Success@k, P@k and RR."""
    gold = [{"query_id": f"q{i}", "doc_id": "a", "start": 10 * i, "end": 10 * i + 10, "grade": 1 + i % 3}
            for i in range(6)] + [{"query_id": "q0", "doc_id": "b", "start": 0, "end": 50, "grade": 1}]
    rows = []
    for i in range(6):
        hits = [hit(f"n{j}", "a", 7 * j, 7 * j + 7) for j in range(i, i + 6)]
        hits.insert(i % 3, hit(f"n{i + 1}", "a", 7 * (i + 1), 7 * (i + 1) + 7))  # a duplicate
        rows.append({"id": f"q{i}", "hits": hits})
    spans = gold_by_query(gold)
    ks = (1, 3, 5)
    measures = [ir_measures.RR] + [ir_measures.Success @ k for k in ks] + [ir_measures.P @ k for k in ks]
    lib = library_scores(rows, spans, measures)
    table, _ = evaluate_run(rows, gold, ks)
    table = table.set_index("query_id")
    checked = 0
    for row in rows:
        qid = row["id"]
        grades = [judge(h, spans[qid])[1] for h in dedup(row["hits"])]
        assert lib[qid]["RR"] == pytest.approx(reciprocal_rank(grades)) == pytest.approx(table.loc[qid, "mrr"])
        for k in ks:
            assert lib[qid][f"Success@{k}"] == table.loc[qid, f"hit@{k}"]
            assert lib[qid][f"P@{k}"] == pytest.approx(table.loc[qid, f"precision@{k}"])
            checked += 1
    assert checked == 18 and 0 < table["mrr"].mean() < 1 and 0 < table["hit@1"].mean() < 1
