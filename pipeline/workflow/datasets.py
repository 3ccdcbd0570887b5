"""The datasets the index and retrieval rules read, each a registry entry that says where its trees and
questions are: WattBot (one parsed tree per document, the ingested splits) and every retrieval-suite
dataset (its export's trees folder and queries). The rules ask the entry; no rule compares dataset names."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline import layout as L
from pipeline import suite_datasets
from pipeline.registry import Registry
from pipeline.workflow.wattbot import doc_ids


@dataclass(frozen=True)
class SuiteExport:
    """A retrieval-suite dataset: the export stage writes its trees folder and its queries."""

    name: str

    def tree_files(self, cfg: dict) -> list[str]:
        return [L.export_trees(self.name)]

    def questions(self, split: str) -> str:
        return L.export_split(self.name, split)


@dataclass(frozen=True)
class WattBotDataset:
    """WattBot 2025: one parsed tree per configured document, the question splits the ingest wrote."""

    name: str = L.WATTBOT

    def tree_files(self, cfg: dict) -> list[str]:
        return [L.tree(d) for d in doc_ids(cfg)]

    def questions(self, split: str) -> str:
        return L.ingest_split(split)


IndexedDataset = SuiteExport | WattBotDataset
DATASETS: Registry[IndexedDataset] = Registry("dataset", suite_datasets.EXTRA_ENV)
DATASETS.register(WattBotDataset())


def indexed_dataset(name: str) -> IndexedDataset:
    """The entry of ``name``: WattBot's, or a retrieval-suite dataset's (also one registered outside the
    package, pipeline/suite_datasets.py); an unknown name is an error naming the known ones."""
    for d in suite_datasets.DATASETS.entries():
        DATASETS.register(SuiteExport(d.name))
    return DATASETS.get(name)


def tree_files(cfg: dict, dataset: str) -> list[str]:
    """The tree files an index of ``dataset`` is built from (the index and attention rules' input)."""
    return indexed_dataset(dataset).tree_files(cfg)


def tree_files_arg(cfg: dict, dataset: str) -> str:
    """:func:`tree_files` as ``python -m pipeline index --trees`` takes them: a comma list of files, or a folder."""
    return ",".join(tree_files(cfg, dataset))


def questions_path(dataset: str, split: str) -> str:
    return indexed_dataset(dataset).questions(split)
