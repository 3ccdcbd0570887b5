"""Typed views of the validated config: what a stage reads about its variant, parsed once per job.

The config dict stays what is hashed (params, manifests, cache keys: pipeline/config.py slices it);
a spec is read from that dict, with the schema's ``x-default:`` values for the keys the dict never
carried, so stage code reads ``spec.prompt`` instead of ``v.get("prompt", "context_first")`` and no
stage keeps its own copy of a default. Enumerations are the schema's (one list each).

Kept apart from pipeline/config.py (loading, validation, slicing): this module only names and types
what is already valid, so stages can import it without the validation machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from pipeline.answer_backends import VariantSpec, variant_spec
from pipeline.config_schema import enum, spec_defaults

# --- enumerations: the schema's lists ---
TREE_LEVELS = enum("definitions", "tree_level")  # root first: document, section, paragraph, sentence
EMBED_BACKENDS = enum("definitions", "embed_backend")
PROMPTS = enum("answering", "*", "prompt")
VOTE_MODES = enum("answering", "*", "vote", "mode")
TIEBREAKS = enum("answering", "*", "vote", "tiebreak")
LLM_MODES = enum("llm", "mode")
PLANNER_KINDS = enum("retrieval", "*", "planner", "kind")
DEDUP_MODES = enum("retrieval", "*", "context", "dedup")
RERANKS = enum("retrieval", "*", "rerank")
LEVEL_FUSIONS = enum("retrieval", "*", "level_fusion")
HEADINGS = enum("parsing", "headings")  # who finds PDF headings
ATTENTION_KERNELS = enum("sprout", "kernel")


def _known(cls, values: dict) -> dict:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in values.items() if k in names}


@dataclass(frozen=True)
class BeamSpec:
    """A sprout variant's beam search (``retrieval.<v>`` sprout keys)."""

    beam_width: int
    per_document_top_k: int
    threshold: float
    include_root: bool
    collect: str

    @classmethod
    def defaults(cls) -> dict:
        return {k: v for k, v in spec_defaults("retrieval", "*").items() if k in BEAM_KEYS}

    @classmethod
    def from_dict(cls, variant: dict) -> BeamSpec:
        return cls(**{**cls.defaults(), **{k: variant[k] for k in BEAM_KEYS if k in variant}})


# the retrieval keys only a sprout index's variants take (its beam search)
BEAM_KEYS = tuple(f.name for f in fields(BeamSpec))


@dataclass(frozen=True)
class PlannerSpec:
    kind: str
    n: int
    model: str | None = None
    params: dict | None = None

    @classmethod
    def from_dict(cls, planner: dict | None) -> PlannerSpec:
        return cls(**{**spec_defaults("retrieval", "*", "planner"), **(planner or {})})


@dataclass(frozen=True)
class RetrievalSpec:
    """``retrieval.<name>``: what the retrieve stage reads beyond the index (validated and resolved)."""

    name: str
    index: str
    top_k: int
    levels: tuple[str, ...]
    expand: str
    planner: PlannerSpec
    rerank: str
    kohaku_compat: bool
    level_fusion: str
    context: dict  # the user's context keys; parent_depth's default depends on the index kind
    hybrid: dict | None
    beam: BeamSpec

    @classmethod
    def from_dict(cls, name: str, v: dict) -> RetrievalSpec:
        d = {**spec_defaults("retrieval", "*"), **v}
        return cls(
            name=name,
            index=d["index"],
            top_k=d["top_k"],
            levels=tuple(d["levels"]),
            expand=d["expand"],
            planner=PlannerSpec.from_dict(d.get("planner")),
            rerank=d["rerank"],
            kohaku_compat=d["kohaku_compat"],
            level_fusion=d["level_fusion"],
            context={**spec_defaults("retrieval", "*", "context"), **(d.get("context") or {})},
            hybrid=d.get("hybrid"),
            beam=BeamSpec.from_dict(d),
        )


@dataclass(frozen=True)
class LocalModelSpec:
    """``llm.local.<name>``: a GGUF served by llama-cpp-python on 127.0.0.1."""

    name: str
    package: str
    gguf: str
    chat_format: str
    n_ctx: int
    n_threads: int
    startup_timeout_s: float
    logits_all: bool = False  # vocabulary logits for every prompt token (only logprobs need them)

    @classmethod
    def from_dict(cls, name: str, m: dict) -> LocalModelSpec:
        return cls(name=name, **{**spec_defaults("llm", "local", "*"), **m})


@dataclass(frozen=True)
class LLMSpec:
    """``llm`` as one job's gateway sees it (the computed slice plus the execution-only settings):
    the gateway's one settings object, parsed once."""

    mode: str
    timeout_s: float
    max_retries: int
    backoff_s: float
    cache_journal: str
    concurrency: int
    api_base: str | None = None
    model: str | None = None
    max_cost_usd: float | None = None
    max_backoff_s: float = 60.0  # not a config key: the longest backoff (tests and benches shorten it)
    local: dict = field(default_factory=dict)  # name -> LocalModelSpec
    table: dict = field(default_factory=dict)  # the whole mapping: what per-model lookups read (per_model, prices, ...)

    @classmethod
    def from_dict(cls, llm: dict) -> LLMSpec:
        d = {**spec_defaults("llm"), **llm}
        local = {n: LocalModelSpec.from_dict(n, m) for n, m in (d.get("local") or {}).items()}
        return cls(**{**_known(cls, d), "local": local, "table": {"concurrency": d["concurrency"], **llm}})


@dataclass(frozen=True)
class Specs:
    """Every variant of a validated config, typed: what the workflow reads to wire the DAG."""

    retrieval: dict[str, RetrievalSpec]
    answering: dict[str, VariantSpec]  # each backend's own spec (pipeline/answer_backends.py)
    llm: LLMSpec

    @classmethod
    def from_config(cls, cfg: dict) -> Specs:
        return cls(
            {n: RetrievalSpec.from_dict(n, v) for n, v in cfg["retrieval"].items()},
            {n: variant_spec(n, v) for n, v in cfg["answering"].items()},
            LLMSpec.from_dict(cfg.get("llm") or {}),
        )
