"""The datasets the index and retrieval rules read, each a registry entry that says where its trees and
questions are: WattBot (one parsed tree per document, the ingested splits), every retrieval-suite
dataset (its export's trees folder and queries) and every ``corpora:`` entry (one parsed tree per file of
its folder, its ingested questions). The answered datasets (WattBot and the corpora) also say where each
document's source, their metadata and their labels are, for the rules they share (tree, answer, ensemble,
evaluate, parse_errors). The rules ask the entry; no rule compares dataset names."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline import paths
from pipeline.registry import suite_datasets
from pipeline.registry.base import Registry
from pipeline.workflow.corpora import corpus_documents
from pipeline.workflow.wattbot import doc_ids, labels_source, tree_source


@dataclass(frozen=True)
class SuiteExport:
    """A retrieval-suite dataset: the export stage writes its trees folder and its queries."""

    name: str

    def tree_files(self, cfg: dict) -> list[str]:
        return [paths.export_trees(self.name)]

    def questions(self, split: str) -> str:
        return paths.export_split(self.name, split)


@dataclass(frozen=True)
class WattBotDataset:
    """WattBot 2025: one parsed tree per configured document, the question splits the ingest wrote."""

    name: str = paths.WATTBOT

    def tree_files(self, cfg: dict) -> list[str]:
        return [paths.tree(d) for d in doc_ids(cfg)]

    def questions(self, split: str) -> str:
        return paths.ingest_split(split)

    def source(self, cfg: dict, doc: str) -> str:
        return tree_source(cfg, doc)

    def metadata(self) -> str:
        return paths.INGEST_METADATA

    def solutions(self, cfg: dict) -> list[str]:
        """The labels the ``evaluate`` rule scores against: the score split's (pipeline/workflow/wattbot.py)."""
        return [labels_source(cfg, cfg["wattbot"]["score_split"])]

    def score_split(self, cfg: dict) -> str:
        return cfg["wattbot"]["score_split"]


@dataclass(frozen=True)
class CorpusDataset:
    """A ``corpora:`` entry: one parsed tree per document of its folder, its ingested questions (one split,
    ``questions``), metadata and labels (pipeline/datasets/corpus.py)."""

    name: str

    def tree_files(self, cfg: dict) -> list[str]:
        return [paths.tree(d, self.name) for d in corpus_documents(cfg, self.name)]

    def questions(self, split: str) -> str:
        return paths.corpus_ingest(self.name, "questions")

    def source(self, cfg: dict, doc: str) -> str:
        return corpus_documents(cfg, self.name)[doc]

    def metadata(self) -> str:
        return paths.corpus_ingest(self.name, "metadata")

    def solutions(self, cfg: dict) -> list[str]:
        """The ingested labels (none when the corpus has no solutions file)."""
        return [paths.corpus_ingest(self.name, "solutions")] if cfg["corpora"][self.name].get("solutions") else []

    def score_split(self, cfg: dict) -> str:
        return paths.CORPUS_SPLIT


AnsweredDataset = WattBotDataset | CorpusDataset
IndexedDataset = SuiteExport | AnsweredDataset
# where each dataset's files are; the suite's loaders are another registry (suite_datasets.SUITE_DATASETS), whose
# plugins this one takes its suite entries from: it has no entry-point group of its own
DATASET_FILES: Registry[IndexedDataset] = Registry("dataset")
DATASET_FILES.register(WattBotDataset())


def register_corpora(cfg: dict) -> list[str]:
    """A registry entry per ``corpora:`` entry (the Snakefile calls this once); their names."""
    for name in sorted(cfg.get("corpora") or {}):
        DATASET_FILES.register(CorpusDataset(name))
    return sorted(cfg.get("corpora") or {})


def answered_dataset(name: str) -> AnsweredDataset:
    """The entry of an answered dataset (WattBot or a registered corpus)."""
    entry = indexed_dataset(name)
    if not isinstance(entry, WattBotDataset | CorpusDataset):
        raise ValueError(f"dataset '{name}' is not answered (a retrieval-suite dataset)")
    return entry


def indexed_dataset(name: str) -> IndexedDataset:
    """The entry of ``name``: WattBot's, or a retrieval-suite dataset's (also one registered outside the
    package, pipeline/registry/suite_datasets.py); an unknown name is an error naming the known ones."""
    for d in suite_datasets.SUITE_DATASETS.entries():
        DATASET_FILES.register(SuiteExport(d.name))
    return DATASET_FILES.get(name)


def tree_files(cfg: dict, dataset: str) -> list[str]:
    """The tree files an index of ``dataset`` is built from (the index and attention rules' input)."""
    return indexed_dataset(dataset).tree_files(cfg)


def tree_files_arg(cfg: dict, dataset: str) -> str:
    """:func:`tree_files` as ``python -m pipeline index --trees`` takes them: a comma list of files, or a folder."""
    return ",".join(tree_files(cfg, dataset))


def use_limit(cfg: dict) -> None:
    """A smoke run (``limit: N``) lays out its question-shaped files apart (pipeline/paths.py): the Snakefile
    calls this once, before the rules read a path."""
    paths.use_limit(cfg.get("limit"))


def questions_path(dataset: str, split: str) -> str:
    """The questions a split's retrieval and answer jobs read: a smoke run's first N, else every one."""
    return paths.first_questions(dataset, split) if paths.limit() else full_questions_path(dataset, split)


def full_questions_path(dataset: str, split: str) -> str:
    return indexed_dataset(dataset).questions(split)


def split_gold(cfg: dict, dataset: str, split: str) -> str:
    """The labels of ``split`` of ``dataset`` a smoke run cuts (the first_gold rule's input): a suite
    export's gold, or an answered dataset's solutions of its score split."""
    entry = indexed_dataset(dataset)
    if isinstance(entry, SuiteExport):
        return paths.export_gold(dataset)
    if dataset == paths.WATTBOT:  # any labelled split (wattbot.solutions), not only the score split
        return labels_source(cfg, split)
    return entry.solutions(cfg)[0]


def gold_path(cfg: dict, dataset: str, split: str, ext: str = "csv") -> str:
    """The labels a scorer reads for ``split``: a smoke run's cut ones (:func:`split_gold`), else the full file."""
    return paths.first_gold(dataset, split, ext) if paths.limit() else split_gold(cfg, dataset, split)


def dataset_tree_source(cfg: dict, dataset: str, doc: str) -> str:
    """The file the ``tree`` rule parses for ``doc`` of ``dataset``."""
    return answered_dataset(dataset).source(cfg, doc)


def metadata_path(dataset: str) -> str:
    return answered_dataset(dataset).metadata()


def solutions_path(cfg: dict, dataset: str) -> list[str]:
    """The labels the ``evaluate`` rule scores ``dataset`` against (none for a corpus without solutions)."""
    full = answered_dataset(dataset).solutions(cfg)
    return [gold_path(cfg, dataset, score_split(cfg, dataset))] if full else []


def score_split(cfg: dict, dataset: str) -> str:
    return answered_dataset(dataset).score_split(cfg)
