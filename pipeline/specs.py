"""Typed views of the validated config: what a stage reads about its variant, parsed once per job.

The config dict stays what is hashed (params, manifests, cache keys: pipeline/config/slices.py slices it);
a spec is read from that dict, with the schema's ``x-default:`` values for the keys the dict never
carried, so stage code reads ``spec.prompt`` instead of ``v.get("prompt", "context_first")`` and no
stage keeps its own copy of a default. Enumerations are the schema's (one list each).

Kept apart from pipeline/config/ (loading, validation, slicing): this module only names and types
what is already valid, so stages can import it without the validation machinery.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from pipeline.config_schema import (
    ConfigError,
    ConfigTable,
    declared,
    declared_defaults,
    enum,
    key,
    parse_spec,
    spec_defaults,
)
from pipeline.registry.index_kinds import kind_of
from pipeline.registry.retrieval_modes import PLANNERS

# --- enumerations: the schema's lists ---
TREE_LEVELS = enum("definitions", "tree_level")  # root first: document, section, paragraph, sentence
LLM_MODES = enum("llm", "mode")
DEDUP_MODES = ("none", "node_id", "tree")  # ContextSpec.dedup's choices
RERANKS = enum("retrieval", "*", "rerank")
LEVEL_FUSIONS = ("score", "rrf")  # how BM25 merges its per-level rankings (declared by pipeline/indexes/bm25.py)
HEADINGS = enum("parsing", "headings")  # who finds PDF headings
ATTENTION_KERNELS = enum("sprout", "kernel")


@dataclass(frozen=True)
class BeamSpec:
    """A sprout variant's beam search (its searcher's ``retrieval.<v>`` keys; the reference's defaults)."""

    beam_width: int = key("beam search width b", type="integer", default=5, schema={"minimum": 1, "maximum": 1000})
    per_document_top_k: int = key(
        "per-tree results pooled", type="integer", default=5, schema={"minimum": 1, "maximum": 1000}
    )
    threshold: float = key("collect nodes scoring >= this", type="number", default=0.0)
    include_root: bool = key("the root competes too", type="boolean", default=False)
    collect: str = key("which visited nodes compete", choices=("threshold", "visited"), default="threshold")

    @classmethod
    def from_dict(cls, variant: ConfigTable, where: str = "retrieval") -> BeamSpec:
        """The beam keys of a retrieval variant (its other keys are not the searcher's)."""
        return parse_spec(cls, {k: variant[k] for k in BEAM_KEYS if k in variant}, where)


# the retrieval keys only a sprout index's variants take (its beam search)
BEAM_KEYS = tuple(declared(BeamSpec))


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
            raise ConfigError.at(
                "sprout.stride_tokens",
                f"{self.stride_tokens} must be in 1..window_tokens ({self.window_tokens}) (windows must cover the text)",
            )

    @classmethod
    def from_dict(cls, d: ConfigTable, path: str = "sprout") -> AttentionSpec:
        return parse_spec(cls, d, path, spec_defaults("sprout"))

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
    def from_dict(cls, d: ConfigTable, path: str = "sprout.train") -> TrainSpec:
        """``lambda`` (a Python keyword) is the field ``lam``."""
        if "lam" in d:
            raise ConfigError.at(f"{path}.lam", "not a key of sprout.train (the key is 'lambda')")
        lam = {("lam" if k == "lambda" else k): v for k, v in {**spec_defaults("sprout", "train"), **d}.items()}
        return parse_spec(cls, {("lam" if k == "lambda" else k): v for k, v in d.items()}, path, lam)

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
    def from_dict(cls, d: ConfigTable) -> SproutSpec:
        known = (*ATTENTION_KEYS, "beam_sweep", "train")
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ConfigError.at(f"sprout.{unknown[0]}", f"not a key of sprout (takes {sorted(known)})")
        return cls(
            AttentionSpec.from_dict({k: v for k, v in d.items() if k in ATTENTION_KEYS}),
            tuple(d.get("beam_sweep") or ()),
            TrainSpec.from_dict(d["train"]) if d.get("train") else None,
        )


@dataclass(frozen=True)
class EncoderSpec:
    """``embedding`` (with an index's ``embedding_models`` entry over it): the encoder of a dense index
    and of its queries (pipeline.embed.make_encoder)."""

    backend: str = key("the encoder backend", schema={"$ref": "#/definitions/embed_backend"})
    model: str | None = key("the model: a local folder or a provider's name", type="string")
    precision: str = key(
        "onnx-qint8 only: auto = int8 where the CPU has VNNI, int8-rr (reduce-range) on AVX2 without it, else fp32",
        choices=("auto", "int8", "int8-rr", "fp32"),
        default="auto",
    )
    model_id: str | None = key("overrides the derived cache key", type="string")
    dim: int | None = key("litellm: the vectors' dimension", type="integer", schema={"minimum": 1})
    max_batch_tokens: int | None = key(
        "caps padded tokens per MiniLM forward pass (speed only)", type="integer", schema={"minimum": 16}
    )
    batch_size: int = key("texts per batch", type="integer", default=64, filled=True, schema={"minimum": 1})
    # None: the model's own limit (MiniLM's 256); a validated config carries the declared default
    max_tokens: int | None = key(
        "tokens a text is cut to", type="integer", default=512, filled=True, schema={"minimum": 8, "maximum": 8192}
    )
    threads: int = key(
        "encoder threads (execution-only: out of the hashed slices)",
        type="integer",
        default=2,
        filled=True,
        schema={"minimum": 1},
    )

    @classmethod
    def from_dict(cls, d: ConfigTable, where: str = "embedding") -> EncoderSpec:
        defaults = {k: v for k, v in declared_defaults(cls).items() if k != "max_tokens"}
        return parse_spec(cls, d, where, defaults)

    def as_dict(self) -> dict:
        """The keys that are set: the ``embedding``-shaped dict the spec was read from, defaults filled."""
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class VisionSpec:
    """``parsing.vision``: the vision model that captions PDF figures through the LLM gateway (pipeline/parse/vision.py)."""

    model: str | None = key(
        "the vision model (null: figures are not captioned)", type=("string", "null"), default=None, filled=True
    )
    params: dict = key("its request parameters (temperature, max_tokens, ...)", type="object", default={}, filled=True)

    @classmethod
    def from_dict(cls, d: ConfigTable | None, where: str = "parsing.vision") -> VisionSpec:
        return parse_spec(cls, d or {}, where)


