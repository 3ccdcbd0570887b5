"""Typed views of the validated config: what a stage reads about its variant, parsed once per job.

The config dict stays what is hashed (params, manifests, cache keys: pipeline/config.py slices it);
a spec is read from that dict, with the schema's ``x-default:`` values for the keys the dict never
carried, so stage code reads ``spec.prompt`` instead of ``v.get("prompt", "context_first")`` and no
stage keeps its own copy of a default. Enumerations are the schema's (one list each).

Kept apart from pipeline/config.py (loading, validation, slicing): this module only names and types
what is already valid, so stages can import it without the validation machinery.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from pipeline.answer_backends import VariantSpec, variant_spec
from pipeline.config_schema import ConfigProblem, enum, parse_spec, spec_defaults
from pipeline.index_kinds import kind_of
from pipeline.llm_models import LLMSpec
from pipeline.retrieval_modes import PLANNERS

# --- enumerations: the schema's lists ---
TREE_LEVELS = enum("definitions", "tree_level")  # root first: document, section, paragraph, sentence
EMBED_BACKENDS = enum("definitions", "embed_backend")
PROMPTS = enum("answering", "*", "prompt")
VOTE_MODES = enum("answering", "*", "vote", "mode")
TIEBREAKS = enum("answering", "*", "vote", "tiebreak")
LLM_MODES = enum("llm", "mode")
DEDUP_MODES = enum("retrieval", "*", "context", "dedup")
RERANKS = enum("retrieval", "*", "rerank")
LEVEL_FUSIONS = enum("retrieval", "*", "level_fusion")
HEADINGS = enum("parsing", "headings")  # who finds PDF headings
ATTENTION_KERNELS = enum("sprout", "kernel")


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
class EncoderSpec:
    """``embedding`` (with an index's ``embedding_models`` entry over it): the encoder of a dense index
    and of its queries (pipeline.embed.make_encoder)."""

    backend: str
    model: str | None
    precision: str  # onnx-qint8: auto | int8 | fp32
    model_id: str | None  # overrides the derived cache key
    dim: int | None  # litellm
    max_batch_tokens: int | None  # caps padded tokens per MiniLM forward pass (speed only)
    batch_size: int
    max_tokens: int | None  # None: the model's own limit (MiniLM's 256); a validated config carries the schema's
    threads: int  # execution-only: out of the hashed slices, so a job's spec has the schema's default

    @classmethod
    def from_dict(cls, d: Mapping, where: str = "embedding") -> EncoderSpec:
        defaults = {k: v for k, v in spec_defaults("embedding").items() if k != "max_tokens"}
        return parse_spec(cls, d, where, defaults)

    def as_dict(self) -> dict:
        """The keys that are set: the ``embedding``-shaped dict the spec was read from, defaults filled."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class PlannerSpec:
    """``retrieval.<v>.planner``: its kind (a registered planner kind, pipeline.retrieval_modes) and settings."""

    kind: str
    n: int
    model: str | None
    params: dict | None

    @classmethod
    def from_dict(cls, planner: Mapping | None, where: str = "planner") -> PlannerSpec:
        """The spec of the planner's kind (a kind may declare keys of its own: a PlannerSpec subclass)."""
        defaults = spec_defaults("retrieval", "*", "planner")
        kind = (planner or {}).get("kind", defaults["kind"])
        if kind not in PLANNERS.names():
            raise ConfigProblem(f"{where}.kind", f"'{kind}' is not one of {PLANNERS.names()}")
        spec: PlannerSpec = parse_spec(PLANNERS.get(kind).spec or cls, planner or {}, where, defaults)
        if not isinstance(spec.n, int) or spec.n < 1:
            raise ConfigProblem(f"{where}.n", f"must be a positive integer, got {spec.n!r}")
        return spec

    @property
    def calls_llm(self) -> bool:
        return PLANNERS.get(self.kind).calls_llm


@dataclass(frozen=True)
class ContextSpec:
    """``retrieval.<v>.context``: the snippets a prompt shows (pipeline.retrieve.expand)."""

    parent_depth: int | None  # None: the index kind's (1; 0 where a parent is no context, sprout)
    sibling_depth: int
    dedup: str
    top_k_final: int | None
    token_budget: int | None

    @classmethod
    def from_dict(cls, d: Mapping | None, where: str = "context") -> ContextSpec:
        return parse_spec(cls, d or {}, where, spec_defaults("retrieval", "*", "context"))


@dataclass(frozen=True)
class HybridSpec:
    """``retrieval.<v>.hybrid``: a lexical index's ranking fused with the variant's dense one."""

    index: str
    mode: str  # a registered fusion mode (pipeline.retrieval_modes)
    top_k: int
    weight: float | None  # the lexical side's share (modes that take it)

    @classmethod
    def from_dict(cls, d: Mapping, where: str = "hybrid") -> HybridSpec:
        return parse_spec(cls, d, where, spec_defaults("retrieval", "*", "hybrid"))


# the keys of retrieval.<v> every variant takes; the rest belong to its index kinds' searcher settings
COMMON_RETRIEVAL_KEYS = (
    "index",
    "top_k",
    "levels",
    "expand",
    "planner",
    "rerank",
    "kohaku_compat",
    "context",
    "hybrid",
)


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
    context: ContextSpec
    hybrid: HybridSpec | None
    searchers: dict[str, Any]  # index name -> its kind's searcher settings (bm25: level_fusion; sprout: the beam)

    @property
    def index_names(self) -> tuple[str, ...]:
        """The variant's own index first, then its hybrid partner."""
        return (self.index, self.hybrid.index) if self.hybrid else (self.index,)

    @classmethod
    def from_dict(cls, name: str, v: Mapping, indexes: Mapping[str, Mapping]) -> RetrievalSpec:
        """``v`` resolved by validation (levels, expand); ``indexes``: the ``indexes`` table (or the slice's)."""
        where = f"retrieval.{name}"
        d = {**spec_defaults("retrieval", "*"), **v}
        hybrid = HybridSpec.from_dict(d["hybrid"], f"{where}.hybrid") if d.get("hybrid") else None
        used = (d["index"], hybrid.index) if hybrid else (d["index"],)
        kinds = {n: kind_of(indexes[n]) for n in used}
        own = {k: v[k] for k in v if k not in COMMON_RETRIEVAL_KEYS}
        takes = {k for kind in kinds.values() for k in kind.retrieval_keys}
        extra = sorted(set(own) - takes)
        if extra:
            raise ConfigProblem(f"{where}.{extra[0]}", f"not a key of its indexes' searchers (take {sorted(takes)})")
        return cls(
            name=name,
            index=d["index"],
            top_k=d["top_k"],
            levels=tuple(d["levels"]),
            expand=d["expand"],
            planner=PlannerSpec.from_dict(d.get("planner"), f"{where}.planner"),
            rerank=d["rerank"],
            kohaku_compat=d["kohaku_compat"],
            context=ContextSpec.from_dict(d.get("context"), f"{where}.context"),
            hybrid=hybrid,
            searchers={n: kind.search_settings(v, where) for n, kind in kinds.items()},
        )


# A corpus's name becomes a folder under results/ and reports/ and a Snakemake wildcard value: a plain word,
# and none of the names those folders already hold (WattBot, the suite's datasets are checked by the config).
CORPUS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
RESERVED_CORPUS_NAMES = frozenset(
    {
        *("wattbot", "sprout", "parse-quality", "retrieval", "figures", "parsing", "bench"),  # results/, reports/
        *("local_model", "minilm_qint8", "embedding_model", "suite_report"),  # benchmarks/, logs/
    }
)


@dataclass(frozen=True)
class CorpusSpec:
    """One ``corpora.<name>`` entry: a folder of documents, its questions, optional labels and metadata,
    and the answering variants run on it. Paths as written (``{data_root}`` expanded by :meth:`resolved`)."""

    name: str
    pdf_dir: str
    questions: str
    solutions: str | None
    metadata: str | None
    variants: list[str] | None

    @classmethod
    def from_dict(cls, name: str, d: Mapping) -> CorpusSpec:
        where = f"corpora.{name}"
        if not CORPUS_NAME.match(name) or name in RESERVED_CORPUS_NAMES:
            raise ConfigProblem(
                where,
                "a corpus name is letters, digits, '-' and '_' (a folder under results/ and reports/) and not "
                f"one of {sorted(RESERVED_CORPUS_NAMES)}",
            )
        if not isinstance(d, Mapping):
            raise ConfigProblem(where, "must be a table (pdf_dir, questions[, solutions, metadata, variants])")
        return parse_spec(cls, d, where, spec_defaults("corpora", "*"), name=name)

    def resolved(self, data_root: str) -> CorpusSpec:
        """The paths with ``{data_root}`` expanded (as ``wattbot.dir``)."""
        expand = {k: getattr(self, k) for k in ("pdf_dir", "questions", "solutions", "metadata")}
        return replace(self, **{k: v.replace("{data_root}", data_root) for k, v in expand.items() if v})

    def answering(self, default_variant: str) -> list[str]:
        """The variants it runs, as listed (default: the config's ``default_variant``)."""
        return list(self.variants or [default_variant])


@dataclass(frozen=True)
class Specs:
    """Every variant of a validated config, typed: what the workflow reads to wire the DAG."""

    retrieval: dict[str, RetrievalSpec]
    answering: dict[str, VariantSpec]  # each backend's own spec (pipeline/answer_backends.py)
    llm: LLMSpec

    @classmethod
    def from_config(cls, cfg: dict) -> Specs:
        return cls(
            {n: RetrievalSpec.from_dict(n, v, cfg["indexes"]) for n, v in cfg["retrieval"].items()},
            {n: variant_spec(n, v) for n, v in cfg["answering"].items()},
            LLMSpec.from_dict(cfg.get("llm") or {}),
        )
