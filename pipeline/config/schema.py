"""The config's JSON schema, generated: each section's keys as declared beside the dataclass that reads them
(pipeline/config_schema.py ``key``), composed under the config's top level (:class:`ConfigKeys`), with the
enumerations and the keys of what is registered: index kinds and their searchers, planner kinds, fusion
modes, answering backends, suite datasets and each one's subset, encoder backends. Built per validation
(a test may register a toy entry); docs/config_keys.py renders the same declarations into
docs/config-keys.md. No key and no default is written anywhere else.

The keys of a registered entry (an index kind's, a searcher's, a planner kind's, a backend's) sit in the
schema without their defaults: a table's schema holds every kind's keys at once, so validation writes the
defaults of the entry's own kind (pipeline/config/validate.py); a subset's keys likewise, since a subset
given is laid over its loader's ``DEFAULT_SUBSET`` (pipeline/datasets/suite.py).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pipeline.cache_journal import JOURNALS
from pipeline.config_schema import DEFINITIONS, NAME, SPLIT, declared_schema, key, object_schema
from pipeline.llm_models import LLMSpec
from pipeline.registry import answer_backends, suite_datasets
from pipeline.registry.index_kinds import IndexSpec, get_kind, kind_names
from pipeline.registry.retrieval_modes import FUSIONS, PLANNERS
from pipeline.report_specs import PowerModel, ReportSpec, Tracking
from pipeline.specs import (
    CorpusSpec,
    EmbeddingModelSpec,
    EncoderSpec,
    ParsingSpec,
    PlannerSpec,
    RetrievalSpec,
    ShardSpec,
    SproutSpec,
    SuiteSpec,
)

STRINGS = {"type": "array", "items": {"type": "string"}}
FILES = {"type": "object", "additionalProperties": {"type": "string"}}  # split -> a file name


@dataclass(frozen=True)
class WattBotSpec:
    """``wattbot``: the WattBot challenge's data (the labelled corpus every run answers)."""

    dir: str = key('metadata.csv, the split files, corpus/ ("{data_root}" expands)', type="string")
    pdf_dir: str | None = key(
        "a folder of <doc_id>.pdf: when set, trees are parsed from the PDFs", type=("string", "null"), default=None
    )
    pdf_fallback: str | None = key(
        "a PDF missing from pdf_dir is an error, unless this names its stand-in: extracted-text = the "
        "pre-extracted <dir>/corpus/<doc_id>.json (said in the run output and in reports/wattbot/index.md)",
        choices=(None, "extracted-text"),
        default=None,
    )
    docs: list[str] | None = key(
        "a subset of document ids (tests, quick looks); default: all",
        type="array",
        schema={"minItems": 1, "items": NAME},  # ids and split names become file names (pipeline/names.py)
    )
    fetch_dir: str = key("where `snakemake fetch` downloads the PDFs", type="string", default="data/pdfs")
    splits: dict = key(
        "split -> its questions file (in dir)", schema={**FILES, "minProperties": 1, "propertyNames": SPLIT}
    )
    score_split: str = key(
        "the labelled split the ablations, figures and the leaderboard's first block are scored on", type="string"
    )
    solutions: dict | None = key(
        "split -> its labels file (in dir): each labelled split is scored (a subset of its ids is fine, the rest "
        "count as unlabelled); default: the score split's own file",
        schema={**FILES, "propertyNames": SPLIT},
    )


@dataclass(frozen=True)
class PowerGroupSpec:
    """``power_subsets.groups.<name>``: variants that answer one sample (paired ids), and its claims."""

    variants: list[str] = key(
        "answering variants that answer the split", type="array", schema={"minItems": 2, "items": {"type": "string"}}
    )
    claims: dict = key(
        "claim id (pipeline/report/claims/claims.yaml) -> its cap: the most n its time allows",
        type="object",
        schema={"minProperties": 1, "additionalProperties": {"type": "integer", "minimum": 2}},
    )


@dataclass(frozen=True)
class PowerSubsetsSpec:
    """``power_subsets``: claims whose variants are too slow for a whole labelled split measured on a sample of
    it sized by power (pipeline/report/stats/power.py, the power_sample rule): per claim, the n a paired test
    needs for 80% power to detect its published effect, from the score split's per-question scores (the
    pilot), at least ``floor``, at most the claim's cap. Omit it: every variant answers every question."""

    split: str = key("a labelled split besides the score split (wattbot.solutions)", type="string")
    seed: int = key("the sample: a seeded shuffle of the split's labelled ids, cut to n", type="integer", default=0)
    floor: int = key(
        "the least n of a claim, whatever the pilot says", type="integer", default=30, schema={"minimum": 2}
    )
    groups: dict = key(
        "name -> the variants answering one sample",
        table=PowerGroupSpec,
        schema={"minProperties": 1, "propertyNames": NAME},
    )


