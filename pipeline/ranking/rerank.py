"""Cross-query reranking: merge the ranked lists of the planner's queries into one list of
unique nodes, rewarding nodes that several queries agree on (KohakuRAG's rerank strategies).

KohakuRAG deduplicates the concatenated lists *before* computing the statistics, so every
node has freq = 1 and "frequency"/"combined" collapse to first-occurrence score order
(../shared/docs/kohakurag.md §5, "Important quirk"). :func:`rerank` computes the statistics over all
occurrences by default; ``kohaku_compat=True`` reproduces the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.specs import RERANKS as STRATEGIES  # the config schema's list

FREQ_WEIGHT, SCORE_WEIGHT = 0.4, 0.6  # KohakuRAG's "combined" weights
MIN_MAX_TOTAL = 0.001  # floor of max(total) in "combined" (KohakuRAG), avoids dividing by ~0


@dataclass
class Ranked:
    """One unique node after reranking.

    ``freq``/``total`` are the statistics the ranking used (in compat mode: 1 and the first
    score); ``queries`` is provenance and always lists every planned query that matched it.
    ``score`` is the sort key: none -> first score, frequency -> freq (ties broken by total),
    score -> total, combined -> the 0.4/0.6 mix.
    """

    node_id: str
    score: float
    freq: int
    total: float
    first: float
    queries: list[int] = field(default_factory=list)


def rerank(
    lists: list[list[tuple[str, float]]], strategy: str = "combined", kohaku_compat: bool = False
) -> list[Ranked]:
    """Unique nodes of the per-query ``(node_id, score)`` lists (planner order), best first.

    Correct mode: freq = number of occurrences across all lists (a node repeated within one
    list counts each time, as in KohakuRAG), total = sum of their scores. ``kohaku_compat``:
    only the first occurrence of each node is counted (dedup before rerank), so freq = 1 and
    total = first score for every node. Ties keep the order of first appearance in the
    concatenated lists; "none" is that order.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"rerank: unknown strategy {strategy!r} (expected one of {STRATEGIES})")
    nodes: dict[str, Ranked] = {}  # insertion order = first appearance in the concatenation
    for qi, ranked in enumerate(lists):
        for node_id, score in ranked:
            node = nodes.get(node_id)
            if node is None:
                nodes[node_id] = Ranked(node_id, 0.0, 1, float(score), float(score), [qi])
                continue
            if qi not in node.queries:
                node.queries.append(qi)  # lists are visited in order, so this stays sorted
            if not kohaku_compat:
                node.freq += 1
                node.total += float(score)
    out = list(nodes.values())
    if not out:
        return out
    max_freq = max(1, max(r.freq for r in out))
    max_total = max(MIN_MAX_TOTAL, max(r.total for r in out))
    for r in out:
        r.score = _score(r, strategy, max_freq, max_total)
    if strategy == "none":
        return out
    sort_key = (lambda r: (r.freq, r.total)) if strategy == "frequency" else (lambda r: r.score)
    return sorted(out, key=sort_key, reverse=True)  # stable: ties keep first-appearance order


def _score(r: Ranked, strategy: str, max_freq: int, max_total: float) -> float:
    if strategy == "none":
        return r.first
    if strategy == "frequency":
        return float(r.freq)  # the sort also breaks freq ties by total
    if strategy == "score":
        return r.total
    return FREQ_WEIGHT * r.freq / max_freq + SCORE_WEIGHT * r.total / max_total
