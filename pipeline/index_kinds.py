"""The registry of index kinds: what ``indexes.<name>.kind`` may name.

An :class:`IndexKind` says, in one place, everything the rest of the pipeline needs to know about
a kind: which config keys it takes and their defaults (read by :mod:`pipeline.config`), which extra
files its build reads (:mod:`pipeline.workflow`, the ``index`` rule), how to build it (the ``index``
verb) and how to search it (the ``retrieve`` verb). Nothing else switches on the kind's name.

The kinds live one module each in :mod:`pipeline.indexes` (``tree``, ``chunks``, ``bm25``,
``sprout``), each calling :func:`register` at import; every module of that package is loaded on
the first lookup, so a new kind is a new module there plus its config entry (docs/architecture.md, "Adding an index kind").
Modules outside the package (a test's toy kind) are named in ``WATTBENCH_INDEX_KINDS``
(comma-separated), which Snakemake's jobs inherit. This module imports nothing of the pipeline but
the config's schema lists (pipeline.specs), so the config layer can consult it without loading any
stage; kind modules import their building blocks inside their build and search functions for the
same reason.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pipeline import specs  # the config layer (schema lists), no stage

if TYPE_CHECKING:
    from pipeline.index.store import StoredNode

PACKAGE = "pipeline.indexes"
EXTRA_ENV = "WATTBENCH_INDEX_KINDS"  # more kind modules to load, comma-separated (out-of-tree kinds)
TREE_LEVELS = frozenset(specs.TREE_LEVELS)  # the config schema's list (pipeline.tree.LEVELS)


class ConfigProblem(ValueError):
    """A kind's check failed: ``key`` is the config key (dotted) the message is about."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key, self.message = key, message


class Searcher(Protocol):
    """What the retrieval stage needs of a built index (see :class:`pipeline.retrieve.run.Searchers`)."""

    store: Any  # an IndexReader-like object: node(id), node_by_rowid, db (for context expansion)

    def search(self, query: str, qvec, k: int) -> list[tuple[StoredNode, float]]:
        """The top ``k`` nodes for ``query`` (its vector ``qvec``, None when nothing embeds queries)."""


# build(tree_paths, out_path, params, inputs, cache_dir) -> stats; params is the index slice of the config
Builder = Callable[[list[str], str, dict, dict, str], dict]
# searcher(index_path, retrieval params, cache_dir) -> Searcher
SearcherFactory = Callable[[Path, dict, str | Path], Searcher]


def _no_check(name: str, entry: dict, cfg: dict) -> None:
    return None


def _no_inputs(cfg: dict, dataset: str, index: str) -> dict[str, str]:
    return {}


def _no_slice(cfg: dict) -> dict:
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
    embeds: bool = False  # built with the `embedding` backend (takes `embedding:`)
    index_keys: frozenset[str] = frozenset()  # kind-only keys of indexes.<name> (levels, heads, ...)
    index_defaults: dict = field(default_factory=dict)
    levels_from_index: bool = False  # searchable levels = the index's own `levels`
    retrieval_keys: frozenset[str] = frozenset()  # kind-only keys of retrieval.<v> (its searcher's settings)
    no_expand: str | None = None  # why its variants must use expand: none (None: they may expand)
    hybrid_role: str | None = None  # "dense" or "lexical": which side of a hybrid it can be
    tree_vectors: bool = False  # a vector at every tree level (the report's embedding map)
    parents_are_context: bool = True  # a hit's parent is its context (sprout: its merge partner)
    check_index: Callable[[str, dict, dict], None] = _no_check  # extra checks of indexes.<name> (raise ConfigProblem)
    extra_inputs: Callable[[dict, str, str], dict[str, str]] = _no_inputs  # {input name: path} beyond the trees
    extra_slice: Callable[[dict], dict] = _no_slice  # config beyond `index` that shapes the built file

    def searchable_levels(self, entry: dict) -> set[str]:
        return set(entry.get("levels", [])) if self.levels_from_index else set(self.levels)


_KINDS: dict[str, IndexKind] = {}
_scanned: str | None = None  # the WATTBENCH_INDEX_KINDS value of the last scan (None: not scanned yet)


def register(kind: IndexKind) -> IndexKind:
    """Make ``kind`` known under its name (a second kind of the same name is an error)."""
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise ValueError(f"index kind '{kind.name}' is registered twice")
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Forget a kind (tests that register a toy kind clean up with this); the next lookup rescans."""
    global _scanned
    _KINDS.pop(name, None)
    _scanned = None


def _load_builtins() -> None:
    """Import every module of :mod:`pipeline.indexes` and those named in ``WATTBENCH_INDEX_KINDS``
    (each registers its kind; an import already done is a no-op)."""
    global _scanned
    env = os.environ.get(EXTRA_ENV, "")
    if _scanned == env:
        return
    package = importlib.import_module(PACKAGE)
    modules = [f"{PACKAGE}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if m.name != "registry"]
    modules += [m.strip() for m in os.environ.get(EXTRA_ENV, "").split(",") if m.strip()]
    for module in modules:
        importlib.import_module(module)
    _scanned = env


def get_kind(name: str) -> IndexKind:
    """The registered kind ``name``; a ValueError naming the known kinds otherwise."""
    _load_builtins()
    if name not in _KINDS:
        raise ValueError(f"unknown index kind '{name}' (have {sorted(_KINDS)})")
    return _KINDS[name]


def kind_names() -> list[str]:
    _load_builtins()
    return sorted(_KINDS)


def kind_of(entry: dict) -> IndexKind:
    """The kind of one ``indexes.<name>`` config entry."""
    return get_kind(entry["kind"])
