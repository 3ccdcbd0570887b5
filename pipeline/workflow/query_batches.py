"""The DAG's query batches (pipeline/shards.py: query_batches): which retrievals run in batches, and their files.

A retrieval-suite split larger than ``shards.max_queries`` is retrieved one ``retrieve_batch`` job per batch of
consecutive queries (pipeline/rules/shards.smk), and its ``retrieve`` job joins the batches' rows in query order
into the bytes the whole job writes. The count is read off the export's queries file, the ``suite_export``
checkpoint's output, so Snakemake plans the batches once the export exists. The batches reach the ``retrieve``
job after its questions file (``--questions QUESTIONS BATCH...``): its shell text, params and inputs stay those
of a whole job when one batch holds the split, so nothing reruns. Each batch loads the whole index (BM25's
document frequencies stay corpus-wide). A cross-fitted retrieval (SproutRAG's trained heads, sprout.train.folds)
is batched the same way: ``retrieve_crossfit_batch`` jobs, each opening every fold's index and retrieving its rows
with their folds', joined by ``retrieve_crossfit``. WattBot's and a corpus's splits (hundreds of questions, whose
answers cost more than their retrieval) and the LLM-planned retrievals run whole.
"""

from __future__ import annotations

from typing import Any

from pipeline import paths
from pipeline.io import read_csv_columns
from pipeline.shards import Shard, query_batches
from pipeline.workflow.datasets import SuiteExport, indexed_dataset, questions_path


def max_queries(cfg: dict) -> int:
    """``shards.max_queries``: execution-only (no params, no config hash: pipeline/config/slices.py)."""
    return int(cfg["shards"]["max_queries"])


def query_count(checkpoints: Any, dataset: str, split: str) -> int | None:
    """The queries of a suite dataset's ``split`` (a smoke run's first N of them); None for a split that runs
    whole (WattBot's, a corpus's). Raises Snakemake's IncompleteCheckpointException until the export exists."""
    if not isinstance(indexed_dataset(dataset), SuiteExport):
        return None
    checkpoints.suite_export.get(dataset=dataset)
    n = len(read_csv_columns(paths.export_split(dataset, split)).get("id", []))
    first = paths.limit()  # a smoke run retrieves its first N questions
    return min(n, first) if first else n


def retrieve_batches(cfg: dict, checkpoints: Any, dataset: str, split: str) -> list[Shard]:
    """The batches a split is retrieved in: none when one batch holds it (its job retrieves it whole)."""
    n = query_count(checkpoints, dataset, split)
    batches = query_batches(n, max_queries(cfg)) if n is not None else []
    return batches if len(batches) > 1 else []


def retrieval_batches(cfg: dict, checkpoints: Any, dataset: str, rv: str, split: str) -> list[str]:
    """The batch files a ``retrieve`` job joins (none: it retrieves whole); the rule's input of its own, so
    while the export is pending Snakemake stands the checkpoint's file in for it alone."""
    return [paths.retrieval_batch(dataset, rv, split, b.id) for b in retrieve_batches(cfg, checkpoints, dataset, split)]


def retrieve_questions(cfg: dict, checkpoints: Any, dataset: str, rv: str, split: str) -> list[str]:
    """``--questions`` of a ``retrieve`` job: the split's questions, then the batches it joins (if any). While
    the export is pending, the questions alone: the job is planned again once the checkpoint has run."""
    from snakemake.exceptions import IncompleteCheckpointException

    try:
        batches = retrieval_batches(cfg, checkpoints, dataset, rv, split)
    except IncompleteCheckpointException:
        batches = []
    return [questions_path(dataset, split), *batches]
