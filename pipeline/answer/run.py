"""The answer stage: retrieval results + questions -> one answer record per question.

Backends are data (``answering.<variant>.backend``), each registered with its answer function in
pipeline/registry/answer_backends.py: ``extractive`` (offline, no model download, the default) or ``llm``
(any litellm model through the cached gateway, including the local llama.cpp server). Every question
gets a record; an LLM question that failed carries ``failure`` with the reason and counts in the scores and the leaderboard.

LLM answering is concurrent: every (question, sample) pair is a task in a thread pool of the
model's ``concurrency`` (:mod:`pipeline.llm.pool`; its blank-retry chain stays in order inside the
task); samples are voted in sample order and records come out in question order, so the output is the same
whatever order the replies arrive in. A non-retryable error (auth, permission, unknown model,
bad request) stops the job: calls not yet started are cancelled, calls in flight finish and
are stored, then :class:`FatalLLMError` is raised.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from pipeline.answer.extractive import answer_question
from pipeline.answer.llm_answer import Ask, answer_once, combine_samples
from pipeline.llm.gateway import LLMGateway
from pipeline.llm.pool import FatalLLMError, map_calls
from pipeline.llm_models import LLMSpec
from pipeline.registry.answer_backends import ExtractiveSpec, LLMAnswerSpec, VariantSpec
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


def answer_extractive(questions: pd.DataFrame, by_id: dict, spec: ExtractiveSpec, job: AnswerJob) -> list[dict]:
    """The ``extractive`` backend: rule-based, offline (pipeline/answer/extractive.py)."""
    return [
        {
            "id": q.id,
            "question": q.question,
            "answer_unit": q.answer_unit,
            **asdict(answer_question(q.question, q.answer_unit, by_id[q.id]["hits"], spec.extractive)),
        }
        for q in tqdm(list(questions.itertuples(index=False)), desc="answer (extractive)", disable=not job.progress)
    ]


def answer_llm(questions: pd.DataFrame, by_id: dict, spec: LLMAnswerSpec, job: AnswerJob) -> list[dict]:
    """The ``llm`` backend: KohakuRAG's prompts through the cached gateway, samples voted."""
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
