"""Beam search behaviour on hand-made trees (§3.2-3.5)."""
from __future__ import annotations

import numpy as np

from pipeline.sprout.build import build_tree
from pipeline.specs import BeamSpec
from pipeline.sprout.beam_search import beam_search, cosines, search_documents


def beam(**keys) -> BeamSpec:
    """A variant's beam keys over the schema's defaults."""
    return BeamSpec.from_dict(keys)


def chain_tree(doc="d", n=6):
    """Merges (0,1), (2,3), (4,5), then (01,23), then (0123,45): a 3-level tree over 6 leaves."""
    pairs = np.array([[0, 1], [2, 3], [4, 5], [1, 2], [3, 4]])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    vecs = np.eye(n, 8, dtype=np.float32)
    return build_tree(doc, n, pairs, scores, vecs)


def test_beam_width_one_follows_the_best_child_only():
    t = chain_tree()
    q = np.zeros(8, np.float32)
    q[4] = 1.0  # leaf 4 is the target
    scores = cosines(t, q)
    found, visited = beam_search(t, scores, beam(beam_width=1, per_document_top_k=10, threshold=-1.0))
    # root -> {0123, 45}: 45 wins -> {4, 5}: 4 wins; 0123's subtree is pruned and never visited
    assert set(visited) == {t.parent[4], t.left[t.root], 4, 5}
    assert found[0].node_id == "d::leaf::4" and found[0].score == 1.0
    assert t.root not in visited  # include_root=false: the root is not scored


def test_wider_beam_visits_more_and_bounds_hold():
    t = chain_tree()
    q = np.ones(8, np.float32) / np.sqrt(8)
    scores = cosines(t, q)
    _, v1 = beam_search(t, scores, beam(beam_width=1))
    _, v5 = beam_search(t, scores, beam(beam_width=5))
    assert set(v1) < set(v5) and len(v5) == t.n_nodes - 1  # b=5 reaches every node below the root
    assert len(v1) <= 2 * 1 * t.height[t.root]


def test_threshold_collects_and_falls_back_to_visited():
    t = chain_tree()
    q = np.zeros(8, np.float32)
    q[0] = 1.0
    scores = cosines(t, q)
    found, _ = beam_search(t, scores, beam(beam_width=2, per_document_top_k=20, threshold=0.0))
    assert all(f.score >= 0 and not f.fallback for f in found)
    none, visited = beam_search(t, scores, beam(beam_width=2, per_document_top_k=20, threshold=2.0))
    assert none and all(f.fallback for f in none) and {f.node for f in none} == set(visited)
    rooted, _ = beam_search(t, scores, beam(beam_width=2, per_document_top_k=20, include_root=True))
    assert t.root in {f.node for f in rooted}


def test_granularities_compete_on_cosine_with_finer_first_on_ties():
    t = chain_tree()
    q = np.zeros(8, np.float32)
    q[0] = 1.0
    found, _ = beam_search(t, cosines(t, q), beam(beam_width=5, per_document_top_k=20))
    keys = [(-f.score, f.height) for f in found]
    assert keys == sorted(keys)
    assert found[0].node_id == "d::leaf::0"  # cosine 1 beats its parent (0.707) and ancestors
    assert any(f.height > 0 for f in found)  # internal nodes are returned too


def test_per_document_top_k_pooled_into_global_top_k():
    a, b = chain_tree("a"), chain_tree("b")
    b.vectors[:] = b.vectors[:, ::-1]  # different direction: b's nodes score lower for this query
    q = np.zeros(8, np.float32)
    q[0] = 1.0
    out = search_documents([a, b], q, beam(beam_width=5, per_document_top_k=2, threshold=-1.0), 3)
    assert len(out) == 3
    assert sum(f.doc_id == "a" for f in out) == 2  # a contributes at most its per-document top 2
    assert [f.score for f in out] == sorted((f.score for f in out), reverse=True)


def test_metrics_judge_a_subtree_by_its_spans_not_its_hull():
    from pipeline.score.retrieval_metrics import Span, query_metrics

    gap_gold = [Span("d", 50, 60)]
    hull_only = {"node_id": "d::internal::0", "doc_id": "d", "start": 0, "end": 100, "text": "a b"}
    split = dict(hull_only, spans=[[0, 40], [70, 100]])  # leaves 0 and 2: the gold between is not retrieved
    assert query_metrics([hull_only], gap_gold, (1,))["recall@1"] == 1.0
    row = query_metrics([split], gap_gold, (1,))
    assert row["recall@1"] == 0.0 and row["char_precision@1"] == 0.0
    assert query_metrics([split], [Span("d", 75, 80)], (1,))["char_precision@1"] == 5 / 70