@dataclass(frozen=True)
class PlannerSpec:
    """``retrieval.<v>.planner``: its kind (a registered planner kind, pipeline.registry.retrieval_modes) and settings."""

    kind: str = key("a registered planner kind (pipeline/registry/retrieval_modes.py)", type="string", default="none")
    n: int = key("queries per question", type="integer", default=4, schema={"minimum": 1, "maximum": 16})
    model: str | None = key("an LLM planner's model (default: llm.model)", type="string")
    params: dict | None = key("an LLM planner's request parameters", type="object")

    @classmethod
    def from_dict(cls, planner: ConfigTable | None, where: str = "planner") -> PlannerSpec:
        """The spec of the planner's kind (a kind may declare keys of its own: a PlannerSpec subclass)."""
        kind = (planner or {}).get("kind", declared_defaults(cls)["kind"])
        if kind not in PLANNERS.names():
            raise ConfigError.at(f"{where}.kind", f"'{kind}' is not one of {PLANNERS.names()}")
        spec: PlannerSpec = parse_spec(PLANNERS.get(kind).spec or cls, planner or {}, where)
        if not isinstance(spec.n, int) or spec.n < 1:
            raise ConfigError.at(f"{where}.n", f"must be a positive integer, got {spec.n!r}")
        return spec

    @property
    def calls_llm(self) -> bool:
        return PLANNERS.get(self.kind).calls_llm


@dataclass(frozen=True)
class ContextSpec:
    """``retrieval.<v>.context``: the snippets a prompt shows (pipeline.retrieve.expand)."""

    parent_depth: int | None = key(
        "levels of parents shown (default: the index kind's, 1; 0 for sprout, whose parent is a merge partner)",
        type="integer",
        schema={"minimum": 0, "maximum": 4},
    )
    sibling_depth: int = key(
        "neighbouring siblings shown", type="integer", default=0, schema={"minimum": 0, "maximum": 10}
    )
    dedup: str = key("which repeated snippets are dropped", choices=DEDUP_MODES, default="tree")
    top_k_final: int | None = key(
        "snippets kept (null: all)", type=("integer", "null"), default=None, schema={"minimum": 1}
    )
    token_budget: int | None = key(
        "tokens of snippets kept (null: no cap)", type=("integer", "null"), default=None, schema={"minimum": 1}
    )

    @classmethod
    def from_dict(cls, d: ConfigTable | None, where: str = "context") -> ContextSpec:
        return parse_spec(cls, d or {}, where)


@dataclass(frozen=True)
class HybridSpec:
    """``retrieval.<v>.hybrid``: a lexical index's ranking fused with the variant's dense one."""

    index: str = key("the lexical index fused with the variant's dense one", type="string")
    mode: str = key("a registered fusion mode (pipeline/registry/retrieval_modes.py)", type="string")
    top_k: int = key("hits of each side fused", type="integer", schema={"minimum": 1, "maximum": 1000})
    weight: float | None = key(
        "BM25's share (modes that take it: rrf, convex); dense gets 1 - weight",
        type="number",
        schema={"minimum": 0, "maximum": 1},
    )

    @classmethod
    def from_dict(cls, d: ConfigTable, where: str = "hybrid") -> HybridSpec:
        return parse_spec(cls, d, where)


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
    def from_dict(cls, name: str, v: ConfigTable, indexes: Mapping[str, ConfigTable]) -> RetrievalSpec:
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
            raise ConfigError.at(f"{where}.{extra[0]}", f"not a key of its indexes' searchers (take {sorted(takes)})")
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
        *("local_model", "encoder_qint8", "encoder_qint8_rr", "encoder_model", "suite_report"),  # benchmarks/, logs/
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
            raise ConfigError.at(
                where,
                "a corpus name is letters, digits, '-' and '_' (a folder under results/ and reports/) and not "
                f"one of {sorted(RESERVED_CORPUS_NAMES)}",
            )
        if not isinstance(d, Mapping):
            raise ConfigError.at(where, "must be a table (pdf_dir, questions[, solutions, metadata, variants])")
        return parse_spec(cls, d, where, spec_defaults("corpora", "*"), name=name)

    def resolved(self, data_root: str) -> CorpusSpec:
        """The paths with ``{data_root}`` expanded (as ``wattbot.dir``)."""
        expand = {k: getattr(self, k) for k in ("pdf_dir", "questions", "solutions", "metadata")}
        return replace(self, **{k: v.replace("{data_root}", data_root) for k, v in expand.items() if v})

    def answering(self, default_variant: str) -> list[str]:
        """The variants it runs, as listed (default: the config's ``default_variant``)."""
        return list(self.variants or [default_variant])
