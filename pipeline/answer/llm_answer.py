"""The LLM answering backend: KohakuRAG's prompts, structured JSON answers, abstention with
deeper retries, and N-sample ensembles — every knob a field of the answering variant.

Context snippets are rendered ``[ref_id=<doc>] <text>`` and joined by ``---`` lines (the
granularity the scorer wants). The reply is JSON (schema-enforced where the provider can:
``response_format``), parsed defensively; an unparseable reply is a recorded failure, not a
silent blank. An answer is blank when its value is ``is_blank`` or it cites no known
document (its ``is_blank`` flag decides nothing: :func:`parse_answer`); then attempt i (0-based)
shows ``context_k·(i+1)`` snippets, up to ``max_retries``.

LLM answering is concurrent: every (question, sample) pair is a task in a thread pool of the
model's ``concurrency`` (:mod:`pipeline.llm.pool`; its blank-retry chain stays in order inside the
task); samples are voted in sample order and records come out in question order, so the output is the same
whatever order the replies arrive in. A non-retryable error (auth, permission, unknown model,
bad request) stops the job: calls not yet started are cancelled, calls in flight finish and
are stored, then :class:`FatalLLMError` is raised.

The ``llm`` answering backend is this module: its keys (:class:`LLMAnswerSpec`), its answer function
(:func:`answer_llm`), what the estimate prices its prompts by (:func:`prompt_tokens`) and its
registration, the last line.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.answer.normalise import is_true_false, normalise_value, parse_refs
from pipeline.answer.record import Answer, blank_answer
from pipeline.answer.vote import VOTE, VoteConfig, vote
from pipeline.config_schema import key, key_field
from pipeline.llm.gateway import LLMGateway, LLMRequest, LLMResult
from pipeline.llm.limits import text_tokens
from pipeline.llm.pool import FatalLLMError, map_calls
from pipeline.llm.replies import repair_json, schema_problem
from pipeline.llm_models import serving_kind
from pipeline.registry.answer_backends import AnswerBackend, LLMCallsSpec, register

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.answer.run import AnswerJob

PROMPTS = ("context_first", "question_first")  # KohakuRAG's prompt orders (pipeline/answer/prompts/)
CONTEXT_CAP_CHARS = 12000  # the prompt's context budget (characters)


@dataclass(frozen=True, kw_only=True)
class LLMAnswerSpec(LLMCallsSpec):
    """``backend: llm``: KohakuRAG's prompts, structured answers, blank-retries, samples voted (read here,
    its model resolved)."""

    prompt: str = key("the prompt's order", choices=PROMPTS, default="context_first")
    context_k: int | None = key(
        "snippets in the prompt at attempt 0 (default: all, within the prompt's cap)",
        type="integer",
        schema={"minimum": 1},
        field_default=None,
    )
    snippet_chars: int | None = key(
        "each snippet cut to this many characters around its match",
        type="integer",
        schema={"minimum": 50},
        field_default=None,
    )
    structured: bool = key("send the JSON schema as response_format", type="boolean", default=True)
    vote: dict = key_field(VOTE, field_factory=dict)  # how samples are voted (pipeline/answer/vote.py)


@cache
def template(name: str) -> str:
    if name not in PROMPTS:
        raise ValueError(f"prompt '{name}' is not one of {PROMPTS}")
    return resources.files("pipeline.answer").joinpath(f"prompts/{name}.txt").read_text()


@cache
def answer_schema_text() -> str:
    return resources.files("pipeline.answer").joinpath("prompts/answer.schema.json").read_text()


def answer_schema(doc_ids: list[str]) -> dict:
    """The reply schema; ``ref_id`` items restricted to the documents shown (a small model
    otherwise invents ids), in key order explanation-first (it acts as chain of thought). The
    ``maxLength`` bounds matter: without them the 270M model filled the explanation up to
    ``max_tokens`` (255 tokens, measured) and the reply was cut before ``answer_value``."""
    schema = json.loads(answer_schema_text())
    if doc_ids:
        schema["properties"]["ref_id"]["items"] = {"enum": sorted(doc_ids) + ["is_blank"]}
    return schema


@cache
def reply_schema() -> dict:
    """What a reply must satisfy to be read as an answer (the gateway retries one that does not,
    then records it as a failure). It is ``answer.schema.json`` as a contract, not as a
    generation constraint: the ``maxLength``/``maxItems`` bounds only stop a small model
    rambling (a grammar enforces them where the schema is sent), ``answer_value`` may be what
    the prompt's value rule asks for in free-form replies (a number, a name, ``[lower,upper]``),
    ``ref_id`` may be one id as a string (:func:`parse_refs` reads both) and only the two keys an
    answer is read from are required (``is_blank`` follows from ``answer_value``)."""
    schema = json.loads(answer_schema_text())
    props = schema["properties"]
    for prop in props.values():
        prop.pop("maxLength", None)
        prop.pop("maxItems", None)
    scalar_or_list = ["string", "number", "boolean", "array", "null"]
    props["answer"] = {"type": scalar_or_list}
    props["answer_value"] = {"type": scalar_or_list}
    props["ref_id"] = {"type": ["array", "string", "null"], "items": {"type": "string"}}
    schema["required"] = ["answer_value", "ref_id"]
    return schema


def reply_problem(text: str) -> str | None:
    """The gateway's ``validate`` hook for answers: JSON (repaired) that fits :func:`reply_schema`."""
    return _reply_check()(text)


