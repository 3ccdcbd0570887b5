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
    cross-fitting (each fold's heads hold out that fold instead: pipeline/workflow/crossfit.py)."""
    if crossfit_folds(cfg):
        return {}
    return {d: paths.export_dir(d) for d in sorted(cfg["sprout"]["train"]["datasets"]) if d in suite_datasets(cfg)}


# --- cross-fitting (sprout.train.folds, #45 item 2: docs/sproutrag.md) ---


def crossfit_folds(cfg: dict) -> int | None:
    """``sprout.train.folds``: K folds, or None (the held-out scheme)."""
    return (cfg["sprout"].get("train") or {}).get("folds")


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
