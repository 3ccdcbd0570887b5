"""The answer stage: retrieval results + questions -> one answer record per question.

Backends are data (``answering.<variant>.backend``), each a module that registers its spec and its answer
function with pipeline/registry/answer_backends.py: ``extractive`` (offline, no model download, the default;
pipeline/answer/extractive.py), ``llm`` (any litellm model through the cached gateway, including the local
llama.cpp server; pipeline/answer/llm_answer.py) or a plugin's. Every question gets a record; an LLM
question that failed carries ``failure`` with the reason and counts in the scores and the leaderboard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.llm.gateway import LLMGateway
from pipeline.llm_models import LLMSpec
from pipeline.registry.answer_backends import VariantSpec
from pipeline.registry.answer_backends import get as get_backend


@dataclass
class AnswerJob:
    """What one answer job gives every backend beside the questions, their hits and the variant."""

    llm: LLMSpec  # the job's gateway settings (parsed once, by the verb)
    cache_dir: str | Path
    known_docs: set[str]
    progress: bool = True
    telemetry: list[dict] = field(default_factory=list)  # per-call latency and cache hits (the caller's list)
    gateway: LLMGateway | None = None  # an open gateway to use (the caller closes it); else one is made from ``llm``


def answer_split(retrieval: list[dict], questions: pd.DataFrame, spec: VariantSpec, job: AnswerJob) -> list[dict]:
    """Answer records in question order, by the variant's registered backend; per-call latency and
    cache hits go to ``job.telemetry`` (a list the caller owns) instead of the records, so the records
    are identical on reruns."""
    by_id = {r["id"]: r for r in retrieval}
    missing = [q for q in questions["id"] if q not in by_id]
    if missing:
        raise ValueError(f"retrieval results lack question id(s) {', '.join(missing[:5])}")
    return get_backend(spec.backend).function()(questions, by_id, spec, job)
