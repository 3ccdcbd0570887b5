"""`doc_fraction` (#45 item 5): a share of a suite subset's documents, whole, nested across shares, with the
queries whose gold lies in them; the corpus sizes of `make bench-scale`."""
from __future__ import annotations

import pytest

import pipeline.register_builtins  # noqa: F401 - the registries' built-in entries, as the CLI loads them
from pipeline.datasets.suite import default_root, doc_order, doc_share, load_suite_tables, make_suite_tables


def tables(n_docs: int = 20):
    docs = [{"doc_id": f"d{i}", "title": "", "text": "x" * 10, "source_id": f"d{i}"} for i in range(n_docs)]
    queries = [{"id": f"q{i}", "question": "?"} for i in range(n_docs)]
    # q_i cites d_i and d_(i+1): it stays only where both documents are kept
    gold = [{"query_id": f"q{i}", "doc_id": f"d{j % n_docs}", "start": 0, "end": 5, "grade": 1}
            for i in range(n_docs) for j in (i, i + 1)]
    return make_suite_tables("toy", docs, queries, gold)


def test_shares_are_nested_whole_documents_and_keep_only_queries_inside():
    t = tables()
    shares = {f: doc_share(t, f) for f in (0.1, 0.3, 0.5, 1.0)}
    docs = {f: set(s.docs["doc_id"]) for f, s in shares.items()}
    assert [len(d) for d in docs.values()] == [2, 6, 10, 20]
    assert docs[0.1] < docs[0.3] < docs[0.5] < docs[1.0] == {f"d{i}" for i in range(20)}
    assert docs[0.3] == set(doc_order(t.docs["doc_id"])[:6])  # the first of the fixed order
    for s in shares.values():
        kept = set(s.docs["doc_id"])
        cited = {}
        for g in t.gold:
            cited.setdefault(g["query_id"], set()).add(g["doc_id"])
        assert set(s.queries["id"]) == {q for q, d in cited.items() if d <= kept}
        assert {g["query_id"] for g in s.gold} <= set(s.queries["id"])
        assert all(len(d) == 10 for d in s.docs["text"])  # whole documents
    assert len(shares[1.0].queries) == 20 and len(shares[1.0].gold) == 40


def test_the_order_of_a_document_does_not_depend_on_the_others():
    order = doc_order([f"d{i}" for i in range(20)])
    assert doc_order(order[::-1]) == order and [d for d in doc_order(order[:7] + ["zz"]) if d != "zz"] == order[:7]
    with pytest.raises(ValueError, match="doc_fraction"):
        doc_share(tables(), 0)
    with pytest.raises(ValueError, match="keeps no query"):
        doc_share(tables(), 0.05)  # one document: every query cites two


@pytest.mark.data
def test_doc_fraction_of_a_real_subset_is_recorded_and_nested():
    root = default_root("hotpotqa")  # ../shared/data or WATTBENCH_DATA
    small, large = (load_suite_tables("hotpotqa", root, {"n_questions": 12, "doc_fraction": f}) for f in (0.25, 1.0))
    full = load_suite_tables("hotpotqa", root, {"n_questions": 12})
    assert small.params == {"n_questions": 12, "seed": 0, "doc_fraction": 0.25}
    assert set(small.docs["doc_id"]) < set(large.docs["doc_id"]) == set(full.docs["doc_id"])
    assert len(small.docs) == 30 and set(small.queries["id"]) < set(full.queries["id"]) == set(large.queries["id"])
