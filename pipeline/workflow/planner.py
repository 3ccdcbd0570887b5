"""Retrieval variants with an LLM query planner: which rule makes them (``retrieve`` or ``retrieve_llm``)
and the model their planner calls."""

from __future__ import annotations

import re


def uses_llm_planner(cfg: dict, variant: str) -> int:
    """1 when the variant's planner kind calls an LLM (its registry entry says so), else 0."""
    from pipeline.specs import PlannerSpec

    return int(PlannerSpec.from_dict(cfg["retrieval"][variant].get("planner")).calls_llm)


def planner_model(cfg: dict, variant: str) -> str:
    """The model of a retrieval variant's LLM query planner: its ``model``, else ``llm.model``."""
    model = (cfg["retrieval"][variant].get("planner") or {}).get("model") or (cfg.get("llm") or {}).get("model")
    if not model:
        raise ValueError(f"config key 'retrieval.{variant}.planner.model': required when the planner calls an LLM")
    return model


def retrieval_variants(cfg: dict, llm_planner: bool) -> str:
    """Wildcard pattern of the retrieval variants the ``retrieve`` rule (False) or the ``retrieve_llm``
    rule (True, an LLM query planner) makes, so the two rules never claim the same file."""
    names = [v for v in sorted(cfg["retrieval"]) if bool(uses_llm_planner(cfg, v)) == llm_planner]
    return "|".join(map(re.escape, names)) or "(?!)"
