"""KohakuRAG's tree index: sentences embedded, parents aggregated bottom-up.

A parent's vector is the token-count-weighted mean of its children's vectors,
renormalised; its weight is the children's total token count. Weighting by tokens (the
paper's rule; KohakuRAG's public code used a plain mean) keeps a one-word heading sentence
from pulling a paragraph vector as hard as a long evidence sentence.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from pipeline.index_structures.store import IndexWriter, StoredNode
from pipeline.tree import DocTree, Node, section_depth

AGGREGATED = ("paragraph", "section", "document")


def aggregate(tree: DocTree, leaf_vecs: dict[str, np.ndarray], leaf_tokens: dict[str, int]) -> dict[str, np.ndarray]:
    """Vectors for every node of ``tree`` from its sentence vectors (bottom-up)."""
    vecs = dict(leaf_vecs)
    weight = {k: max(int(v), 1) for k, v in leaf_tokens.items()}
    for level in AGGREGATED:
        nodes: Iterable[Node] = tree.at_level(level)
        if level == "section":  # subsections before the sections that hold them
            nodes = sorted(nodes, key=lambda n: -section_depth(n.id))
        for node in nodes:
            kids = [c for c in node.children if c in vecs]
            if not kids:
                continue
            w = np.array([weight[c] for c in kids], dtype=np.float64)
            mean = (np.stack([vecs[c] for c in kids]).astype(np.float64) * w[:, None]).sum(0) / w.sum()
            norm = np.linalg.norm(mean)
            vecs[node.id] = (mean / norm if norm > 0 else mean).astype(np.float32)
            weight[node.id] = int(w.sum())
    return vecs


def build_tree_index(trees: list[DocTree], embed, count_tokens, writer: IndexWriter) -> dict:
    """Embed every sentence of ``trees``, aggregate parents, write all nodes. Returns counts."""
    sentences = [n for t in trees for n in t.at_level("sentence")]
    texts = [n.text for n in sentences]
    vectors = embed(texts)
    tokens = count_tokens(texts)
    counts = {"sentence": 0, "paragraph": 0, "section": 0, "document": 0}
    offset = 0
    for tree in trees:
        leaves = list(tree.at_level("sentence"))
        span = slice(offset, offset + len(leaves))
        offset += len(leaves)
        vecs = aggregate(
            tree,
            {n.id: v for n, v in zip(leaves, vectors[span])},
            {n.id: t for n, t in zip(leaves, tokens[span])},
        )
        nodes = [n for n in tree.nodes.values() if n.id in vecs]
        if not nodes:  # a document whose parse failed (see pipeline.parse.errors) has no text
            continue
        writer.add([StoredNode.from_node(n) for n in nodes], np.stack([vecs[n.id] for n in nodes]))
        for n in nodes:
            counts[n.level] += 1
    return counts
