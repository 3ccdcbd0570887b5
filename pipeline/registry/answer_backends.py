"""The registry of answering backends: what ``answering.<name>.backend`` may name, and what each one reads.

A backend is an answer function plus what the rest of the pipeline must know about it: its spec (a
frozen dataclass whose fields are the only keys its variants may carry: parsed once, an unknown key
is an error naming it), whether it calls an LLM (then the job takes an ``llm_api`` slot, needs a
model, is held to the failure-rate check and is priced by its own ``prompt_tokens`` before a run),
whether its answers are other variants' voted (``ensemble``: its own DAG rule,
pipeline/answer/ensemble.py) and what attribution counts as read. The answer stage
(pipeline/answer/run.py) calls the function; the config layer fills the schema's ``enum:`` from
:func:`names`. Adding a backend is one :func:`register` call (toys: tests/answer/toy_backend.py,
tests/test_estimate_backend.py).

The built-in backends register in pipeline/answer/backends.py, which a driver imports
(pipeline/register_builtins.py): this module, on the shared floor, never names a stage. A backend kept outside
the package registers in its own module, named in ``WATTBENCH_ANSWER_BACKENDS`` (comma-separated;
Snakemake's jobs inherit it).
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
    Key,
    key,
    key_field,
    parse_spec,
)
from pipeline.registry.base import Registry

S = TypeVar("S", bound="VariantSpec")

PROMPTS = ("context_first", "question_first")  # KohakuRAG's prompt orders (pipeline/answer/prompts/)
VOTE_MODES = ("independent", "ref_priority", "answer_priority", "union", "intersection")
TIEBREAKS = ("first", "blank")


@dataclass(frozen=True)
class VoteSettings:
    """``answering.<name>.vote``: how an LLM variant's samples, or an ensemble's members, are voted
    (pipeline/answer/vote.py's VoteConfig takes these defaults)."""

    mode: str = key("how the refs are chosen (docs/ensembles.md)", choices=VOTE_MODES, default="answer_priority")
    ignore_blank: bool = key("drop is_blank votes when any member answered", type="boolean", default=True)
    tiebreak: str = key(
        "first: a tie goes to the earliest member; blank: all differ -> blank", choices=TIEBREAKS, default="first"
    )
    normalise: bool | None = key("compare normalised values (samples: default true; ensembles: false)", type="boolean")
    kohaku_compat: bool | None = key(
        "ensembles only: KohakuRAG's own vote, its rows (docs/ensembles.md)", type="boolean"
    )

    @classmethod
    def from_dict(cls, vote: ConfigTable | None = None, where: str = "vote") -> VoteSettings:
        """A ``vote:`` block (None or {}: every default; normalise and kohaku_compat stay None when not given)."""
        return parse_spec(cls, vote or {}, where)


VOTE = Key("how samples (or members) are voted", spec=VoteSettings, default={})


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


@dataclass(frozen=True)
class ExtractorSettings:
    """``answering.<name>.extractive``: the extractor's knobs (pipeline/answer/extractive.py reads them)."""

    max_hits: int = key("hits read, in rank order", type="integer", default=15, schema={"minimum": 1})
    context_window: int = key(
        "neighbouring sentences of a hit (in its context) also read", type="integer", default=2, schema={"minimum": 0}
    )
    min_support: float = key(
        "abstain when the best sentence covers less of the question", type="number", default=0.2, schema={"minimum": 0}
    )

    @classmethod
    def parse(cls, values: ConfigTable | None, where: str) -> ExtractorSettings:
        return parse_spec(cls, values or {}, where)


@dataclass(frozen=True, kw_only=True)
class ExtractiveSpec(VariantSpec):
    """``backend: extractive``: rule-based, offline (pipeline/answer/extractive.py)."""

    extractive: ExtractorSettings = key(
        "the extractor's knobs (pipeline/answer/extractive.py)",
        spec=ExtractorSettings,
        default={},
        field_factory=lambda: ExtractorSettings.parse(None, "extractive"),
    )

    @classmethod
    def from_dict(cls, name: str, v: ConfigTable) -> Self:
        spec = super().from_dict(name, {k: x for k, x in v.items() if k != "extractive"})
        knobs = ExtractorSettings.parse(v.get("extractive"), f"answering.{name}.extractive")
        return dataclasses.replace(spec, extractive=knobs)


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


@dataclass(frozen=True, kw_only=True)
class LLMAnswerSpec(LLMCallsSpec):
    """``backend: llm``: KohakuRAG's prompts, structured answers, blank-retries, samples voted
    (pipeline/answer/llm_answer.py reads it, its model resolved)."""

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


@dataclass(frozen=True, kw_only=True)
class EnsembleSpec(VariantSpec):
    """``backend: ensemble``: its members' answers voted (no call of its own)."""

    members: tuple[str, ...] = key(
        "other answering variants, in vote (tie) order",
        type="array",
        schema={"minItems": 1, "items": {"type": "string"}},
    )
    vote: VoteSettings = key_field(
        VOTE, field_factory=VoteSettings.from_dict
    )  # typed here; the hashed params keep the dict

    @classmethod
    def from_dict(cls, name: str, v: ConfigTable) -> EnsembleSpec:
        spec = super().from_dict(name, v)
        vote = VoteSettings.from_dict(v.get("vote"), f"answering.{name}.vote")
        return dataclasses.replace(spec, members=tuple(spec.members), vote=vote)

    @classmethod
    def resolve(cls, name: str, variant: ConfigTree, cfg: ConfigTree) -> None:
        """Members are other, non-ensemble answering variants (no nesting, so no cycles); the splits
        are those every member answers (or a subset of them); the retrieval (for the retrieval columns
        of the leaderboard and attribution) is the first member's."""
        _kohaku_vote(name, variant)
        answering, members = cfg["answering"], variant["members"]
        for m in members:
            if m not in answering:
                raise ConfigError.at(f"answering.{name}.members", f"unknown answering variant '{m}'")
            if get(answering[m]["backend"]).votes_members:
                raise ConfigError.at(f"answering.{name}.members", f"'{m}' is an ensemble (list its members instead)")
        if len(set(members)) != len(members):
            raise ConfigError.at(f"answering.{name}.members", "a member is listed twice")
        every = set(cfg["wattbot"]["splits"])
        common = every.intersection(*(answering[m].get("splits") or every for m in members))
        bad = sorted(set(variant.get("splits") or []) - common)
        if bad:
            raise ConfigError.at(f"answering.{name}.splits", f"{bad} not answered by every member")
        if not variant.get("splits") and common != every:
            variant["splits"] = sorted(common)
        variant.setdefault("retrieval", answering[members[0]]["retrieval"])


def _kohaku_vote(name: str, variant: ConfigTree) -> None:
    """``vote.kohaku_compat``: unset is false (a false one is dropped: one hashed vote whichever way it is
    written); true compares exact strings, as KohakuRAG does."""
    vote = variant.get("vote") or {}
    if vote.get("kohaku_compat") is False:
        del vote["kohaku_compat"]
    elif vote.get("kohaku_compat") and vote.get("normalise"):
        raise ConfigError.at(
            f"answering.{name}.vote.normalise", "KohakuRAG's vote (kohaku_compat) compares exact strings"
        )


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


EXTRA_ENV = "WATTBENCH_ANSWER_BACKENDS"  # more modules that register backends, comma-separated
BACKENDS: Registry[AnswerBackend] = Registry("answering backend", EXTRA_ENV, builtins="pipeline.answer.backends")
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
