"""Cross-fitting's folds (#45 item 2) on small hand-made graphs: whole documents, shared queries kept
together, a fold's examples never on its documents or queries, the pairs cache cut consistently."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.sprout.folds import assign_folds, kept_examples
from pipeline.sprout.train import subset_pairs


def gold(*rows):
    return [{"query_id": q, "doc_id": d} for q, d in rows]


def test_folds_are_disjoint_by_document_and_a_query_follows_its_documents():
    docs = ["a", "b", "c", "d", "e", "f", "g"]
    g = gold(("q1", "a"), ("q2", "b"), ("q2", "e"), ("q3", "c"), ("q4", "e"), ("q5", "g"))
    folds = assign_folds(docs, ["q1", "q2", "q3", "q4", "q5", "q6"], g, 3)
    assert sorted(folds.doc_fold) == docs and set(folds.doc_fold.values()) == {0, 1, 2}
    assert folds.doc_fold["b"] == folds.doc_fold["e"]  # joined by q2
    for row in g:  # every gold document of a query lies in the query's fold
        assert folds.doc_fold[row["doc_id"]] == folds.query_fold[row["query_id"]]
    assert "q6" in folds.query_fold  # a query without gold still gets a fold
    assert sum(c["docs"] for c in folds.counts()) == len(docs)
    assert assign_folds(docs[::-1], ["q6", "q5", "q4", "q3", "q2", "q1"], g[::-1], 3) == folds  # order-free
    with pytest.raises(ValueError, match="at least 2 folds"):
        assign_folds(docs, [], g, 1)


def test_a_folds_examples_exclude_its_queries_and_documents_only_for_its_dataset():
    folds = assign_folds(["a", "b", "c"], ["q1", "q2", "q3"], gold(("q1", "a"), ("q2", "b"), ("q3", "c")), 3)
    fa = folds.doc_fold["a"]
    ids = [["hotpotqa", "q1", "a"], ["hotpotqa", "q9", "a"], ["hotpotqa", "q2", "b"], ["other", "q1", "a"]]
    keep = kept_examples(ids, "hotpotqa", folds, fa)
    assert keep == [2, 3]  # q1 itself, another query on document a: out; another dataset's: in


def test_subset_pairs_renumbers_the_kept_examples():
    arrays = {"pair_example": np.array([0, 0, 1, 2, 2, 2]), "pair_values": np.arange(6.0)[:, None],
              "query": np.eye(3), "positive": 2 * np.eye(3)}
    cut = subset_pairs(arrays, [0, 2])
    assert cut["pair_example"].tolist() == [0, 0, 1, 1, 1]
    assert cut["pair_values"][:, 0].tolist() == [0, 1, 3, 4, 5]
    assert (cut["query"] == np.eye(3)[[0, 2]]).all() and (cut["positive"] == 2 * np.eye(3)[[0, 2]]).all()
