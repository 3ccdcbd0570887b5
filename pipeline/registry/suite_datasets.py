"""The registry of retrieval-suite datasets: what ``suite.datasets`` (and ``sprout.train.datasets``) may name.

A dataset is a loader module: ``load(root, **subset) -> SuiteTables``, a ``DEFAULT_SUBSET``, its
``Subset`` (the keys a config's subset may hold, each declared beside its field: a :class:`SuiteSubset`
subclass) and one :func:`register` call at its end (pipeline/datasets/hotpotqa.py). The built-in loaders
register when pipeline/datasets/suite_loaders.py imports them (a driver does: pipeline/register_builtins.py);
a dataset outside the package registers the same way at the end of its own module, a plugin: an entry point
in group ``wattbench.suite_datasets`` naming that module (pipeline/registry/base.py; tests/datasets/toy_suite.py).
The export stage (pipeline/datasets/suite.py), the config's schema (its enumerations and each dataset's subset
keys: a typo fails at load, naming the key) and SproutRAG's head training read this registry; nothing else
names a dataset.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from pipeline.config_schema import key
from pipeline.names import check_name
from pipeline.registry.base import Registry


@dataclass(frozen=True, kw_only=True)
class SuiteSubset:
    """The keys every dataset's subset takes; a loader's ``Subset`` subclasses it with its own."""

    full: bool = key(
        "start from every item instead of the loader's DEFAULT_SUBSET (the other keys still filter)",
        type="boolean",
        default=False,
    )
    exclude_pilot: dict | None = key(
        "a pilot's subset of this dataset (config.pilot.yaml's entry, with its `pilot` key): its queries are left "
        "out (their documents stay in the corpus), so a full run scores no query the pilot chose sizes on",
        type=("object", "null"),
        field_default=None,
    )
    doc_fraction: float | None = key(
        "keep this share of the subset's documents, whole, first in a fixed order of their ids (so a smaller share "
        "is inside a larger one), and the queries whose gold lies in them: the corpus sizes of `make bench-scale`",
        type=("number", "null"),
        field_default=None,
        schema={"exclusiveMinimum": 0, "maximum": 1},
    )


@dataclass(frozen=True)
class SuiteDataset:
    name: str
    loader: str  # dotted module with load(root, **subset) and DEFAULT_SUBSET
    folder: str  # its folder under <data root>/retrieval (= suite.root)
    aliases: tuple[str, ...] = ()  # other spellings load_suite_tables accepts
    train_group: str | None = None  # SproutRAG head training: what makes chunks co-relevant ("span",
    #                                   "query"); None: not offered as a training set
    subset: type[SuiteSubset] = SuiteSubset  # the keys its subset takes (its loader's Subset)

    def __post_init__(self):
        # its name and aliases are `suite.datasets` keys, so folders under results/ and reports/
        for name in (self.name, self.folder, *self.aliases):
            check_name(name, f"suite dataset registered by {self.loader}")

    def module(self) -> ModuleType:
        return importlib.import_module(self.loader)


GROUP = "wattbench.suite_datasets"  # the entry-point group of datasets kept outside the package (plugins)
SUITE_DATASETS: Registry[SuiteDataset] = Registry("suite dataset", GROUP, builtins="pipeline.datasets.suite_loaders")
register = SUITE_DATASETS.register
unregister = SUITE_DATASETS.unregister


def canonical(name: str) -> str:
    """The registered name of ``name`` or one of its aliases (case-insensitive); KeyError otherwise."""
    low = name.lower()
    for d in SUITE_DATASETS.entries():
        if low == d.name or low in d.aliases:
            return d.name
    raise KeyError(f"unknown suite dataset {name!r}; known: {SUITE_DATASETS.names()}")


def get(name: str) -> SuiteDataset:
    return SUITE_DATASETS.get(canonical(name))


def names() -> list[str]:
    return SUITE_DATASETS.names()


def training_names() -> list[str]:
    """The datasets SproutRAG's heads may train on (those with a ``train_group``)."""
    return [d.name for d in SUITE_DATASETS.entries() if d.train_group]
