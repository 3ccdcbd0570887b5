"""The registry of index kinds: what ``indexes.<name>.kind`` may name.

An :class:`IndexKind` says, in one place, everything the rest of the pipeline needs to know about
a kind: its typed spec (the keys ``indexes.<name>`` takes, each declared beside its field with its type,
default and description: pipeline.config_schema.key; the schema's part for them is generated from these),
its searcher's settings (the keys a ``retrieval.<v>`` of it takes, declared the same way), which extra files its build reads
(:mod:`pipeline.workflow`, the ``index`` rule), how to build it (an :class:`IndexJob`, made by the
``index`` verb) and how to search it (a :class:`SearchJob`, made by the ``retrieve`` verb). Nothing
else switches on the kind's name.

The kinds live one module each in :mod:`pipeline.indexes` (``tree``, ``chunks``, ``bm25``,
``sprout``), each registering its kind at import; that package imports them all, and a driver imports
it (pipeline/register_builtins.py): this module, on the shared floor, never loads a stage. A kind outside
the package is a plugin: an entry point in group ``wattbench.index_kinds`` naming its module
(pipeline/registry/base.py; a test's toy kind: tests/index/toy_lead_kind.py). Kind modules import their
building blocks inside their build and search functions, so validating a config loads no stage code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

from pipeline.config_schema import TREE_LEVELS as LEVEL_NAMES
from pipeline.config_schema import ConfigError, ConfigTable, declared_defaults, key, parse_spec
from pipeline.registry.base import Registry

# The registry sits below the specs its entries parse (pipeline.specs imports it to look kinds up) and
# below the index stage: fields typed Any below name the class they hold, not imported (no upward import).
__all__ = ["ConfigError", "IndexJob", "IndexKind", "IndexSpec", "SearchJob", "get_kind", "kind_of", "register"]

GROUP = "wattbench.index_kinds"  # the entry-point group of kinds kept outside the package (plugins)
TREE_LEVELS = frozenset(LEVEL_NAMES)  # the config's tree levels (pipeline.tree.LEVELS)


@dataclass(frozen=True)
class IndexSpec:
    """``indexes.<name>``: the keys every kind takes; a kind with keys of its own subclasses it."""

    name: str  # the entry's name (not a key)
    kind: str = key("a registered index kind (pipeline/indexes/)", type="string")
    embedding: str | None = key("an embedding_models entry instead of `embedding` (kinds that embed)", type="string")


@dataclass(frozen=True)
class IndexJob:
    """One ``index`` job, made by the ``index`` verb from the rule's params: what a kind's builder reads."""

    spec: IndexSpec
    trees: list[str]  # DocTree JSON paths
    out: str
    inputs: dict[str, str]  # the kind's extra inputs by name (IndexKind.extra_inputs)
    cache_dir: str
    embedding: Any  # a pipeline.specs.EncoderSpec for kinds that embed, else None
    provenance: dict  # the rule's hashed params: recorded in the manifest and the file, never read for settings
    # A kind with ``shards`` (pipeline/shards.py): ``part`` builds one shard's part of the index at ``out`` (its
    # trees: the shard's); ``parts`` merges those parts, in document order, into the index at ``out``.
    part: bool = False
    parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchJob:
    """What a kind's searcher is made from, for one retrieval variant (pipeline.retrieve.run.RetrieveJob)."""

    path: Path
    retrieval: Any  # the variant's pipeline.specs.RetrievalSpec
    settings: Any  # the kind's searcher settings (IndexKind.search_spec), None for a kind without any
    embedding: Any  # the variant's query encoder, a pipeline.specs.EncoderSpec (None: nothing of it embeds)
    cache_dir: Path


class Searcher(Protocol):
    """What the retrieval stage needs of a built index (see :class:`pipeline.retrieve.run.Searchers`)."""

    store: Any  # an IndexReader-like object: node(id), node_by_rowid, db (for context expansion)

    def search(
        self, query: str, qvec, k: int
    ) -> list[tuple[Any, float]]:  # (pipeline.index_structures.store.StoredNode, score)
        """The top ``k`` nodes for ``query`` (its vector ``qvec``, None when nothing embeds queries)."""


Builder = Callable[[IndexJob], dict]  # -> stats
SearcherFactory = Callable[[SearchJob], Searcher]


