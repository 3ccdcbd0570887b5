"""Typed views of the validated config: what a stage reads about its variant, parsed once per job.

The config dict stays what is hashed (params, manifests, cache keys: pipeline/config.py slices it);
a spec is read from that dict, with the schema's ``x-default:`` values for the keys the dict never
carried, so stage code reads ``spec.prompt`` instead of ``v.get("prompt", "context_first")`` and no
stage keeps its own copy of a default. Enumerations are the schema's (one list each).

Kept apart from pipeline/config.py (loading, validation, slicing): this module only names and types
what is already valid, so stages can import it without the validation machinery.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

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


class SpecError(ValueError):
    """A key a spec does not take, or a value it cannot use: the message names the dotted key."""


def _only_known(names, values: dict, path: str) -> None:
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise SpecError(f"config key '{path}.{unknown[0]}': unknown key (known: {', '.join(sorted(names))})")


@dataclass(frozen=True)
class EncoderSpec:
    """An ``embedding``-shaped encoder: what ``pipeline.embed.make_encoder`` builds. The optional keys
    the schema gives no default stay None (unset), so :meth:`as_dict` is the dict the config would hold."""

    backend: str
    batch_size: int
    max_tokens: int
    threads: int  # execution-only: never in a hashed slice
    model: str | None = None
    precision: str | None = None
    model_id: str | None = None
    dim: int | None = None
    max_batch_tokens: int | None = None

    @classmethod
    def from_dict(cls, d: dict, path: str = "embedding") -> EncoderSpec:
        _only_known([f.name for f in fields(cls)], d, path)
        return cls(**{**spec_defaults("embedding"), **d})

    def as_dict(self) -> dict:
        """The keys that are set (what ``make_encoder`` reads)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class AttentionSpec:
    """``sprout``'s attention-pass keys: the encoder windows every sprout index of a dataset shares."""

    max_sentences_per_chunk: int  # leaves: this many consecutive tree sentences
    window_tokens: int  # content tokens per window; + [CLS] and [SEP] = the encoder's positions
    stride_tokens: int  # <= window_tokens: consecutive windows overlap, so the chunk graph is connected
    batch_tokens: int  # padded tokens per forward pass
    threads: int  # execution-only: never in the hashed slice (:meth:`hashed`)
    kernel: str  # ATTENTION_KERNELS

    def __post_init__(self):
        if not 0 < self.stride_tokens <= self.window_tokens:
            raise SpecError(
                f"config key 'sprout.stride_tokens': {self.stride_tokens} must be in 1..window_tokens "
                f"({self.window_tokens}) (windows must cover the text)"
            )

    @classmethod
    def from_dict(cls, d: dict, path: str = "sprout") -> AttentionSpec:
        _only_known(ATTENTION_KEYS, d, path)
        return cls(**{**{k: v for k, v in spec_defaults("sprout").items() if k in ATTENTION_KEYS}, **d})

    def as_dict(self) -> dict:
        return asdict(self)

    def hashed(self) -> dict:
        """The keys that shape the attention file (``threads`` only say how fast it is made)."""
        return {k: v for k, v in asdict(self).items() if k != "threads"}


ATTENTION_KEYS = tuple(f.name for f in fields(AttentionSpec))


