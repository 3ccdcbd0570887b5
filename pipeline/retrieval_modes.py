"""The registries of what a retrieval variant's ``planner.kind`` and ``hybrid.mode`` may name.

A planner kind makes the query planner of a variant (or None: the question is the one query); its
entries register where the planners live (pipeline/retrieve/planner.py), which a driver imports
(pipeline/registries.py). A fusion mode merges a hybrid's dense and lexical rankings; its entries
are registered here, over the functions of :mod:`pipeline.ranking.fusion`. The config layer fills the
schema's ``enum:`` from both registries; nothing else switches on a kind's or a mode's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipeline.ranking.fusion import append, convex, rrf
from pipeline.registry import Registry

if TYPE_CHECKING:
    from pipeline.specs import HybridSpec, PlannerSpec

Ranked = list[tuple[str, float]]


@dataclass(frozen=True)
class PlannerKind:
    """``make(spec, acronyms, gateway)``: the planner (None: a single query); ``acronyms()`` mines the
    index's acronyms (called only by a kind that uses them), ``gateway`` serves an LLM."""

    name: str
    make: Callable[[PlannerSpec, Callable[[], dict[str, str]], Any], Any]
    calls_llm: bool = False  # the job takes an llm_api slot, its model is checked and priced


@dataclass(frozen=True)
class FusionMode:
    """``fuse(dense, lexical, top_k, hybrid)``: one ranking of a hybrid's two (best first)."""

    name: str
    fuse: Callable[[Ranked, Ranked, int, HybridSpec], Ranked]
    takes_weight: bool = False  # hybrid.weight: the lexical side's share


PLANNERS: Registry[PlannerKind] = Registry("planner kind", "WATTBENCH_PLANNER_KINDS", "pipeline.retrieve.planner")
FUSIONS: Registry[FusionMode] = Registry("fusion mode", "WATTBENCH_FUSION_MODES")


def _weights(hybrid: HybridSpec) -> list[float] | None:
    return None if hybrid.weight is None else [1 - hybrid.weight, hybrid.weight]


FUSIONS.register(FusionMode("rrf", lambda d, x, k, h: rrf([d, x], k, weights=_weights(h)), takes_weight=True))
FUSIONS.register(FusionMode("convex", lambda d, x, k, h: convex([d, x], k, weights=_weights(h)), takes_weight=True))
# KohakuRAG's hybrid: the dense top_k, then up to hybrid.top_k new lexical hits
FUSIONS.register(FusionMode("append", lambda d, x, k, h: append(d[:k], x, h.top_k)))
