"""Tests' way into the answer stage from dicts: the variant parsed by its backend's spec and the job's
gateway settings parsed once, as the ``answer`` verb does (pipeline/verbs/answer.py); and one question
answered by the LLM backend through the stage's own two steps."""
from __future__ import annotations

from pipeline.answer.llm_answer import Ask, answer_once, combine_samples
from pipeline.answer.run import AnswerJob, answer_split
from pipeline.answer.llm_answer import LLMAnswerSpec
from pipeline.registry.answer_backends import variant_spec
from pipeline.llm_models import LLMSpec


def answer_dicts(retrieval, questions, variant: dict, llm: dict, cache_dir, known_docs, **job) -> list[dict]:
    return answer_split(retrieval, questions, variant_spec("", variant),
                        AnswerJob(LLMSpec.from_dict(llm), cache_dir, known_docs, **job))


def llm_spec(model: str | None = None, **keys) -> LLMAnswerSpec:
    """An ``llm`` variant's spec with the schema's defaults (``model`` resolved when given)."""
    return LLMAnswerSpec.from_dict("", {"backend": "llm", **({"model": model} if model else {}), **keys})


def answer_with_llm(gateway, settings, question: str, answer_unit: str, hits: list[dict], known_docs: set[str]):
    """(voted answer, call record) of ``settings.samples`` samples: :func:`answer_once` per sample, one
    after another instead of in the stage's thread pool, then :func:`combine_samples`."""
    samples = [answer_once(gateway, settings, Ask(question, answer_unit, hits), known_docs, sample)
               for sample in range(settings.samples)]
    return combine_samples(settings, samples)