@cache
def _reply_check():
    return schema_problem(reply_schema())


def response_format(model: str, schema: dict) -> dict:
    """As ``model``'s kind of serving asks for it (:mod:`pipeline.llm.serving`): llama.cpp's server takes
    ``json_object`` + ``schema`` (enforced by a grammar); OpenAI-style providers take ``json_schema``."""
    if serving_kind(model).json_format == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "wattbot_answer", "schema": schema}}


def _window(text: str, focus: str, max_chars: int) -> str:
    """At most ``max_chars`` of ``text``, centred on ``focus`` (the matched sentence)."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    at = max(0, text.find(" ".join(focus.split())[:80]))
    start = max(0, min(at - max_chars // 3, len(text) - max_chars))
    return ("…" if start else "") + text[start : start + max_chars].strip() + "…"


def select_snippets(hits: list[dict], k: int | None) -> list[dict]:
    """The first ``k`` distinct contexts in rank order (all when k is None)."""
    seen, out = set(), []
    for h in hits:
        cid = h.get("context_id", h["node_id"])
        if cid in seen:
            continue
        seen.add(cid)
        out.append(h)
        if k is not None and len(out) == k:
            break
    return out


def render_context(hits: list[dict], max_chars: int = CONTEXT_CAP_CHARS, snippet_chars: int | None = None) -> str:
    """Unique contexts in rank order, each once, within a character budget. ``hits`` may be the
    retrieval record's ``context`` snippets (expanded, deduplicated) or its raw hits."""
    parts: list[str] = []
    used = 0
    for h in select_snippets(hits, None):
        body = h.get("context") or h["text"]
        if snippet_chars:
            body = _window(body, h["text"], snippet_chars)
        snippet = f"[ref_id={h['doc_id']}] {body}"
        if parts and used + len(snippet) > max_chars:
            break
        parts.append(snippet)
        used += len(snippet)
    return "\n---\n".join(parts)


def build_messages(
    prompt: str, question: str, answer_unit: str, hits: list[dict], snippet_chars: int | None = None
) -> list[dict]:
    kind = "true_false" if is_true_false(question) else "name" if answer_unit == "is_blank" else "number"
    rule = {
        "true_false": 'answer_value is "1" if the statement is true, "0" if false.',
        "name": "answer_value is the name or term asked for, never a number.",
        "number": f"answer_value is a number in {answer_unit}: no commas, no units, a range as [lower,upper].",
    }
    text = template(prompt).format(
        context=render_context(hits, snippet_chars=snippet_chars),
        question=question,
        answer_unit=answer_unit,
        value_rule=rule[kind],
    )
    return [{"role": "user", "content": text}]


