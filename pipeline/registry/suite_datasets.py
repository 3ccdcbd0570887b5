"""The registry of retrieval-suite datasets: what ``benchmarks.datasets`` (and
``sprout.train.datasets``) may name.

A dataset is a loader module (``load(root, **subset) -> SuiteTables`` and a
``DEFAULT_SUBSET``; see pipeline/datasets/hotpotqa.py) plus one :func:`register` call here (or, for
a dataset outside the package, at the end of its own module, a plugin: an entry point in group
``wattbench.suite_datasets`` naming that module, pipeline/registry/base.py; tests/datasets/toy_suite.py). The export stage
(pipeline/datasets/suite.py), the config schema's enumerations (pipeline/config/validate.py) and
SproutRAG's head training read this registry; nothing else names a dataset. Standard library only,
so validating a config loads no loader.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from pipeline.names import check_name
from pipeline.registry.base import Registry


@dataclass(frozen=True)
class SuiteDataset:
    name: str
    loader: str  # dotted module with load(root, **subset) and DEFAULT_SUBSET
    folder: str  # its folder under <data root>/retrieval (= benchmarks.root)
    aliases: tuple[str, ...] = ()  # other spellings load_suite_tables accepts
    train_group: str | None = None  # SproutRAG head training: what makes chunks co-relevant ("span",
    #                                   "query"); None: not offered as a training set

    def __post_init__(self):
        # its name and aliases are `benchmarks.datasets` keys, so folders under results/ and reports/
        for name in (self.name, self.folder, *self.aliases):
            check_name(name, f"suite dataset registered by {self.loader}")

    def module(self) -> ModuleType:
        return importlib.import_module(self.loader)


GROUP = "wattbench.suite_datasets"  # the entry-point group of datasets kept outside the package (plugins)
SUITE_DATASETS: Registry[SuiteDataset] = Registry("suite dataset", GROUP)
register = SUITE_DATASETS.register
unregister = SUITE_DATASETS.unregister

for _d in (
    SuiteDataset(
        "legalbench_rag",
        "pipeline.datasets.legalbench",
        "legalbench_rag",
        ("legalbench", "legalbench-rag"),
        train_group="span",
    ),
    SuiteDataset("hotpotqa", "pipeline.datasets.hotpotqa", "hotpotqa", ("hotpot_qa",), train_group="query"),
    SuiteDataset("dragonball", "pipeline.datasets.dragonball", "dragonball"),
    SuiteDataset("msmarco", "pipeline.datasets.msmarco", "msmarco", ("msmarco_dl", "trec_dl")),
):
    register(_d)


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
