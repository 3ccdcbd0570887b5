"""The retrieval suite in the DAG: its datasets and variants, the export params, the report's inputs."""

from __future__ import annotations

from pipeline import paths
from pipeline.config import retrieval_slice
from pipeline.config_schema import declared_defaults
from pipeline.specs import SuiteSpec
from pipeline.workflow.named_files import NamedFiles
from pipeline.workflow.params import as_json, limit_param, metrics_param, with_hash


def suite_datasets(cfg: dict) -> list[str]:
    return sorted((cfg.get("suite") or {}).get("datasets", {}))


def suite_variants(cfg: dict) -> list[str]:
    return list((cfg.get("suite") or {}).get("retrieval", []))


def suite_targets(cfg: dict) -> list[str]:
    """The suite's report, when configured and its data folder is there (see pipeline/config/folders.py check_paths)."""
    from pipeline.config import suite_present

    return [paths.reports.suite_metrics] if suite_datasets(cfg) and suite_variants(cfg) and suite_present(cfg) else []


def suite_export_params(cfg: dict, dataset: str) -> str:
    b = cfg["suite"]
    return as_json({"dataset": dataset, "root": b["root"], "subset": b["datasets"][dataset] or {}})


def suite_ks(cfg: dict) -> list[int]:
    """The suite's cutoffs: ``suite.ks`` (its declared default when the suite is not configured)."""
    return (cfg.get("suite") or declared_defaults(SuiteSpec))["ks"]


def suite_report_inputs(cfg: dict) -> NamedFiles:
    """The suite report's scores, named DATASET:VARIANT."""
    return {
        "scores": {f"{d}:{rv}": paths.suite_scores(d, rv) for d in suite_datasets(cfg) for rv in suite_variants(cfg)}
    }


def suite_report_params(cfg: dict) -> str:
    b = cfg.get("suite") or {}
    return with_hash(
        {
            "ks": suite_ks(cfg),
            "datasets": b.get("datasets", {}),
            "variants": {v: retrieval_slice(cfg, v) for v in suite_variants(cfg)},
        }
        | limit_param(cfg)
        | metrics_param(cfg)
    )
