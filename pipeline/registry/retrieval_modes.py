"""The registries of what a retrieval variant's ``planner.kind`` and ``hybrid.mode`` may name.

A planner kind makes the query planner of a variant (or None: the question is the one query); a
fusion mode merges a hybrid's dense and lexical rankings. Entries register where their code lives
(pipeline/retrieve/planner.py, pipeline/ranking/fusion.py), which a driver imports
(pipeline/register_builtins.py). The config layer fills the schema's ``enum:`` from both registries;
nothing else switches on a kind's or a mode's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.registry.base import Registry

# pipeline.specs looks planner kinds and fusion modes up here, so their spec types are named, not imported:
# make(spec: PlannerSpec, ...), fuse(..., hybrid: HybridSpec).

Ranked = list[tuple[str, float]]


@dataclass(frozen=True)
class PlannerKind:
    """``make(spec, acronyms, gateway)``: the planner (None: a single query); ``acronyms()`` mines the
    index's acronyms (called only by a kind that uses them), ``gateway`` serves an LLM."""

    name: str
    make: Callable[[Any, Callable[[], dict[str, str]], Any], Any]
    calls_llm: bool = False  # the job takes an llm_api slot, its model is checked and priced
    spec: type | None = None  # its keys of planner: a PlannerSpec subclass (None: PlannerSpec's)


@dataclass(frozen=True)
class FusionMode:
    """``fuse(dense, lexical, top_k, hybrid)``: one ranking of a hybrid's two (best first)."""

    name: str
    fuse: Callable[[Ranked, Ranked, int, Any], Ranked]
    takes_weight: bool = False  # hybrid.weight: the lexical side's share


PLANNERS: Registry[PlannerKind] = Registry("planner kind", "wattbench.planner_kinds", "pipeline.retrieve.planner")
FUSIONS: Registry[FusionMode] = Registry("fusion mode", "wattbench.fusion_modes", "pipeline.ranking.fusion")
