"""The built-in answering backends, registered here, where the import contracts see what they name
(pipeline/register_builtins.py imports this module; a backend outside the package registers in its own module).

Each answer function is imported when it is first called, so validating a config (the Snakefile, every
job's driver) loads no answering code: pandas, the LLM gateway and the prompts come with the answer job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.registry.answer_backends import AnswerBackend, EnsembleSpec, ExtractiveSpec, LLMAnswerSpec, register

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.answer.run import AnswerJob


def answer_extractive(questions: pd.DataFrame, by_id: dict, spec: ExtractiveSpec, job: AnswerJob) -> list[dict]:
    from pipeline.answer.run import answer_extractive as answer

    return answer(questions, by_id, spec, job)


def answer_llm(questions: pd.DataFrame, by_id: dict, spec: LLMAnswerSpec, job: AnswerJob) -> list[dict]:
    from pipeline.answer.run import answer_llm as answer

    return answer(questions, by_id, spec, job)


def llm_prompt_tokens(spec: LLMAnswerSpec, model: str, question: str, unit: str, attempt: int) -> int:
    from pipeline.answer.llm_answer import prompt_tokens

    return prompt_tokens(spec, model, question, unit, attempt)


EXTRACTIVE = register(AnswerBackend("extractive", answer_extractive, ExtractiveSpec, shows_context=False))
LLM = register(AnswerBackend("llm", answer_llm, LLMAnswerSpec, calls_llm=True, prompt_tokens=llm_prompt_tokens))
ENSEMBLE = register(AnswerBackend("ensemble", None, EnsembleSpec, votes_members=True))