@dataclass(frozen=True)
class ConfigKeys:
    """The config's top level: its own keys, and one key per section (each declared beside its dataclass)."""

    data_root: str = key("the shared benchmark data (never copied into the repo)", type="string")
    wattbot: WattBotSpec = key("the WattBot challenge's data", spec=WattBotSpec)
    cache_dir: str = key("embedding and LLM caches (content-addressed, safe to delete)", type="string")
    cache_journal: str = key(
        "the caches' SQLite journal; nfs on a shared filesystem (docs/cluster.md): WAL needs local disk; "
        "execution-only",
        choices=JOURNALS,
        default="wal",
    )
    default_variant: str = key("the answering variant whose test answers become submission.csv", type="string")
    limit: int | None = key(
        "a smoke run: the first N questions of every split, to results/<dataset>/first-N/ and reports-first-N/",
        type="integer",
        schema={"minimum": 1},
    )
    parsing: ParsingSpec = key("documents -> trees", spec=ParsingSpec, default={})
    embedding: EncoderSpec = key("the encoder of documents and queries", spec=EncoderSpec)
    embedding_models: dict | None = key(
        "name -> an encoder beside `embedding`, named by an index's `embedding:`",
        table=EmbeddingModelSpec,
        schema={"propertyNames": NAME},
    )
    indexes: dict = key(
        "name -> an index: a registered kind and its keys",
        type="object",
        schema={"minProperties": 1, "propertyNames": NAME},
    )
    retrieval: dict = key(
        "name -> a retrieval variant: its keys and its index kinds' searchers'",
        type="object",
        schema={"minProperties": 1, "propertyNames": NAME},
    )
    answering: dict = key(
        "name -> an answering variant: a registered backend and its keys",
        type="object",
        schema={"minProperties": 1, "propertyNames": NAME},
    )
    corpora: dict = key(
        "name -> your own documents, answered by its variants (docs/own-corpus.md)", table=CorpusSpec, default={}
    )
    power_subsets: PowerSubsetsSpec | None = key("power-sized samples for slow claims", spec=PowerSubsetsSpec)
    suite: SuiteSpec | None = key("the retrieval suite (its old name: benchmarks)", spec=SuiteSpec)
    tracking: Tracking | None = key("MLflow runs of every variant after a run", spec=Tracking)
    energy: PowerModel = key("the energy and CO2 estimate's constants", spec=PowerModel, default={})
    report: ReportSpec = key("figures and statistics of reports/index.html", spec=ReportSpec, default={})
    sprout: SproutSpec = key("SproutRAG: encoder windows and head training", spec=SproutSpec, default={})
    shards: ShardSpec = key(
        "per-document work cut into jobs of whole documents (execution-only)", spec=ShardSpec, default={}
    )
    llm: LLMSpec = key("the one LLM gateway", spec=LLMSpec, default={})


def required_sections() -> list[str]:
    """The top-level keys every config holds (an overlay without ``extends:`` misses them)."""
    return list(object_schema(ConfigKeys).get("required", []))


def full_schema() -> dict:
    """The config's schema: :class:`ConfigKeys` with the registered entries' keys and enumerations."""
    from pipeline.embed.backends import backend_names  # importing pipeline.embed registers the built-in ones

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **object_schema(ConfigKeys)}
    schema["definitions"] = {**copy.deepcopy(DEFINITIONS), "embed_backend": {"enum": backend_names()}}
    props = schema["properties"]
    props["indexes"]["additionalProperties"] = _index_entry()
    props["retrieval"]["additionalProperties"] = _retrieval_variant()
    props["answering"]["additionalProperties"] = _answering_variant()
    props["suite"]["properties"]["datasets"] = _subsets(
        suite_datasets.names(), props["suite"]["properties"]["datasets"]
    )
    train = props["sprout"]["properties"]["train"]["properties"]
    train["datasets"] = _subsets(suite_datasets.training_names(), train["datasets"])
    return schema


def _index_entry() -> dict:
    """An index: the keys every kind takes and each kind's own (validation writes its kind's defaults)."""
    props = declared_schema(IndexSpec, *(get_kind(n).spec for n in kind_names()), defaults=False)
    props["kind"] = {**props["kind"], "enum": kind_names()}
    return {"type": "object", "required": ["kind"], "additionalProperties": False, "properties": props}


def _retrieval_variant() -> dict:
    """A retrieval variant: :class:`RetrievalSpec`'s keys, each kind's searcher keys, the registered planner
    kinds' keys and fusion modes."""
    out = object_schema(RetrievalSpec)
    searchers = [s for s in (get_kind(n).search_spec for n in kind_names()) if s]
    out["properties"].update(declared_schema(*searchers, defaults=False))
    planner = out["properties"]["planner"]
    kinds = [k.spec for k in PLANNERS.entries() if k.spec]
    planner["properties"] = declared_schema(PlannerSpec, *kinds, defaults=False)
    planner["properties"]["kind"]["enum"] = PLANNERS.names()
    hybrid = out["properties"]["hybrid"]["properties"]
    hybrid["mode"] = {**hybrid["mode"], "enum": FUSIONS.names()}
    return out


def _answering_variant() -> dict:
    """An answering variant: every backend's keys (its spec checks which its backend takes, naming the key)."""
    props = declared_schema(*(b.spec for b in answer_backends.BACKENDS.entries()), defaults=False)
    props["backend"] = {**props["backend"], "enum": answer_backends.names()}
    return {"type": "object", "required": ["backend"], "properties": props}


def _subsets(names: list[str], declared: dict) -> dict:
    """dataset -> its subset: the registered datasets (``names``), each its loader's ``Subset`` keys."""
    props = {}
    for name in names:
        subset = object_schema(suite_datasets.get(name).subset, defaults=False)
        props[name] = {**subset, "type": ["object", "null"], "description": f"{name}'s subset: its loader's keys"}
    return {
        "description": declared.get("description", ""),
        "type": "object",
        "additionalProperties": False,
        "properties": props,
    }
