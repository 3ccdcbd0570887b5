"""The answer stage: retrieval results + questions -> one answer record per question.

Backends are data (``answering.<variant>.backend``): ``extractive`` (offline, no model
download, the default) or ``llm`` (any litellm model through the cached gateway, including
the local llama.cpp server). Every question gets a record; an LLM question that failed
carries ``failure`` with the reason and counts in the scores and the leaderboard.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline.answer.extractive import answer_question
from pipeline.answer.llm import LLMGateway
from pipeline.answer.llm_answer import AnswerSettings, answer_with_llm


def answer_split(retrieval: list[dict], questions: pd.DataFrame, variant: dict, llm_cfg: dict,
                 cache_dir: str | Path, known_docs: set[str], progress: bool = True,
                 telemetry: list[dict] | None = None) -> list[dict]:
    """Answer records in question order; per-call latency and cache hits go to ``telemetry``
    (a list the caller owns) instead of the records, so the records are identical on reruns."""
    by_id = {r["id"]: r for r in retrieval}
    missing = [q for q in questions["id"] if q not in by_id]
    if missing:
        raise ValueError(f"retrieval results lack question id(s) {', '.join(missing[:5])}")
    if variant["backend"] != "llm":
        return [{"id": q.id, "question": q.question, "answer_unit": q.answer_unit,
                 **asdict(answer_question(q.question, q.answer_unit, by_id[q.id]["hits"], variant.get("extractive")))}
                for q in tqdm(list(questions.itertuples(index=False)), desc="answer (extractive)", disable=not progress)]
    settings = AnswerSettings.from_variant(variant, llm_cfg.get("model"))
    telemetry = telemetry if telemetry is not None else []
    out = []
    with LLMGateway.from_config(cache_dir, llm_cfg) as gateway:
        for q in tqdm(list(questions.itertuples(index=False)), desc=f"answer (llm {settings.model})",
                      disable=not progress):
            ans, call = answer_with_llm(gateway, settings, q.question, q.answer_unit, by_id[q.id]["hits"], known_docs)
            telemetry.extend({"id": q.id, **t} for t in call.pop("telemetry"))
            out.append({"id": q.id, "question": q.question, "answer_unit": q.answer_unit, "call": call,
                        "failure": call["error"], **asdict(ans)})
    return out
