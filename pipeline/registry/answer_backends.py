"""The registry of answering backends: what ``answering.<name>.backend`` may name, and what each one reads.

A backend is an answer function plus what the rest of the pipeline must know about it: its spec (a
frozen dataclass whose fields are the only keys its variants may carry: parsed once, an unknown key
is an error naming it), whether it calls an LLM (then the job takes an ``llm_api`` slot, needs a
model, is held to the failure-rate check and is priced by its own ``prompt_tokens`` before a run),
whether its answers are other variants' voted (``ensemble``: its own DAG rule) and what attribution counts
as read. The answer stage (pipeline/answer/run.py) calls the function; the config layer fills the schema's
``enum:`` from :func:`names`. Here: the specs every backend's spec builds on (:class:`VariantSpec`, and
:class:`LLMCallsSpec` for one that calls an LLM: what the estimate and the LLM work plan read).

Each backend is one module beside its code, holding its spec, its answer function and its :func:`register`
call: the built-ins' in pipeline/answer/ (``extractive.py``, ``llm_answer.py``, ``ensemble.py``), which
pipeline/answer/backends.py imports and a driver imports that (pipeline/register_builtins.py): this module,
on the shared floor, never names a stage. A backend kept outside the package is a plugin: an entry point in
group ``wattbench.answer_backends`` naming its module (pipeline/registry/base.py; toys:
tests/answer/toy_backend.py, and the backend ``echo`` of tests/answer/test_answer_backends.py, which calls an LLM).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Self, TypeVar

from pipeline.config_schema import (
    ConfigError,
    ConfigTable,
    ConfigTree,
    key,
    parse_spec,
)
from pipeline.registry.base import Registry

S = TypeVar("S", bound="VariantSpec")


@dataclass(frozen=True, kw_only=True)
class VariantSpec:
    """``answering.<name>``: the keys every backend takes. A backend with keys of its own subclasses it."""

    name: str  # the variant's name (not a key)
    backend: str = key("a registered answering backend (pipeline/answer/backends.py)", type="string")
    retrieval: str | None = key(  # None only where a stage function is called without the config
        "the retrieval variant it reads (required; an ensemble's default: its first member's)",
        type="string",
        field_default=None,
    )
    splits: tuple[str, ...] | None = key(
        "the splits it answers (default: all)",
        type="array",
        schema={"minItems": 1, "items": {"type": "string"}},
        field_default=None,
    )

    @classmethod
    def keys(cls) -> set[str]:
        return {f.name for f in fields(cls)} - {"name"}

    @classmethod
    def from_dict(cls: type[S], name: str, v: ConfigTable) -> S:
        """The spec of variant ``name``: its declared defaults under the keys it gives; a key the backend
        does not take, or a required one missing, is an error naming it."""
        spec = parse_spec(cls, v, f"answering.{name}", name=name)
        return dataclasses.replace(spec, splits=tuple(spec.splits) if spec.splits else None)

    @classmethod
    def resolve(cls, name: str, variant: ConfigTree, cfg: ConfigTree) -> None:
        """Defaults that depend on other entries, written into the (hashed) variant; cross-checks."""
        if "kohaku_compat" in (variant.get("vote") or {}):
            raise ConfigError.at(f"answering.{name}.vote.kohaku_compat", "only an ensemble votes KohakuRAG's way")


@dataclass(frozen=True, kw_only=True)
class LLMCallsSpec(VariantSpec):
    """What every backend that calls an LLM takes: the model, its request parameters, samples and
    blank-retries (what the estimate counts calls and output tokens by)."""

    model: str | None = key("the model it calls (default: llm.model)", type="string", field_default=None)
    params: dict = key("the request's parameters (temperature, max_tokens, ...)", type="object", default={})
    max_retries: int = key(
        "blank answer: retry with context_k * (attempt + 1)",
        type="integer",
        default=0,
        schema={"minimum": 0, "maximum": 5},
    )
    samples: int = key("samples per question, voted", type="integer", default=1, schema={"minimum": 1, "maximum": 15})

    def resolved_model(self, default_model: str | None) -> str | None:
        return self.model or default_model

    def with_model(self, default_model: str | None) -> Self:
        """This spec with its model resolved (``llm.model`` when it names none)."""
        model = self.resolved_model(default_model)
        if not model:
            raise ConfigError.at(f"answering.{self.name}.model", "required when backend is llm (or set llm.model)")
        return dataclasses.replace(self, model=model)


# answer(questions: DataFrame, by_id: {question id: retrieval row}, spec, job: AnswerJob)
#   -> one record per question, in question order (pipeline/answer/run.py)
AnswerFn = Callable[..., list]
# prompt_tokens(spec, model, question, answer_unit, attempt) -> tokens of the prompt that call sends
PromptTokensFn = Callable[..., int]


@dataclass(frozen=True)
class AnswerBackend:
    name: str
    answer: AnswerFn | None  # None: votes_members (no function)
    spec: type[VariantSpec] = VariantSpec  # its keys
    calls_llm: bool = False
    prompt_tokens: PromptTokensFn | None = None  # calls_llm: what the estimate prices one call's prompt by
    votes_members: bool = False  # its answers are other variants' voted by the ensemble rule
    shows_context: bool = True  # it reads retrieval's expanded context (False: the raw hits; attribution)

    def function(self) -> AnswerFn:
        if self.answer is None:
            raise ValueError(f"answering backend '{self.name}' has no answer function (its rule votes its members)")
        return self.answer

    def prompt_tokens_fn(self) -> PromptTokensFn:
        if not self.calls_llm or self.prompt_tokens is None:
            raise ValueError(f"answering backend '{self.name}' calls no LLM or names no prompt_tokens to price it by")
        return self.prompt_tokens


GROUP = "wattbench.answer_backends"  # the entry-point group of backends kept outside the package (plugins)
BACKENDS: Registry[AnswerBackend] = Registry("answering backend", GROUP, builtins="pipeline.answer.backends")
register = BACKENDS.register
unregister = BACKENDS.unregister
get = BACKENDS.get
names = BACKENDS.names


def calls_llm(backend: str) -> bool:
    """Does ``backend`` call an LLM (a model to check, an ``llm_api`` slot, a failure rate, a cost)?"""
    return get(backend).calls_llm


def variant_model(spec: VariantSpec, default_model: str | None) -> str:
    """The model an LLM variant calls: its ``model``, else ``llm.model``."""
    if not isinstance(spec, LLMCallsSpec):
        raise ConfigError.at(f"answering.{spec.name}.backend", f"{spec.backend} calls no LLM")
    return str(spec.with_model(default_model).model)


def variant_spec(name: str, v: ConfigTable) -> VariantSpec:
    """The spec of one answering variant, by its backend (parsed once, in the verb or the workflow)."""
    return get(v["backend"]).spec.from_dict(name, v)
