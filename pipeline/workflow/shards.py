"""The DAG's shards (pipeline/shards.py): which index jobs run in shards of documents, and their files.

A dense index kind (``IndexKind.shards``: each document's nodes and vectors are its own) is built one
``index_part`` job per shard and merged by the ``index`` rule; the cut is read off the dataset's sizes file,
the ``doc_sizes`` checkpoint's output (pipeline/rules/shards.smk), so Snakemake plans these jobs once the
dataset's trees exist. A dataset whose documents fit one shard keeps today's single ``index`` job, its
inputs, params and shell text unchanged: nothing reruns and its bytes are the same. Kinds whose build needs
the corpus whole (BM25's document frequencies, SproutRAG's trees over the attention file) ask no checkpoint.
"""

from __future__ import annotations

from typing import Any

from pipeline import paths
from pipeline.registry.index_kinds import kind_of
from pipeline.shards import Shard, plan, read_sizes, select
from pipeline.workflow.datasets import tree_files


def max_chars(cfg: dict) -> int:
    """``shards.max_chars``: execution-only (no params, no config hash: pipeline/config/slices.py)."""
    return int(cfg["shards"]["max_chars"])


def dataset_shards(cfg: dict, checkpoints: Any, dataset: str) -> list[Shard]:
    """The cut of ``dataset``'s sizes file (``checkpoints``: the Snakefile's; Snakemake re-plans once the
    ``doc_sizes`` checkpoint has written it)."""
    return plan(read_sizes(checkpoints.doc_sizes.get(dataset=dataset).output[0]), max_chars(cfg))


def index_shards(cfg: dict, checkpoints: Any, dataset: str, index: str) -> list[Shard]:
    """The shards ``index`` of ``dataset`` is built in: none for a kind built whole (it asks no checkpoint)."""
    return dataset_shards(cfg, checkpoints, dataset) if kind_of(cfg["indexes"][index]).shards else []


def index_parts(dataset: str, index: str, shards: list[Shard]) -> list[str]:
    """The parts the ``index`` rule merges: none when one shard holds every document (it builds them whole)."""
    return [paths.index_part(dataset, index, s.id) for s in shards] if len(shards) > 1 else []


def sprout_attention_parts(dataset: str, shards: list[Shard]) -> list[str]:
    """The parts the ``sprout_attention`` rule joins: none in one shard (it computes the file whole)."""
    return [paths.sprout_attention_part(dataset, s.id) for s in shards] if len(shards) > 1 else []


def part_args(parts: list[str]) -> str:
    """``--part PATH`` per part, in order: how the merging verbs (index, sprout-attention) take them."""
    return " ".join(f"--part {p}" for p in parts)


def shard_tree_files(cfg: dict, checkpoints: Any, dataset: str, shard: str) -> list[str]:
    """The tree files an ``index_part`` job reads: a suite export's folder (the job picks the shard's files
    from it), else the shard's documents' own files."""
    trees = tree_files(cfg, dataset)
    if len(trees) == 1 and not trees[0].endswith(".json"):
        return trees
    sizes = read_sizes(checkpoints.doc_sizes.get(dataset=dataset).output[0])
    return select(trees, Shard.from_id(shard).docs(sizes))