def parse_answer(text: str, question: str, known_docs: set[str], answer_unit: str = "") -> Answer:
    """The JSON answer in ``text`` as an :class:`Answer`; raise ValueError when there is none.

    The one rule for a contradictory reply (#48): the value and the citations decide, the ``is_blank``
    flag does not. A reply answers when its ``answer_value`` is a value and it cites a known document;
    it is blank when the value is ``is_blank`` or it cites none, whatever its flag says. The prompt asks
    an abstention to say so three times (value ``is_blank``, ``ref_id`` empty, flag true) and the schema
    asks for the flag last, after the value and the evidence: a reply that gives both and then sets the
    flag (Qwen2.5-Coder-0.5B does on every reply, tests/answer/test_contradictory_replies.py) has answered
    in two of the three places, and a flag of false does not make an answer of a reply that gives neither."""
    data = repair_json(text)
    value = normalise_value(data.get("answer_value", ""), question, answer_unit)
    refs = [r for r in parse_refs(data.get("ref_id", [])) if r in known_docs]
    explanation = str(data.get("explanation", "")).strip()
    if value == "is_blank" or not refs:
        why = "the model abstained" if value == "is_blank" else "no known document cited"
        return blank_answer(f"{why}: {explanation}" if explanation else why)
    return Answer(
        str(data.get("answer") or value).strip(),
        value,
        sorted(dict.fromkeys(refs)),
        explanation or "model answer",
        "is_blank",
        False,
    )


@dataclass(frozen=True)
class Ask:
    """One question as a call sees it: its words, the unit its answer is in, the hits it may show."""

    question: str
    answer_unit: str
    hits: list[dict]


def prompt_tokens(spec: LLMAnswerSpec, model: str, question: str, unit: str, attempt: int) -> int:
    """Tokens of the prompt (and schema) ``spec`` sends for this question at ``attempt``, its snippets
    filled to ``snippet_chars`` (the prompt's cap when unset): what the estimate prices the backend by."""
    return _prompt_tokens(
        spec.prompt, spec.context_k, spec.snippet_chars, spec.structured, model, question, unit, attempt
    )


