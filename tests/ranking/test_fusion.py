"""Fusion of ranked (id, score) lists: RRF, convex combination, KohakuRAG's append."""
import pytest

from pipeline.ranking.fusion import RRF_K, append, convex, minmax, rrf

DENSE = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
BM25 = [("c", 30.0), ("d", 12.0), ("a", 11.0)]


def test_rrf_sums_reciprocal_ranks():
    fused = dict(rrf([DENSE, BM25], 10))
    assert fused["a"] == round(1 / (RRF_K + 1) + 1 / (RRF_K + 3), 6)
    assert fused["c"] == round(1 / (RRF_K + 3) + 1 / (RRF_K + 1), 6)
    assert fused["d"] == round(1 / (RRF_K + 2), 6)
    assert set(fused) == {"a", "b", "c", "d"}


def test_rrf_ties_keep_first_list_order_and_top_k_cuts():
    fused = rrf([DENSE, BM25], 10)
    assert [n for n, _ in fused] == ["a", "c", "b", "d"]  # a and c tie; a came first
    assert [n for n, _ in rrf([BM25, DENSE], 10)][:2] == ["c", "a"]
    assert [n for n, _ in rrf([DENSE, BM25], 2)] == ["a", "c"]


def test_rrf_counts_a_repeated_id_once_per_list():
    assert rrf([[("x", 1.0), ("x", 0.5)]], 5) == [("x", round(1 / (RRF_K + 1), 6))]


def test_weighted_rrf_breaks_the_tie():
    assert [n for n, _ in rrf([DENSE, BM25], 2, weights=[0.4, 0.6])] == ["c", "a"]


def test_rrf_of_nothing():
    assert rrf([[], []], 5) == []


def test_minmax():
    assert minmax([("a", 5.0), ("b", 3.0), ("c", 1.0)]) == [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    assert minmax([("a", 2.0), ("b", 2.0)]) == [("a", 1.0), ("b", 1.0)]
    assert minmax([]) == []


def test_convex_combines_normalised_scores():
    fused = dict(convex([DENSE, BM25], 10))
    # dense: a 1, b .5, c 0; bm25: c 1, d 1/19, a 0
    assert fused == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.5, "d": 0.5 / 19}, abs=1e-6)
    assert [n for n, _ in convex([DENSE, BM25], 10)] == ["a", "c", "b", "d"]  # tie keeps first-seen order


def test_convex_keeps_a_far_ahead_winner_that_rrf_loses():
    dense = [("x", 0.71), ("w", 0.705), ("y", 0.70), ("z", 0.50)]
    bm25 = [("y", 40.0), ("x", 9.0), ("q", 8.0)]
    assert rrf([dense, bm25], 1)[0][0] == "x"           # ranks only: x (1st + 2nd) beats y (3rd + 1st)
    assert convex([dense, bm25], 1)[0][0] == "y"        # y is far ahead in bm25, a hair behind in dense
    assert convex([dense, bm25], 1, weights=[1.0, 0.0])[0][0] == "x"


def test_convex_top_k_and_empty():
    assert len(convex([DENSE, BM25], 2)) == 2
    assert convex([[], []], 3) == []


def test_append_adds_only_new_ids_up_to_extra_k():
    assert append(DENSE, BM25, 5) == DENSE + [("d", 12.0)]
    assert append(DENSE, [("d", 1.0), ("e", 0.9), ("f", 0.8)], 2) == DENSE + [("d", 1.0), ("e", 0.9)]
    assert append(DENSE, [("d", 1.0), ("d", 0.5), ("e", 0.1)], 5) == DENSE + [("d", 1.0), ("e", 0.1)]
    assert append([], BM25, 0) == []
