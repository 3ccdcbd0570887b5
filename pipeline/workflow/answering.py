"""Answering variants in the DAG: their typed specs, which rule makes each (``answer`` or ``ensemble``),
the splits they answer and the files an ensemble reads."""

from __future__ import annotations

import re

import pipeline.paths
from pipeline.config import answer_splits
from pipeline.registry.answer_backends import calls_llm, variant_spec
from pipeline.registry.answer_backends import get as get_backend
from pipeline.workflow.params import shell_arg


def answer_spec(cfg: dict, variant: str):
    """The typed spec of an answering variant: its backend's (pipeline/registry/answer_backends.py)."""
    return variant_spec(variant, cfg["answering"][variant])


def uses_llm(cfg: dict, variant: str) -> int:
    return int(calls_llm(answer_spec(cfg, variant).backend))


def answer_variants(cfg: dict, ensemble: bool) -> str:
    """Wildcard pattern of the answering variants the ``answer`` rule (False) or the ``ensemble``
    rule (True) makes, so the two rules never claim the same file."""
    names = [
        v for v in sorted(cfg["answering"]) if get_backend(cfg["answering"][v]["backend"]).votes_members == ensemble
    ]
    return "|".join(map(re.escape, names)) or "(?!)"


def ensemble_inputs(cfg: dict, variant: str, split: str, dataset: str = pipeline.paths.WATTBOT) -> list[str]:
    """The members' answers on ``split`` of ``dataset`` (WattBot, or a corpus: its members run there too)."""
    return [pipeline.paths.answers(m, split, dataset) for m in answer_spec(cfg, variant).members]


def ensemble_args(cfg: dict, variant: str, split: str, dataset: str = pipeline.paths.WATTBOT) -> str:
    """``--member NAME=PATH`` per member, in vote order."""
    members = answer_spec(cfg, variant).members
    paths = ensemble_inputs(cfg, variant, split, dataset)
    return " ".join(f"--member {shell_arg(f'{m}={p}')}" for m, p in zip(members, paths))


def split_variants(cfg: dict, split: str) -> list[str]:
    """The answering variants that answer ``split`` (LLM variants may be train-only)."""
    return [v for v in sorted(cfg["answering"]) if split in answer_splits(cfg, v)]
