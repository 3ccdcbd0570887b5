"""Combining ranked lists from several retrievers (dense, BM25) or levels (sentence, paragraph).

Every function takes ``(id, score)`` lists, best first, and returns one such list; ties keep
the order of first appearance (lists in argument order, then rank), so results are deterministic.
The hybrid modes a retrieval variant may name (``hybrid.mode``) are registered at the end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.registry.retrieval_modes import FUSIONS, FusionMode

if TYPE_CHECKING:
    from pipeline.specs import HybridSpec

RRF_K = 60  # the constant of Cormack et al. (2009); damps the weight of the very first ranks


def rrf(lists: list[list[tuple]], top_k: int, k: int = RRF_K, weights: list[float] | None = None) -> list[tuple]:
    """(Weighted) reciprocal-rank fusion: ``sum_i w_i / (k + rank_i)``; an id repeated within
    one list counts at its best rank only."""
    weights = weights or [1.0] * len(lists)
    fused: dict = {}
    for w, ranked in zip(weights, lists):
        seen = set()
        for rank, (node_id, _) in enumerate(ranked, start=1):
            if node_id not in seen:
                seen.add(node_id)
                fused[node_id] = fused.get(node_id, 0.0) + w / (k + rank)
    order = sorted(fused.items(), key=lambda kv: -kv[1])  # sorted() is stable: first-seen order on ties
    return [(n, round(s, 6)) for n, s in order[:top_k]]


def minmax(ranked: list[tuple]) -> list[tuple]:
    """Scores rescaled to [0, 1] within the list (best -> 1, worst -> 0; all equal -> 1)."""
    if not ranked:
        return []
    hi, lo = max(s for _, s in ranked), min(s for _, s in ranked)
    return [(n, (s - lo) / (hi - lo) if hi > lo else 1.0) for n, s in ranked]


def convex(lists: list[list[tuple]], top_k: int, weights: list[float] | None = None) -> list[tuple]:
    """Convex combination of min-max-normalised scores (Bruch et al. 2023, "An analysis of fusion
    functions for hybrid retrieval"): ``sum_i w_i * minmax_i(score)``, 0 where a list lacks the id.
    Unlike RRF it keeps how far ahead a retriever's top hit is (BM25 is often far ahead on an
    entity or a number; cosine scores of a dense retriever are flat)."""
    weights = weights or [1.0 / len(lists)] * len(lists)
    fused: dict = {}
    for w, ranked in zip(weights, lists):
        best: dict = {}
        for node_id, s in minmax(ranked):
            best.setdefault(node_id, s)
        for node_id, s in best.items():
            fused[node_id] = fused.get(node_id, 0.0) + w * s
    order = sorted(fused.items(), key=lambda kv: -kv[1])
    return [(n, round(s, 6)) for n, s in order[:top_k]]


def append(primary: list[tuple], extra: list[tuple], extra_k: int) -> list[tuple]:
    """KohakuRAG's hybrid: up to ``extra_k`` new ids from ``extra`` appended after ``primary``."""
    seen = {n for n, _ in primary}
    added: list[tuple[str, float]] = []
    for n, s in extra:
        if n not in seen and len(added) < extra_k:
            seen.add(n)
            added.append((n, s))
    return primary + added


def _weights(hybrid: HybridSpec) -> list[float] | None:
    """A hybrid's ``weight`` is the lexical side's share; the dense side gets the rest."""
    return None if hybrid.weight is None else [1 - hybrid.weight, hybrid.weight]


FUSIONS.register(FusionMode("rrf", lambda d, x, k, h: rrf([d, x], k, weights=_weights(h)), takes_weight=True))
FUSIONS.register(FusionMode("convex", lambda d, x, k, h: convex([d, x], k, weights=_weights(h)), takes_weight=True))
# KohakuRAG's hybrid: the dense top_k, then up to hybrid.top_k new lexical hits
FUSIONS.register(FusionMode("append", lambda d, x, k, h: append(d[:k], x, h.top_k)))
