"""Cross-query rerank on hand-made lists: each strategy, ties, KohakuRAG compat, provenance."""
import pytest

from pipeline.ranking.rerank import STRATEGIES, rerank

# "b" is found by all three queries with mid scores; "a" once with the top score.
LISTS = [
    [("a", 0.9), ("b", 0.5)],
    [("c", 0.6), ("b", 0.4)],
    [("b", 0.3), ("d", 0.2)],
]


def ids(ranked):
    return [r.node_id for r in ranked]


def test_statistics_count_every_occurrence_before_dedup():
    by_id = {r.node_id: r for r in rerank(LISTS, "none")}
    assert set(by_id) == {"a", "b", "c", "d"}
    b = by_id["b"]
    assert (b.freq, b.first, b.queries) == (3, 0.5, [0, 1, 2])
    assert b.total == pytest.approx(1.2)
    assert (by_id["a"].freq, by_id["a"].total, by_id["a"].queries) == (1, 0.9, [0])


def test_none_is_concatenation_order_first_occurrence_kept():
    out = rerank(LISTS, "none")
    assert ids(out) == ["a", "b", "c", "d"]
    assert [r.score for r in out] == [0.9, 0.5, 0.6, 0.2]


def test_frequency_sorts_by_freq_then_total():
    lists = [[("a", 0.9), ("b", 0.5)], [("c", 0.6), ("a", 0.1)], [("c", 0.3), ("b", 0.2)]]
    out = rerank(lists, "frequency")
    # a: 2 hits, 1.0; c: 2 hits, 0.9; b: 2 hits, 0.7 -> total breaks the freq tie
    assert ids(out) == ["a", "c", "b"]
    assert [r.score for r in rerank(LISTS, "frequency")][:1] == [3.0]
    assert ids(rerank(LISTS, "frequency")) == ["b", "a", "c", "d"]


def test_score_sorts_by_total():
    out = rerank(LISTS, "score")
    assert ids(out) == ["b", "a", "c", "d"]
    assert out[0].score == pytest.approx(1.2)


def test_combined_mixes_normalised_freq_and_total():
    out = rerank(LISTS, "combined")
    by_id = {r.node_id: r for r in out}
    assert by_id["b"].score == pytest.approx(0.4 * 3 / 3 + 0.6 * 1.2 / 1.2)
    assert by_id["a"].score == pytest.approx(0.4 * 1 / 3 + 0.6 * 0.9 / 1.2)
    assert ids(out) == ["b", "a", "c", "d"]


def test_combined_floors_max_total():
    out = rerank([[("a", 0.0001)], [("b", 0.0)]], "combined")
    assert out[0].score == pytest.approx(0.4 + 0.6 * 0.0001 / 0.001)


def test_ties_keep_first_appearance_order():
    lists = [[("x", 0.5), ("y", 0.5)], [("z", 0.5), ("y", 0.0), ("x", 0.0)]]
    for strategy in ("frequency", "score", "combined"):
        assert ids(rerank(lists, strategy)) == ["x", "y", "z"], strategy
    assert ids(rerank([[("p", 0.4), ("q", 0.4), ("r", 0.4)]], "score")) == ["p", "q", "r"]


def test_kohaku_compat_loses_the_frequency_signal():
    correct = rerank(LISTS, "combined")
    compat = rerank(LISTS, "combined", kohaku_compat=True)
    assert ids(correct)[0] == "b"  # agreed on by all three queries
    assert ids(compat) == ["a", "c", "b", "d"]  # plain first-score order
    assert ids(rerank(LISTS, "frequency", kohaku_compat=True)) == ["a", "c", "b", "d"]
    b = {r.node_id: r for r in compat}["b"]
    assert (b.freq, b.total, b.first) == (1, 0.5, 0.5)
    assert b.queries == [0, 1, 2]  # provenance stays complete


def test_repeat_within_one_list_counts_but_queries_unique():
    out = rerank([[("a", 0.5), ("a", 0.25)], [("a", 0.25)]], "score")
    assert (out[0].freq, out[0].total, out[0].queries) == (3, 1.0, [0, 1])


def test_empty_and_unknown_strategy():
    for strategy in STRATEGIES:
        assert rerank([], strategy) == [] and rerank([[], []], strategy) == []
    with pytest.raises(ValueError, match="rerank"):
        rerank(LISTS, "rrf")
