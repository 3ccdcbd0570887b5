"""The registry of answering backends: what ``answering.<name>.backend`` may name.

A backend is an answer function plus what the rest of the pipeline must know about it (does it
call an LLM: then the job takes an ``llm_api`` slot, needs a model and is held to the failure-rate
check). The answer stage (pipeline/answer/run.py) calls the function; the config layer fills the
schema's ``enum:`` from :func:`names`. Adding a backend is one :func:`register` call (a toy one:
tests/answer/test_answer_backends.py). ``ensemble`` is registered without a function: its answers
are its members' voted by the ``ensemble`` rule (pipeline/answer/ensemble.py).

Functions are named by dotted path (``"module:function"``) so that validating a config imports no
stage; a test may register a callable directly. A backend kept outside the package registers in its
own module, named in ``WATTBENCH_ANSWER_BACKENDS`` (comma-separated; Snakemake's jobs inherit it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.registry import Registry

# answer(questions: DataFrame, by_id: {question id: retrieval row}, spec: AnswerSpec, job: AnswerJob)
#   -> one record per question, in question order (pipeline/answer/run.py)
AnswerFn = Callable[..., list]


@dataclass(frozen=True)
class AnswerBackend:
    name: str
    answer: str | AnswerFn | None  # "module:function", a callable, or None (ensemble: voted members)
    calls_llm: bool = False

    def function(self) -> AnswerFn:
        if self.answer is None:
            raise ValueError(f"answering backend '{self.name}' has no answer function (its rule votes its members)")
        if callable(self.answer):
            return self.answer
        module, _, attr = self.answer.partition(":")
        fn: Any = getattr(importlib.import_module(module), attr)
        return fn


EXTRA_ENV = "WATTBENCH_ANSWER_BACKENDS"  # more modules that register backends, comma-separated
BACKENDS: Registry[AnswerBackend] = Registry("answering backend", EXTRA_ENV)
register = BACKENDS.register
unregister = BACKENDS.unregister
get = BACKENDS.get
names = BACKENDS.names


register(AnswerBackend("extractive", "pipeline.answer.run:answer_extractive"))
register(AnswerBackend("llm", "pipeline.answer.run:answer_llm", calls_llm=True))
register(AnswerBackend("ensemble", None))


def calls_llm(backend: str) -> bool:
    """Does ``backend`` call an LLM (a model to check, an ``llm_api`` slot, a failure rate, a cost)?"""
    return get(backend).calls_llm
