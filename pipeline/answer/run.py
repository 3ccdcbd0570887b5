"""The answer stage: retrieval results + questions -> one answer record per question.

Backends are data (``answering.<variant>.backend``): ``extractive`` (offline, no model
download, the default) or ``llm`` (any litellm model through the cached gateway).
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline.answer.extractive import answer_question
from pipeline.answer.llm import LLMGateway
from pipeline.answer.llm_answer import answer_with_llm


def answer_split(retrieval: list[dict], questions: pd.DataFrame, variant: dict, llm_cfg: dict,
                 cache_dir: str | Path, known_docs: set[str], progress: bool = True,
                 telemetry: list[dict] | None = None) -> list[dict]:
    """Answer records in question order; per-call latency and cache hits go to ``telemetry``
    (a list the caller owns) instead of the records, so the records are identical on reruns."""
    by_id = {r["id"]: r for r in retrieval}
    missing = [q for q in questions["id"] if q not in by_id]
    if missing:
        raise ValueError(f"retrieval results lack question id(s) {', '.join(missing[:5])}")
    gateway = None
    if variant["backend"] == "llm":
        gateway = LLMGateway(Path(cache_dir) / "llm.sqlite", llm_cfg.get("mode", "live"),
                             llm_cfg.get("timeout_s", 120), llm_cfg.get("max_retries", 3), llm_cfg.get("api_base"))
    out = []
    telemetry = telemetry if telemetry is not None else []
    for q in tqdm(list(questions.itertuples(index=False)), desc=f"answer ({variant['backend']})", disable=not progress):
        hits = by_id[q.id]["hits"]
        shown = by_id[q.id].get("context") or hits  # the expanded snippets, when retrieval made them
        record = {"id": q.id, "question": q.question, "answer_unit": q.answer_unit}
        if gateway is None:
            ans = answer_question(q.question, q.answer_unit, hits, variant.get("extractive"))
        else:
            ans, call = answer_with_llm(gateway, variant["model"], variant.get("params", {}),
                                        variant.get("prompt", "context_first"), q.question, q.answer_unit,
                                        shown, known_docs)
            telemetry.append({"id": q.id, **call.pop("telemetry")})
            record["call"] = call
            record["failure"] = call["error"] if not call["ok"] else ""
        record.update(asdict(ans))
        out.append(record)
    return out
