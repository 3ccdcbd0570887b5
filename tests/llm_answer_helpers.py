"""Tests' way to answer one question with the LLM backend: the answer stage's own two steps
(pipeline/answer/run.py), :func:`answer_once` per sample then :func:`combine_samples`, one sample after
another instead of in the stage's thread pool."""
from __future__ import annotations

from pipeline.answer.llm_answer import Ask, answer_once, combine_samples


def answer_with_llm(gateway, settings, question: str, answer_unit: str, hits: list[dict], known_docs: set[str]):
    """(voted answer, call record) of ``settings.samples`` samples."""
    samples = [answer_once(gateway, settings, Ask(question, answer_unit, hits), known_docs, sample)
               for sample in range(settings.samples)]
    return combine_samples(settings, samples)
