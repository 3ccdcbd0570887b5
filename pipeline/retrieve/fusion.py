"""Combining ranked lists from several retrievers (dense, BM25) or levels (sentence, paragraph).

Every function takes ``(id, score)`` lists, best first, and returns one such list; ties keep
the order of first appearance (lists in argument order, then rank), so results are deterministic.
The fused scores are ranx's (``ranx.fusion``, ``ranx.normalization``); the order of ties is ours,
since ranx sorts with an unstable argsort. ranx is imported on first use: with numba's compiled
functions loaded from its cache it costs a process about 10-20 s (measured on the 2-core box),
which jobs that never fuse (BM25-only, dense-only, SproutRAG, index builds) should not pay.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ranx import Run

RRF_K = 60  # the constant of Cormack et al. (2009); damps the weight of the very first ranks
_Q = "q"  # the one query of every run built here


def _runs(lists: list[list[tuple]], weights: list[float], scores) -> tuple[list[Run], list[float], list]:
    """One ranx run per non-empty list, its weight, and every id in order of first appearance
    (``scores(ranked)`` gives a list's scores). A ranx run maps ids to scores, so an id repeated
    within a list keeps its first, best place only (no list the pipeline fuses repeats an id).
    Ids become their first-appearance position, so any hashable id works."""
    from ranx import Run

    ids: dict = {}
    runs, kept = [], []
    for w, ranked in zip(weights, lists):
        best: dict = {}
        for node_id, s in zip((n for n, _ in ranked), scores(ranked)):
            best.setdefault(str(ids.setdefault(node_id, len(ids))), s)
        if best:
            runs.append(Run({_Q: best}))
            kept.append(w)
    return runs, kept, list(ids)


def _ordered(fused: Run, ids: list, top_k: int) -> list[tuple]:
    """Best first, ties in first-appearance order, scores rounded to 6 digits. Call it while the
    runs that went into ``fused`` are alive: ranx's fused ids point into their memory (a freed
    input run makes reading ``fused`` crash), hence the named intermediates in the callers."""
    scores = fused.run[_Q]
    order = sorted(((ids[int(i)], s, int(i)) for i, s in scores.items()), key=lambda x: (-x[1], x[2]))
    return [(n, round(s, 6)) for n, s, _ in order[:top_k]]


def rrf(lists: list[list[tuple]], top_k: int, k: int = RRF_K,
        weights: list[float] | None = None) -> list[tuple]:
    """(Weighted) reciprocal-rank fusion: ``sum_i w_i / (k + rank_i)``. The rank is the place in
    the list: ranx is handed ``-place`` as the score, so its ranking is exactly the list's, ties in
    score included (an id repeated within a list counts at its best rank, the ids after it move up)."""
    from ranx.fusion import rrf as ranx_rrf
    from ranx.fusion import wsum

    runs, kept, ids = _runs(lists, weights or [1.0] * len(lists), lambda ranked: [-float(i) for i in range(len(ranked))])
    if not runs:
        return []
    if weights is None:
        return _ordered(ranx_rrf(runs, k=k), ids, top_k)
    # ranx's rrf has no weights: each list's 1/(k + rank), then ranx's weighted sum
    per_list = [ranx_rrf([r], k=k) for r in runs]
    return _ordered(wsum(per_list, weights=kept), ids, top_k)


def minmax(ranked: list[tuple]) -> list[tuple]:
    """Scores rescaled to [0, 1] within the list (best -> 1, worst -> 0; all equal -> 1)."""
    if not ranked:
        return []
    hi, lo = max(s for _, s in ranked), min(s for _, s in ranked)
    return [(n, (s - lo) / (hi - lo) if hi > lo else 1.0) for n, s in ranked]


def _minmax_run(run: Run) -> Run:
    """ranx's min-max normalisation, except for a list whose scores are all equal (one hit, say):
    ranx gives each 0 (it divides by max(hi - lo, 1e-9)), we keep 1 as :func:`minmax` does, so a
    retriever's only match still counts in the convex sum. That case goes through ranx's max norm
    of an all-ones run (1/1 = 1): a run built from a dict and a normalised one do not mix in
    ranx's fusion (numba crashes on the two kinds of id strings), so every run is a normalised one."""
    from ranx import Run
    from ranx.normalization import max_norm, min_max_norm

    scores = list(run.run[_Q].values())
    if max(scores) > min(scores):
        return min_max_norm(run)
    return max_norm(Run({_Q: {i: 1.0 for i in run.run[_Q]}}))


def convex(lists: list[list[tuple]], top_k: int, weights: list[float] | None = None) -> list[tuple]:
    """Convex combination of min-max-normalised scores (Bruch et al. 2023, "An analysis of fusion
    functions for hybrid retrieval"): ``sum_i w_i * minmax_i(score)``, 0 where a list lacks the id
    (ranx's min-max norm and weighted sum, i.e. ``ranx.fuse(norm="min-max", method="wsum")`` but
    for a list of equal scores, see :func:`_minmax_run`).
    Unlike RRF it keeps how far ahead a retriever's top hit is (BM25 is often far ahead on an
    entity or a number; cosine scores of a dense retriever are flat)."""
    from ranx.fusion import wsum

    weights = weights or [1.0 / len(lists)] * len(lists)
    runs, kept, ids = _runs(lists, weights, lambda ranked: [float(s) for _, s in ranked])
    if not runs:
        return []
    normed = [_minmax_run(r) for r in runs]
    return _ordered(wsum(normed, weights=kept), ids, top_k)


def append(primary: list[tuple], extra: list[tuple], extra_k: int) -> list[tuple]:
    """KohakuRAG's hybrid: up to ``extra_k`` new ids from ``extra`` appended after ``primary``."""
    seen = {n for n, _ in primary}
    added = []
    for n, s in extra:
        if n not in seen and len(added) < extra_k:
            seen.add(n)
            added.append((n, s))
    return primary + added