def _no_check(index: IndexSpec, sprout: object) -> None:
    return None


def _no_inputs(index: IndexSpec, dataset: str) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class IndexKind:
    """One index kind. ``source`` names its ranked list in hits (``source: dense+bm25``) and in hybrids."""

    name: str
    build: Builder
    searcher: SearcherFactory
    source: str
    levels: frozenset[str]  # levels a retrieval variant may search
    default_levels: tuple[str, ...]  # retrieval.<v>.levels when unset
    default_expand: str  # retrieval.<v>.expand when unset
    spec: type = IndexSpec  # its keys of indexes.<name>: an IndexSpec (sub)class
    search_spec: type | None = None  # its keys of retrieval.<v>: its searcher's settings (a dataclass)
    embeds: bool = False  # built with the `embedding` backend (takes `embedding:`)
    levels_from_index: bool = False  # searchable levels = the index's own `levels`
    no_expand: str | None = None  # why its variants must use expand: none (None: they may expand)
    hybrid_role: str | None = None  # "dense" or "lexical": which side of a hybrid it can be
    tree_vectors: bool = False  # a vector at every tree level (the report's embedding map)
    parents_are_context: bool = True  # a hit's parent is its context (sprout: its merge partner)
    sweeps_beam: bool = False  # its variants may be named by ``sprout.beam_sweep`` (a beam-width sweep)
    # each document's nodes and vectors are its own (no corpus-wide statistic), so its build runs one job per
    # shard of documents and one merge (IndexJob.part / .parts; pipeline/shards.py)
    shards: bool = False
    # The hooks take typed specs, never the config: the other section a kind reads is the `sprout` block
    # (a pipeline.specs.SproutSpec, Any here: the specs sit above this registry).
    check_index: Callable[[Any, Any], None] = _no_check  # (its spec, the sprout block): raise ConfigError
    extra_inputs: Callable[[Any, str], dict[str, str]] = (
        _no_inputs  # (its spec, dataset): {name: path} beyond the trees
    )
    extra_slice: Callable[[Any], dict] | None = None  # (the sprout block): settings beyond `index` shaping the file

    @property
    def index_keys(self) -> frozenset[str]:
        """Its own keys of ``indexes.<name>`` (beyond those every kind takes)."""
        return frozenset(f.name for f in fields(self.spec)) - {f.name for f in fields(IndexSpec)}

    @property
    def retrieval_keys(self) -> frozenset[str]:
        """Its own keys of ``retrieval.<v>`` (its searcher's settings)."""
        return frozenset(f.name for f in fields(self.search_spec)) if self.search_spec else frozenset()

    def index_defaults(self) -> dict:
        """The declared defaults of its own keys (validation writes them into the entry: the schema holds
        every kind's keys, so its filler cannot)."""
        return {k: v for k, v in declared_defaults(self.spec).items() if k in self.index_keys}

    def search_defaults(self) -> dict:
        """The declared defaults of its searcher's keys (validation writes them into each variant of it)."""
        return declared_defaults(self.search_spec) if self.search_spec else {}

    def parse(self, name: str, entry: ConfigTable) -> IndexSpec:
        """``indexes.<name>`` as its typed spec (a key of another kind is a ConfigError naming it)."""
        return parse_spec(self.spec, entry, f"indexes.{name}", name=name)

    def search_settings(self, variant: ConfigTable, where: str) -> object:
        """Its searcher's settings from ``retrieval.<v>`` (its keys there, their declared defaults)."""
        if self.search_spec is None:
            return None
        mine = {k: variant[k] for k in self.retrieval_keys if k in variant}
        return parse_spec(self.search_spec, mine, where)

    def searchable_levels(self, entry: ConfigTable) -> set[str]:
        return set(entry.get("levels", [])) if self.levels_from_index else set(self.levels)


KINDS: Registry[IndexKind] = Registry("index kind", GROUP, builtins="pipeline.indexes")
register = KINDS.register
unregister = KINDS.unregister
get_kind = KINDS.get
kind_names = KINDS.names


def kind_of(entry: ConfigTable) -> IndexKind:
    """The kind of one ``indexes.<name>`` config entry."""
    return get_kind(entry["kind"])
