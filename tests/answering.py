"""Tests' way into the answer stage from dicts: the variant parsed by its backend's spec and the job's
gateway settings parsed once, as the ``answer`` verb does (pipeline/verbs/answer.py)."""
from __future__ import annotations

from pipeline.answer.run import AnswerJob, answer_split
from pipeline.answer_backends import LLMAnswerSpec, variant_spec
from pipeline.specs import LLMSpec


def answer_dicts(retrieval, questions, variant: dict, llm: dict, cache_dir, known_docs, **job) -> list[dict]:
    return answer_split(retrieval, questions, variant_spec("", variant),
                        AnswerJob(LLMSpec.from_dict(llm), cache_dir, known_docs, **job))


def llm_spec(model: str | None = None, **keys) -> LLMAnswerSpec:
    """An ``llm`` variant's spec with the schema's defaults (``model`` resolved when given)."""
    return LLMAnswerSpec.from_dict("", {"backend": "llm", **({"model": model} if model else {}), **keys})