@dataclass(frozen=True)
class TrainSpec:
    """``sprout.train``: the head-weight training's data (dataset -> subset) and objective/optimiser."""

    datasets: dict  # dataset name -> its loader's subset (None: the loader's own)
    max_pairs_per_query: int
    lam: float  # the config's ``lambda``: weight of the attention term
    temperature: float
    lr: float
    epochs: int
    batch_size: int
    seed: int

    @classmethod
    def from_dict(cls, d: dict, path: str = "sprout.train") -> TrainSpec:
        names = [f.name for f in fields(cls) if f.name != "lam"] + ["lambda"]
        _only_known(names, d, path)
        if "datasets" not in d:
            raise SpecError(f"config key '{path}.datasets': required")
        v = {**spec_defaults("sprout", "train"), **d}
        return cls(**{("lam" if k == "lambda" else k): x for k, x in v.items()})

    def as_dict(self) -> dict:
        """The config's keys (``lambda``): what the pairs and head-weight files record."""
        return {("lambda" if k == "lam" else k): v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class SproutSpec:
    """The ``sprout`` block: the attention pass, the beam-width sweep, and head training (None: none)."""

    attention: AttentionSpec
    beam_sweep: tuple[str, ...]
    train: TrainSpec | None

    @classmethod
    def from_dict(cls, d: dict) -> SproutSpec:
        _only_known((*ATTENTION_KEYS, "beam_sweep", "train"), d, "sprout")
        return cls(
            AttentionSpec.from_dict({k: v for k, v in d.items() if k in ATTENTION_KEYS}),
            tuple(d.get("beam_sweep") or ()),
            TrainSpec.from_dict(d["train"]) if d.get("train") else None,
        )


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
class AnswerSpec:
    """``answering.<name>`` of an ``extractive`` or ``llm`` variant."""

    name: str
    backend: str
    retrieval: str | None  # None only where a stage function is called without the config
    splits: tuple[str, ...] | None  # None: every split
    model: str | None  # None: llm.model
    params: dict
    prompt: str
    extractive: dict | None
    context_k: int | None
    snippet_chars: int | None
    max_retries: int
    samples: int
    structured: bool
    vote: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, name: str, v: dict) -> AnswerSpec:
        d = {
            "retrieval": None,
            "model": None,
            "extractive": None,
            "context_k": None,
            "snippet_chars": None,
            "splits": None,
            "vote": {},
            **spec_defaults("answering", "*"),
            **v,
        }
        d["splits"] = tuple(d["splits"]) if d["splits"] else None
        return cls(name=name, **_known(cls, d))

    def resolved_model(self, default_model: str | None) -> str | None:
        return self.model or default_model


@dataclass(frozen=True)
class EnsembleSpec:
    """``answering.<name>`` of a ``backend: ensemble`` variant: its members' answers voted."""

    name: str
    members: tuple[str, ...]
    retrieval: str | None  # resolved by validate: the first member's
    splits: tuple[str, ...] | None
    vote: dict

    backend = "ensemble"

    @classmethod
    def from_dict(cls, name: str, v: dict) -> EnsembleSpec:
        return cls(
            name,
            tuple(v["members"]),
            v.get("retrieval"),
            tuple(v["splits"]) if v.get("splits") else None,
            dict(v.get("vote") or {}),
        )


def answering_spec(name: str, v: dict) -> AnswerSpec | EnsembleSpec:
    """The spec of one answering variant, by its backend."""
    return (EnsembleSpec if v["backend"] == "ensemble" else AnswerSpec).from_dict(name, v)


def as_answer_spec(v: AnswerSpec | dict) -> AnswerSpec:
    """A stage function's ``variant`` argument: a parsed spec (the CLI's), or a variant dict (tests, benches)."""
    return v if isinstance(v, AnswerSpec) else AnswerSpec.from_dict("", v)


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
    """``llm`` as one job's gateway sees it (the computed slice plus the execution-only settings)."""

    mode: str
    timeout_s: float
    max_retries: int
    backoff_s: float
    cache_journal: str
    api_base: str | None = None
    model: str | None = None
    concurrency: int = 1
    max_cost_usd: float | None = None
    local: dict = field(default_factory=dict)  # name -> LocalModelSpec

    @classmethod
    def from_dict(cls, llm: dict) -> LLMSpec:
        d = {**spec_defaults("llm"), **llm}
        local = {n: LocalModelSpec.from_dict(n, m) for n, m in (d.get("local") or {}).items()}
        return cls(**{**_known(cls, d), "local": local})


@dataclass(frozen=True)
class Specs:
    """Every variant of a validated config, typed: what the workflow reads to wire the DAG."""

    retrieval: dict[str, RetrievalSpec]
    answering: dict[str, AnswerSpec | EnsembleSpec]
    llm: LLMSpec

    @classmethod
    def from_config(cls, cfg: dict) -> Specs:
        return cls(
            {n: RetrievalSpec.from_dict(n, v) for n, v in cfg["retrieval"].items()},
            {n: answering_spec(n, v) for n, v in cfg["answering"].items()},
            LLMSpec.from_dict(cfg.get("llm") or {}),
        )
