"""Combining ranked lists from several retrievers (dense, BM25)."""
from __future__ import annotations

RRF_K = 60  # the constant of Cormack et al. (2009); damps the weight of the very first ranks


def rrf(lists: list[list[tuple[str, float]]], top_k: int, k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of ``(node_id, score)`` lists; ties keep first-list order."""
    fused: dict[str, float] = {}
    for ranked in lists:
        for rank, (node_id, _) in enumerate(ranked, start=1):
            fused[node_id] = fused.get(node_id, 0.0) + 1.0 / (k + rank)
    order = sorted(fused.items(), key=lambda kv: -kv[1])  # sorted() is stable: first-seen order on ties
    return [(n, round(s, 6)) for n, s in order[:top_k]]


def append(primary: list[tuple[str, float]], extra: list[tuple[str, float]], extra_k: int) -> list[tuple[str, float]]:
    """KohakuRAG's hybrid: up to ``extra_k`` new nodes from ``extra`` appended after ``primary``."""
    seen = {n for n, _ in primary}
    added = [(n, s) for n, s in extra if n not in seen][:extra_k]
    return primary + added
