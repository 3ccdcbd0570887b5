"""Hierarchical beam search over SproutRAG trees (§3.2-3.5), exactly the reference's rules.

Per document: start from the root (scored and collected only with ``include_root``); each step
scores the children of every node in the beam by cosine with the query, records them as visited,
collects those with score >= ``threshold`` (``collect="visited"``: all), and keeps the best
``beam_width`` as the next beam, ordered by (-score, height, node id). Pruned subtrees are never
revisited. Nothing collected -> every visited node (flagged fallback); nothing visited -> the
root. Leaves and internal nodes of every height compete on raw cosine only, ordered by
(-score, height, leaf first, node id); each document's top ``per_document_top_k`` are pooled and
the global ``top_k`` returned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.specs import BeamSpec
from pipeline.sprout.build import SproutTree


@dataclass(frozen=True)
class Found:
    doc_id: str
    node: int  # node index in its tree
    node_id: str
    score: float
    height: int
    fallback: bool = False

    def key(self):
        return (-self.score, self.height, self.node_id.split("::")[-2] != "leaf", self.node_id)


def cosines(tree: SproutTree, query: np.ndarray) -> np.ndarray:
    """Cosine of every node's (unnormalised) vector with a unit query vector."""
    norms = np.linalg.norm(tree.vectors, axis=1)
    return (tree.vectors @ np.asarray(query, dtype=np.float32)) / np.maximum(norms, 1e-12)


def beam_search(tree: SproutTree, scores: np.ndarray, cfg: BeamSpec) -> tuple[list[Found], list[int]]:
    """One document: its ranked top ``per_document_top_k`` and the visited node indexes in visit order."""
    ids = tree.ids
    visited: list[int] = []
    collected: list[int] = []

    def visit(i: int) -> None:
        visited.append(i)
        if cfg.collect == "visited" or scores[i] >= cfg.threshold:
            collected.append(i)

    root = tree.root
    if cfg.include_root:
        visit(root)
    beam = [root]
    while True:
        cand = [int(c) for b in beam if tree.left[b] >= 0 for c in (tree.left[b], tree.right[b])]
        if not cand:
            break
        for c in cand:
            visit(c)
        cand.sort(key=lambda c: (-scores[c], tree.height[c], ids[c]))
        beam = cand[: cfg.beam_width]
    fallback = not collected
    chosen = collected or visited or [root]
    found = [Found(tree.doc_id, i, ids[i], float(scores[i]), int(tree.height[i]), fallback) for i in chosen]
    found.sort(key=Found.key)
    return found[: cfg.per_document_top_k], visited


def search_documents(trees: list[SproutTree], query: np.ndarray, cfg: BeamSpec, top_k: int) -> list[Found]:
    """All documents' per-document results pooled, deduplicated, ranked, cut at ``top_k`` (the variant's)."""
    pooled: dict[tuple[str, str], Found] = {}
    for tree in trees:
        for f in beam_search(tree, cosines(tree, query), cfg)[0]:
            key = (f.doc_id, f.node_id)
            if key not in pooled or f.key() < pooled[key].key():
                pooled[key] = f
    return sorted(pooled.values(), key=Found.key)[:top_k]
