"""SproutRAG in the DAG: the attention and head-training params, the suite exports training must not
see, and the beam-sweep report's params and files."""

from __future__ import annotations

import json

from pipeline import paths
from pipeline.config import retrieval_root
from pipeline.specs import BeamSpec
from pipeline.workflow.named_files import NamedFiles
from pipeline.workflow.params import as_json, metrics_param, with_hash
from pipeline.workflow.suite import suite_datasets, suite_ks, suite_variants

SPROUT_DIR = paths.SPROUT_DIR  # named in rule sprout_train_pairs' shell text (a changed text reruns the rule)


def sprout_attention_params(cfg: dict) -> str:
    from pipeline.config import sprout_attention_slice

    return as_json(sprout_attention_slice(cfg))


def sprout_train_params(cfg: dict) -> str:
    from pipeline.config import sprout_attention_slice

    return as_json(
        {
            "train": cfg["sprout"]["train"],
            "attention": sprout_attention_slice(cfg),
            "root": retrieval_root(cfg),
        }
    )


def sprout_train_excludes(cfg: dict) -> dict[str, str]:
    """Suite exports whose queries and documents training must not see (the evaluated ones); none when
    cross-fitting (each fold's heads hold out that fold instead: :func:`crossfit_datasets`)."""
    if crossfit_folds(cfg):
        return {}
    return {d: paths.export_dir(d) for d in sorted(cfg["sprout"]["train"]["datasets"]) if d in suite_datasets(cfg)}


# --- cross-fitting (sprout.train.folds, #45 item 2: docs/sproutrag.md) ---


def crossfit_folds(cfg: dict) -> int | None:
    """``sprout.train.folds``: K folds, or None (the held-out scheme)."""
    return (cfg["sprout"].get("train") or {}).get("folds")


def crossfit_datasets(cfg: dict) -> list[str]:
    """The scored suite datasets the heads also train on: their trained-head retrievals are cross-fitted.
    The other datasets (and WattBot) are scored with sprout_train's heads, trained on data outside them."""
    if not crossfit_folds(cfg):
        return []
    return sorted(set(cfg["sprout"]["train"]["datasets"]) & set(suite_datasets(cfg)))


def trained_head_indexes(cfg: dict, retrieval_variants: list[str]) -> list[str]:
    """The indexes these retrieval variants search whose kind needs SproutRAG's trained head weights."""
    from pipeline.config import retrieval_indexes
    from pipeline.registry.index_kinds import kind_of

    names = sorted({i for v in retrieval_variants for i in retrieval_indexes(cfg, v)})
    out = []
    for index in names:
        kind = kind_of(cfg["indexes"][index])
        if paths.SPROUT_HEAD_WEIGHTS in kind.extra_inputs(kind.parse(index, cfg["indexes"][index]), "-").values():
            out.append(index)
    return out


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
    from pipeline.workflow.indexes import index_inputs

    heads = paths.sprout_fold_heads(dataset, fold)
    return [heads if p == paths.SPROUT_HEAD_WEIGHTS else p for p in index_inputs(cfg, dataset, index)]


def fold_index_extra_args(cfg: dict, dataset: str, index: str, fold: str) -> str:
    """The ``index`` verb's ``--input`` arguments (:func:`index_extra_args`), fold ``fold``'s heads for the
    trained ones."""
    from pipeline.workflow.indexes import index_extra_args

    trained, heads = (
        f"head_weights={paths.SPROUT_HEAD_WEIGHTS}",
        f"head_weights={paths.sprout_fold_heads(dataset, fold)}",
    )
    return " ".join(heads if a == trained else a for a in index_extra_args(cfg, dataset, index).split(" "))


def fold_index_args(cfg: dict, dataset: str, rv: str) -> str:
    """``--fold-index NAME=PATH``, once per fold in fold order (the retrieve-crossfit verb)."""
    return " ".join(f"--fold-index {n}={f}" for n, fs in fold_index_files(cfg, dataset, rv).items() for f in fs)


def sprout_report_params(cfg: dict) -> str:
    sweep = cfg["sprout"].get("beam_sweep", [])
    return with_hash(
        {
            "sweep": {v: BeamSpec.from_dict(cfg["retrieval"][v]).beam_width for v in sweep},
            "datasets": [d for d in suite_datasets(cfg) if set(sweep) <= set(suite_variants(cfg))],
            "ks": suite_ks(cfg),
        }
        | metrics_param(cfg)
    )


def sprout_report_inputs(cfg: dict) -> NamedFiles:
    """The beam sweep's suite scores (DATASET:VARIANT) and WattBot retrieval runs of the scored split."""
    sweep = cfg["sprout"].get("beam_sweep", [])
    datasets = json.loads(sprout_report_params(cfg))["datasets"]
    return {
        "scores": {f"{d}:{v}": paths.suite_scores(d, v) for d in datasets for v in sweep},
        "wattbot": {v: paths.retrieval(paths.WATTBOT, v, cfg["wattbot"]["score_split"]) for v in sweep},
    }


def sprout_report_index(cfg: dict) -> list[str]:
    """The WattBot index of the sweep's first variant (one document's tree is drawn from it)."""
    sweep = cfg["sprout"].get("beam_sweep", [])
    return [paths.index(paths.WATTBOT, cfg["retrieval"][sweep[0]]["index"])] if sweep else []


def sprout_targets(cfg: dict) -> list[str]:
    """The beam sweep's figure (WattBot's and the suite's runs: none when either folder is missing)."""
    from pipeline.config import suite_present, wattbot_present

    present = wattbot_present(cfg) and suite_present(cfg)
    return [paths.reports.sprout_beam_png] if cfg["sprout"].get("beam_sweep") and present else []
