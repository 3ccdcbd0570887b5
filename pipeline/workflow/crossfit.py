"""SproutRAG's cross-fitting in the DAG (sprout.train.folds, #45 item 2; docs/sproutrag.md): which datasets
and retrieval variants are cross-fitted, and each fold's index and retrieval inputs and arguments."""

from __future__ import annotations

import re

from pipeline import paths
from pipeline.workflow.indexes import index_extra_args, index_inputs
from pipeline.workflow.params import retrieval_params
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


# The retrieve-crossfit verb's command line: a batch job's adds --batch; the whole job's text is the one it had
# before batches (a rule's shell text is its rerun trigger).
CROSSFIT_SHELL = (
    "{{PY:q}} -m pipeline retrieve-crossfit --index-dir results/{{wildcards.dataset}}/index "
    "--questions {{input.questions:q}}{batch} --params {{params.cfg:q}} --folds {{params.folds}} {{params.files}} "
    "--export-dir results/{{wildcards.dataset}}/export --cache-dir {{CACHE:q}} --out {{output:q}} 2>&1 | tee {{log}}"
)


def crossfit_shell(batch: bool) -> str:
    """The shell text of retrieve_crossfit (``batch`` False) or retrieve_crossfit_batch (pipeline/rules/sprout.smk)."""
    return CROSSFIT_SHELL.format(batch=" --batch {wildcards.batch}" if batch else "")


def crossfit_rule_inputs(cfg: dict) -> dict:
    """The named inputs both cross-fitted retrieval rules read besides their questions (and the whole job's batches):
    every fold's index and the export's trees and gold, which assign queries and documents to folds."""
    return {
        "indexes": lambda w: retrieve_crossfit_inputs(cfg, w.dataset, w.rv),
        "trees": paths.export_trees(),
        "gold": paths.export_gold(),
    }


def crossfit_rule_params(cfg: dict) -> dict:
    """The params both cross-fitted retrieval rules pass: the variant's retrieval params, K, each fold's index."""
    return {
        "cfg": lambda w: retrieval_params(cfg, w.rv),
        "folds": crossfit_folds(cfg),
        "files": lambda w: fold_index_args(cfg, w.dataset, w.rv),
    }


def crossfit_wildcards(cfg: dict) -> dict[str, str]:
    """Both rules' wildcard constraints: only the cross-fitted datasets' suite queries and variants."""
    return {
        "dataset": "|".join(map(re.escape, crossfit_datasets(cfg))),
        "rv": "|".join(map(re.escape, crossfit_variants(cfg))),
        "split": "queries",
    }
