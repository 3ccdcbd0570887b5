"""The merge rule: Kruskal on the observed pairs == the reference's O(n^3) greedy single linkage."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.sprout.build import build_tree, kruskal_merges


def brute_force(M: np.ndarray) -> list[tuple[int, int, float]]:
    """The reference agglomeration: repeatedly merge the active pair with the highest score (non-finite
    = unobserved, never merged on evidence), max-linkage update of the score matrix; when no finite
    pair is left, join what remains in document order (leftmost first). O(n^3)."""
    n = len(M)
    S = {(i, j): M[i, j] for i in range(n) for j in range(n) if i != j}
    active, lo, nxt, out = list(range(n)), {i: i for i in range(n)}, n, []
    while len(active) > 1:
        best = None
        for a_i, a in enumerate(active):
            for b in active[a_i + 1 :]:
                s = S[(a, b)]
                if np.isfinite(s) and (best is None or s > best[0]):
                    best = (s, a, b)
        if best is None:
            break
        s, a, b = best
        out.append((a, b, float(s)))
        for k in active:
            if k not in (a, b):
                S[(nxt, k)] = S[(k, nxt)] = max(S[(a, k)], S[(b, k)])
        lo[nxt] = min(lo[a], lo[b])
        active = [k for k in active if k not in (a, b)] + [nxt]
        nxt += 1
    active.sort(key=lambda k: lo[k])
    while len(active) > 1:
        a, b = active[0], active[1]
        out.append((a, b, 0.0))
        lo[nxt] = lo[a]
        active = [nxt] + active[2:]
        nxt += 1
    return out


def canonical(merges, n):
    """Merges as (left, right, score) with left = the child holding the smaller first leaf."""
    lo = {i: i for i in range(n)}
    out = []
    for m, (a, b, s) in enumerate(merges):
        if lo[b] < lo[a]:
            a, b = b, a
        lo[n + m] = lo[a]
        out.append((a, b, s))
    return out


def edges(M: np.ndarray):
    i, j = np.triu_indices(len(M), 1)
    keep = np.isfinite(M[i, j])
    return np.stack([i[keep], j[keep]], axis=1), M[i, j][keep]


@pytest.mark.parametrize("seed", range(12))
def test_kruskal_equals_bruteforce_on_random_matrices(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 28))
    A = rng.random((n, n))
    M = (A + A.T) / 2
    np.fill_diagonal(M, 0)
    pairs, scores = edges(M)
    vecs = rng.normal(size=(n, 8)).astype(np.float32)
    tree = build_tree("d", n, pairs, scores, vecs)
    assert tree.merges() == canonical(brute_force(M), n)
    assert tree.n_nodes == 2 * n - 1 and tree.root == 2 * n - 2


@pytest.mark.parametrize("seed", range(8))
def test_window_restricted_graph_and_document_order_finish(seed):
    """Only pairs sharing a window carry a score; gaps leave a forest joined leftmost first."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 30))
    M = np.full((n, n), -np.inf)
    band = int(rng.integers(1, 4))
    cut = set(rng.choice(np.arange(1, n), size=min(2, n - 1), replace=False).tolist())  # no window spans these
    for i in range(n):
        for j in range(i + 1, min(n, i + band + 1)):
            if not any(i < c <= j for c in cut):
                M[i, j] = M[j, i] = rng.random()
    pairs, scores = edges(M)
    tree = build_tree("d", n, pairs, scores, np.eye(n, 4, dtype=np.float32))
    assert tree.merges() == canonical(brute_force(M), n)


def test_node_fields_progressive_embeddings_and_spans():
    rng = np.random.default_rng(7)
    n = 9
    A = rng.random((n, n))
    M = (A + A.T) / 2
    pairs, scores = edges(M)
    vecs = rng.normal(size=(n, 5)).astype(np.float32)
    t = build_tree("doc", n, pairs, scores, vecs)
    for k in range(n, t.n_nodes):
        l, r = t.left[k], t.right[k]
        np.testing.assert_allclose(t.vectors[k], (t.vectors[l] + t.vectors[r]) / 2, rtol=1e-6)
        assert t.height[k] == 1 + max(t.height[l], t.height[r])
        assert t.depth[l] == t.depth[k] + 1 == t.depth[r]
        assert t.leaf_lo[l] < t.leaf_lo[r]  # left child holds the first leaf
        leaves = t.leaves(k)
        assert (t.leaf_lo[k], t.leaf_hi[k], t.size[k]) == (leaves[0], leaves[-1], len(leaves))
    assert t.depth[t.root] == 0 and sorted(t.leaves(t.root)) == list(range(n))
    assert t.node_id(0) == "doc::leaf::0" and t.node_id(t.root) == f"doc::internal::{n - 2}"


def test_single_leaf_is_its_own_root():
    t = build_tree("d", 1, np.zeros((0, 2), np.int32), np.zeros(0), np.ones((1, 3), np.float32))
    assert t.n_nodes == 1 and t.root == 0 and kruskal_merges(1, np.zeros((0, 2)), np.zeros(0)) == []