@cache  # runs that differ only by model or seed share their prompts
def _prompt_tokens(*key) -> int:
    prompt, context_k, snippet_chars, structured, model, question, unit, attempt = key
    chars = snippet_chars or CONTEXT_CAP_CHARS
    k = context_k * (attempt + 1) if context_k else CONTEXT_CAP_CHARS // chars + 1
    body = ("lorem ipsum " * (chars // 12 + 1))[:chars]
    filler = [{"node_id": f"n{i}", "doc_id": f"doc{i % 30}", "text": body, "context": body} for i in range(k)]
    messages = build_messages(prompt, question, unit, filler, snippet_chars)
    schema = json.dumps(response_format(model, answer_schema([]))) if structured else ""
    return sum(text_tokens(m["content"]) for m in messages) + text_tokens(schema)


def _call_record(result: LLMResult, attempt: int, sample: int, error: str, seed: int | None) -> dict:
    """One call as the record keeps it; ``seed`` only where the request carried one (a sampled
    variant's, or an explicit ``params.seed``), so records of seedless variants stay what they were."""
    return {
        "sample": sample,
        **({"seed": seed} if seed is not None else {}),
        "attempt": attempt,
        "raw": result.text,
        "ok": not error,
        "error": error,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "cost_usd": result.cost_usd,
        "fatal": result.fatal,
        "telemetry": call_telemetry(result),
    }


def call_telemetry(result: LLMResult) -> dict:
    """Run-dependent numbers of one call (never in a record): cache hit, latency of its last try,
    tries, and the generation speed that latency implies (tokens/s; None for a cache hit)."""
    live = not result.cached and result.latency_s > 0
    return {
        "cached": result.cached,
        "latency_s": result.latency_s,
        "tries": result.attempts,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "tok_s": round(result.completion_tokens / result.latency_s, 2) if live else None,
    }


def telemetry_summary(rows: list[dict]) -> dict:
    """One job's LLM telemetry in a line: calls, cache hits, tries, tokens and seconds of the live
    calls, and generation tokens/s over them (completion tokens / seconds of their last tries)."""
    live = [r for r in rows if not r.get("cached")]
    seconds = sum(float(r.get("latency_s") or 0) for r in live)
    counted = all("completion_tokens" in r for r in live)  # telemetry written before tokens were recorded: unknown
    completion = sum(int(r.get("completion_tokens") or 0) for r in live) if counted else None
    return {
        "calls": len(rows),
        "cached": len(rows) - len(live),
        "tries": sum(int(r.get("tries") or 0) for r in live),
        "prompt_tokens": sum(int(r.get("prompt_tokens") or 0) for r in live) if counted else None,
        "completion_tokens": completion,
        "call_s": round(seconds, 1),
        "tok_s": round(completion / seconds, 1) if seconds and completion is not None else None,
    }


def answer_once(
    gateway: LLMGateway, s: LLMAnswerSpec, ask: Ask, known_docs: set[str], sample: int = 0
) -> tuple[Answer, list[dict]]:
    """One sample with its blank-retry loop: the answer and one record per call made (``s``: its
    model resolved). Sample i of a sampled variant asks with seed ``params.seed + i`` (0 when
    unset), so sample 0 is the very request of a one-sample variant with that seed: a control that
    is one of the samples comes from the cache."""
    question, answer_unit, hits = ask.question, ask.answer_unit, ask.hits
    assert s.model is not None  # resolved by the caller (LLMAnswerSpec.with_model)
    calls: list[dict] = []
    ans: Answer | None = None
    for attempt in range(s.max_retries + 1):
        shown = select_snippets(hits, s.context_k * (attempt + 1) if s.context_k else None)
        params = dict(s.params)
        if s.structured:
            params["response_format"] = response_format(
                s.model, answer_schema(sorted({h["doc_id"] for h in shown} & known_docs))
            )
        seed = params.pop("seed", None)
        if s.samples > 1:
            seed = (seed or 0) + sample
        request = LLMRequest(
            model=s.model,
            messages=build_messages(s.prompt, question, answer_unit, shown, s.snippet_chars),
            params=params,
            seed=seed,
            sample=sample,
        )
        result = gateway.complete(request, validate=reply_problem)
        error = result.error
        if result.ok:
            try:
                ans = parse_answer(result.text, question, known_docs, answer_unit)
            except ValueError as exc:
                error = f"unparseable answer: {exc}"
        calls.append(_call_record(result, attempt, sample, error, seed))
        if result.fatal:  # no retry can fix it: the caller fails the job
            return blank_answer(f"LLM failure: {error}"), calls
        if error:
            ans = blank_answer(f"LLM failure: {error}")
        elif ans is not None and not ans.is_blank:
            break
    assert ans is not None  # max_retries >= 0: the loop ran at least once and set it
    return ans, calls


def combine_samples(settings: LLMAnswerSpec, samples: list[tuple[Answer, list[dict]]]) -> tuple[Answer, dict]:
    """Vote the samples (in sample order, whatever order they were made in) and build the call
    record: summed tokens and cost, every call's raw reply and error, and ``failure`` — the
    reason when no sample got a usable reply (the question then counts as a failure, it is never
    dropped). ``unanswered`` counts samples the provider left without any reply (transport,
    rate-limit, server errors after all retries; not a malformed reply the model did give).
    Latency and cache hits are kept apart in ``telemetry``: result files must be identical on a rerun.
    A variant of two samples or more also records each sample's own answer and seed
    (``sample_answers``: what the ensemble-size curve votes subsets of, pipeline/answer/ensemble.py)."""
    answers, calls = [], []
    for ans, sample_calls in samples:
        calls.extend(sample_calls)
        if sample_calls[-1]["ok"]:
            answers.append(ans)
    errors = [c["error"] for c in calls if c["error"]]
    final = vote(answers, VoteConfig(**settings.vote)) if answers else blank_answer(f"LLM failure: {errors[-1]}")
    record = {
        "ok": bool(answers),
        "error": "" if answers else errors[-1],
        "n_calls": len(calls),
        "failed_calls": len(errors),
        "samples_used": len(answers),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "cost_usd": round(sum(c["cost_usd"] or 0 for c in calls), 8),
        "raw": calls[-1]["raw"],
        "calls": [{k: v for k, v in c.items() if k not in ("telemetry", "fatal")} for c in calls],
        "telemetry": [c["telemetry"] for c in calls],
    }
    if settings.samples > 1:
        record["sample_answers"] = [
            {"sample": i, "seed": sample_calls[-1].get("seed"), "ok": sample_calls[-1]["ok"], **asdict(ans)}
            for i, (ans, sample_calls) in enumerate(samples)
        ]
    return final, record


def unanswered(record: dict) -> bool:
    """Some sample of the question ended without any reply from the provider (transport,
    rate-limit, server errors after all retries), as opposed to the model's own malformed words:
    such a question counts against ``llm.max_failure_rate`` (its vote lacks a sample a rerun would add)."""
    last = {c["sample"]: c for c in record["calls"]}
    return any(not c["ok"] and not c["raw"] for c in last.values())


# --------------------------------------------------------------------------------------- the backend


def answer_llm(questions: pd.DataFrame, by_id: dict, spec: LLMAnswerSpec, job: AnswerJob) -> list[dict]:
    """The ``llm`` backend's answer function: KohakuRAG's prompts through the cached gateway, samples voted."""
    spec = spec.with_model(job.llm.model)
    if job.gateway is not None:
        return _answer_llm(job.gateway, spec, questions, by_id, job)
    with LLMGateway(Path(job.cache_dir) / "llm.sqlite", job.llm, variant=spec.name) as own:
        return _answer_llm(own, spec, questions, by_id, job)


def _answer_llm(
    gateway: LLMGateway, spec: LLMAnswerSpec, questions: pd.DataFrame, by_id: dict, job: AnswerJob
) -> list[dict]:
    rows = list(questions.itertuples(index=False))
    tasks = [(i, s) for i in range(len(rows)) for s in range(spec.samples)]
    model = str(spec.model)
    settings = gateway.settings.resolve(model)  # the model's ModelSpec: its concurrency sizes the pool

    def one(task: tuple[int, int]):
        q = rows[task[0]]
        return answer_once(gateway, spec, Ask(q.question, q.answer_unit, by_id[q.id]["hits"]), job.known_docs, task[1])

    done = map_calls(
        settings,
        one,
        tasks,
        fatal=lambda out: any(c["fatal"] for c in out[1]),
        bar=f"answer (llm {model})" if job.progress else None,
    )
    fatal = [c["error"] for d in done if d for c in d[1] if c["fatal"]]
    if fatal:
        raise FatalLLMError(f"model {model}: {fatal[0]} (not retried; every reply received is cached)")
    samples = [d for d in done if d is not None]  # all of them: a task is skipped only after a fatal error
    out = []
    for i, q in enumerate(rows):
        ans, call = combine_samples(spec, samples[i * spec.samples : (i + 1) * spec.samples])
        job.telemetry.extend({"id": q.id, **t} for t in call.pop("telemetry"))
        out.append(
            {
                "id": q.id,
                "question": q.question,
                "answer_unit": q.answer_unit,
                "call": call,
                "failure": call["error"],
                **asdict(ans),
            }
        )
    return out


LLM = register(AnswerBackend("llm", answer_llm, LLMAnswerSpec, calls_llm=True, prompt_tokens=prompt_tokens))
