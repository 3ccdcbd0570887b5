"""SproutRAG's cross-fitting in the DAG (sprout.train.folds, #45 item 2; docs/sproutrag.md): which datasets
and retrieval variants are cross-fitted, and each fold's index and retrieval inputs and arguments."""

from __future__ import annotations

from pipeline import paths
from pipeline.workflow.indexes import index_extra_args, index_inputs
from pipeline.workflow.sprout import crossfit_folds, trained_head_indexes
from pipeline.workflow.suite import suite_datasets, suite_variants


def crossfit_datasets(cfg: dict) -> list[str]:
    """The scored suite datasets the heads also train on: their trained-head retrievals are cross-fitted.
    The other datasets (and WattBot) are scored with sprout_train's heads, trained on data outside them."""
    if not crossfit_folds(cfg):
        return []
    return sorted(set(cfg["sprout"]["train"]["datasets"]) & set(suite_datasets(cfg)))


def crossfit_variants(cfg: dict) -> list[str]:
    """The suite's retrieval variants that search a trained-head index (cross-fitted on crossfit_datasets)."""
    if not crossfit_folds(cfg):
        return []
    return [v for v in suite_variants(cfg) if trained_head_indexes(cfg, [v])]


def fold_index_files(cfg: dict, dataset: str, rv: str) -> dict[str, list[str]]:
    """{trained-head index of ``rv``: its K fold files, in fold order}."""
    k = crossfit_folds(cfg) or 0
    return {n: [paths.fold_index(dataset, str(f), n) for f in range(k)] for n in trained_head_indexes(cfg, [rv])}


def retrieve_crossfit_inputs(cfg: dict, dataset: str, rv: str) -> list[str]:
    """The fold indexes of ``rv``'s trained-head index and its other indexes as they are."""
    from pipeline.config import retrieval_indexes

    folds = fold_index_files(cfg, dataset, rv)
    shared = [paths.index(dataset, n) for n in retrieval_indexes(cfg, rv) if n not in folds]
    return shared + [f for fs in folds.values() for f in fs]


def fold_index_inputs(cfg: dict, dataset: str, index: str, fold: str) -> list[str]:
    """The trained-head index's inputs (:func:`index_inputs`) with fold ``fold``'s heads for the trained ones."""
    heads = paths.sprout_fold_heads(dataset, fold)
    return [heads if p == paths.SPROUT_HEAD_WEIGHTS else p for p in index_inputs(cfg, dataset, index)]


def fold_index_extra_args(cfg: dict, dataset: str, index: str, fold: str) -> str:
    """The ``index`` verb's ``--input`` arguments (:func:`index_extra_args`), fold ``fold``'s heads for the
    trained ones."""
    trained, heads = (
        f"head_weights={paths.SPROUT_HEAD_WEIGHTS}",
        f"head_weights={paths.sprout_fold_heads(dataset, fold)}",
    )
    return " ".join(heads if a == trained else a for a in index_extra_args(cfg, dataset, index).split(" "))


def fold_index_args(cfg: dict, dataset: str, rv: str) -> str:
    """``--fold-index NAME=PATH``, once per fold in fold order (the retrieve-crossfit verb)."""
    return " ".join(f"--fold-index {n}={f}" for n, fs in fold_index_files(cfg, dataset, rv).items() for f in fs)
