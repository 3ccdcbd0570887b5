"""The LLM answering backend: KohakuRAG's prompt, JSON answer, defensive parsing.

Context snippets are rendered ``[ref_id=<doc>] <text>`` and joined by ``---`` lines (the
granularity the scorer wants). Parsing takes the span from the first ``{`` to the last
``}``; anything unparseable becomes a recorded failure, not a silent blank.
"""
from __future__ import annotations

import json
import re
from importlib import resources

from pipeline.answer.llm import LLMGateway, LLMRequest
from pipeline.answer.record import Answer, blank_answer

PROMPTS = ("context_first", "question_first")


def render_context(hits: list[dict], max_chars: int = 12000) -> str:
    """Unique contexts in rank order, each once, within a character budget. ``hits`` may be the
    retrieval record's ``context`` snippets (expanded, deduplicated) or its raw hits."""
    seen, parts, used = set(), [], 0
    for h in hits:
        cid = h.get("context_id", h["node_id"])
        if cid in seen:
            continue
        seen.add(cid)
        snippet = f"[ref_id={h['doc_id']}] {h.get('context') or h['text']}"
        if parts and used + len(snippet) > max_chars:
            break
        parts.append(snippet)
        used += len(snippet)
    return "\n---\n".join(parts)


def build_messages(prompt: str, question: str, answer_unit: str, hits: list[dict]) -> list[dict]:
    if prompt not in PROMPTS:
        raise ValueError(f"prompt '{prompt}' is not one of {PROMPTS}")
    template = resources.files("pipeline.answer").joinpath(f"prompts/{prompt}.txt").read_text()
    text = template.format(context=render_context(hits), question=question, answer_unit=answer_unit)
    return [{"role": "user", "content": text}]


def parse_answer(text: str, question: str, known_docs: set[str]) -> Answer:
    """The JSON object in ``text`` as an :class:`Answer`; raise ValueError when there is none."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in response")
    data = json.loads(text[start : end + 1])
    value = str(data.get("answer_value", "")).strip()
    refs = data.get("ref_id", [])
    if isinstance(refs, str):
        refs = [] if refs.strip().lower() in ("", "is_blank") else [refs]
    refs = [re.sub(r"^ref_id=", "", str(r)).strip() for r in refs]
    refs = [r for r in refs if r in known_docs]
    value = normalise_value(value, question)
    if not value or value.lower() == "is_blank" or not refs:
        return blank_answer(str(data.get("explanation", "")) or "the model abstained")
    return Answer(str(data.get("answer", value)), value, sorted(dict.fromkeys(refs)),
                  str(data.get("explanation", "")).strip() or "model answer", "is_blank", False)


def normalise_value(value: str, question: str) -> str:
    """KohakuRAG's post-normalisation: True/False -> 1/0; 'a-b' / 'a to b' -> [a,b]."""
    if question.strip().lower().startswith("true or false"):
        low = value.lower()
        if "true" in low:
            return "1"
        if "false" in low:
            return "0"
    nums = re.findall(r"(?<![\d.])-?\d+(?:\.\d+)?", value)  # the dash in "80-90" is not a minus
    if len(nums) == 2 and re.search(r"\d\s*(?:-|–|—|to)\s*\d", value) and not value.startswith("["):
        return f"[{float(nums[0])},{float(nums[1])}]"
    return value.replace(",", "") if re.fullmatch(r"-?[\d,]+(?:\.\d+)?", value) else value


def answer_with_llm(gateway: LLMGateway, model: str, params: dict, prompt: str, question: str,
                    answer_unit: str, hits: list[dict], known_docs: set[str]) -> tuple[Answer, dict]:
    """One LLM answer plus the call record (raw text, tokens, cost, failure reason) and its run
    telemetry (latency, cache hit), kept apart: result files must be identical on a rerun, and a
    cached rerun has other latencies."""
    request = LLMRequest(model=model, messages=build_messages(prompt, question, answer_unit, hits),
                         params=params, seed=params.get("seed"))
    result = gateway.complete(request)
    call = {"raw": result.text, "ok": result.ok, "error": result.error,
            "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
            "cost_usd": result.cost_usd, "telemetry": {"cached": result.cached, "latency_s": result.latency_s}}
    if not result.ok:
        return blank_answer(f"LLM call failed: {result.error}"), call
    try:
        return parse_answer(result.text, question, known_docs), call
    except (ValueError, json.JSONDecodeError) as exc:
        call["ok"], call["error"] = False, f"unparseable answer: {exc}"
        return blank_answer(f"unparseable LLM answer: {exc}"), call
