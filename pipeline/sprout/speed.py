"""The sprout speed bench's agreement check: the fused kernel must build the same trees as the eager reference
(``bench --sprout`` records it; pipeline.publish.bench_doc renders the figures into docs/sprout-speed.md)."""

from __future__ import annotations


def merge_order(da, logits) -> list[tuple[int, int]]:
    """The (left, right) node pairs of a document's tree in merge order: equal lists = identical trees."""
    from pipeline.sprout.build import build_tree
    from pipeline.sprout.heads import mutual_scores

    tree = build_tree(da.doc_id, da.n_chunks, da.pairs, mutual_scores(da.head_values, logits), da.leaf_vectors)
    return [m[:2] for m in tree.merges()]
