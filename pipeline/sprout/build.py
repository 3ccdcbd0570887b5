"""The SproutRAG tree: single-linkage agglomeration computed as a maximum spanning tree (§2).

Greedily merging the active pair with the highest mutual score, with a merged node's score to any
other node the max of its children's, merges exactly along Kruskal's maximum spanning tree: sort
pairs by score (descending) and merge whenever a pair joins two components. Only pairs that share
an encoder window have a score (unobserved pairs have no evidence); components left when the edges
run out are joined in document order (leftmost component first) with merge score 0. A parent's
vector is the plain mean of its two children's (not renormalised: the "progressive embedding").
Node indexes: leaves 0..n-1, the m-th merge is n+m; the root is the last node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.sprout.chunks import internal_id, leaf_id


@dataclass
class SproutTree:
    doc_id: str
    n_leaves: int
    left: np.ndarray  # [N] child node index, -1 for leaves
    right: np.ndarray
    parent: np.ndarray  # [N], -1 for the root
    leaf_lo: np.ndarray  # [N] smallest / largest leaf index below the node
    leaf_hi: np.ndarray
    size: np.ndarray  # leaves below
    height: np.ndarray  # 0 for leaves, 1 + max(children)
    depth: np.ndarray  # distance from the root
    merge_score: np.ndarray  # the mutual score of the merge that made the node (nan for leaves)
    vectors: np.ndarray  # [N, D] float32 progressive embeddings

    @property
    def n_nodes(self) -> int:
        return len(self.left)

    @property
    def root(self) -> int:
        return self.n_nodes - 1

    @property
    def ids(self) -> list[str]:
        """Node id of every node index (computed once: beam search sorts on them)."""
        if getattr(self, "_ids", None) is None:
            self._ids = [self.node_id(i) for i in range(self.n_nodes)]
        return self._ids

    def node_id(self, i: int) -> str:
        return leaf_id(self.doc_id, i) if i < self.n_leaves else internal_id(self.doc_id, i - self.n_leaves)

    def leaves(self, i: int) -> list[int]:
        """Leaf indexes below node ``i``, in document order."""
        out, stack = [], [i]
        while stack:
            j = stack.pop()
            if j < self.n_leaves:
                out.append(j)
            else:
                stack += [self.left[j], self.right[j]]
        return sorted(out)

    def merges(self) -> list[tuple[int, int, float]]:
        """(left, right, score) of every merge, in merge order: what tests compare."""
        n = self.n_leaves
        return [(int(self.left[k]), int(self.right[k]), float(self.merge_score[k])) for k in range(n, self.n_nodes)]


def kruskal_merges(n: int, pairs: np.ndarray, scores: np.ndarray) -> list[tuple[int, int, float]]:
    """Merge sequence over leaves 0..n-1 as (node a, node b, score) with new node ids n, n+1, ...

    Edges sorted by (-score, i, j); the forest left over is joined in document order."""
    parent = list(range(n))
    comp_node = list(range(n))  # union-find root -> the tree node representing the component
    lo = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    out: list[tuple[int, int, float]] = []
    if len(pairs):
        order = np.lexsort((pairs[:, 1], pairs[:, 0], -np.asarray(scores, dtype=np.float64)))
        for e in order:
            i, j = int(pairs[e, 0]), int(pairs[e, 1])
            ri, rj = find(i), find(j)
            if ri == rj or not np.isfinite(scores[e]):
                continue
            out.append((comp_node[ri], comp_node[rj], float(scores[e])))
            parent[rj] = ri
            comp_node[ri] = n + len(out) - 1
            lo[ri] = min(lo[ri], lo[rj])
            if len(out) == n - 1:
                break
    roots = sorted({find(x) for x in range(n)}, key=lambda r: lo[r])
    for r in roots[1:]:  # chain the remaining components under the first
        out.append((comp_node[roots[0]], comp_node[r], 0.0))
        comp_node[roots[0]] = n + len(out) - 1
    return out


def build_tree(doc_id: str, n: int, pairs: np.ndarray, scores: np.ndarray, leaf_vectors: np.ndarray) -> SproutTree:
    """The document's binary tree (2n-1 nodes) from its scored pairs and leaf vectors."""
    if n < 1:
        raise ValueError(f"{doc_id}: a sprout tree needs at least one leaf")
    merges = kruskal_merges(n, pairs, scores)
    N = 2 * n - 1
    left = np.full(N, -1, np.int64)
    right = np.full(N, -1, np.int64)
    parent = np.full(N, -1, np.int64)
    lo, hi = np.arange(N, dtype=np.int64), np.arange(N, dtype=np.int64)
    size = np.ones(N, np.int64)
    height = np.zeros(N, np.int64)
    score = np.full(N, np.nan)
    vecs = np.zeros((N, leaf_vectors.shape[1]), dtype=np.float32)
    vecs[:n] = leaf_vectors
    for m, (a, b, s) in enumerate(merges):
        k = n + m
        if lo[b] < lo[a]:  # the child with the smaller first leaf is the left one
            a, b = b, a
        left[k], right[k], parent[a], parent[b] = a, b, k, k
        lo[k], hi[k] = lo[a], max(hi[a], hi[b])
        size[k] = size[a] + size[b]
        height[k] = 1 + max(height[a], height[b])
        score[k] = s
        vecs[k] = (vecs[a] + vecs[b]) / 2
    depth = np.zeros(N, np.int64)
    for k in range(N - 2, -1, -1):  # parents always come after their children
        depth[k] = depth[parent[k]] + 1
    return SproutTree(doc_id, n, left, right, parent, lo, hi, size, height, depth, score, vecs)
