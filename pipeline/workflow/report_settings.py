"""What the steps after a run read of the config, as the report's typed settings: the energy estimate's
constants and served-here variants, and where MLflow runs go. Built once here, by the drivers (the
``time-table`` and ``track`` verbs, the Snakefile); pipeline/report/ never reads the config dict."""

from __future__ import annotations

from pipeline.config_schema import spec_defaults
from pipeline.llm.endpoints import LOCAL_PREFIX  # a model the job serves itself, on its own cores
from pipeline.report.export.tracking import Tracking, TrackSettings
from pipeline.report.telemetry.energy import EnergyInputs, PowerModel


def power_model(cfg: dict) -> PowerModel:
    """Config ``energy``, the schema's defaults where it says nothing."""
    return PowerModel(**{**spec_defaults("energy"), **(cfg.get("energy") or {})})


def served_here(variant: dict, default_model: str) -> bool:
    """Whether an answering variant's calls ran on the job's own cores (a ``local/`` model: its own
    ``model:``, else ``llm.model``; inside the job's CPU seconds) or drew nothing (a stand-in: litellm's
    ``mock_response``)."""
    model = variant.get("model") or default_model
    return model.startswith(LOCAL_PREFIX) or "mock_response" in (variant.get("params") or {})


def energy_inputs(cfg: dict) -> EnergyInputs:
    default_model = (cfg.get("llm") or {}).get("model") or ""
    variants = cfg.get("answering") or {}
    here = frozenset(av for av, v in variants.items() if served_here(v, default_model))
    return EnergyInputs(power_model(cfg), here)


def tracking_of(cfg: dict) -> Tracking | None:
    """Config ``tracking`` (None: no ``tracking.mlflow``, nothing is logged)."""
    t = cfg.get("tracking") or {}
    if not t.get("mlflow"):
        return None
    t = {**spec_defaults("tracking"), **t}
    return Tracking(t["mlflow"], t["experiment"], t.get("artifacts"))


def track_settings(cfg: dict) -> TrackSettings:
    rep = {**spec_defaults("report"), **(cfg.get("report") or {})}
    return TrackSettings(
        tracking=tracking_of(cfg),
        answering=tuple(sorted(cfg.get("answering") or {})),
        retrieval=tuple(sorted(cfg.get("retrieval") or {})),
        suite_datasets=tuple(sorted(((cfg.get("benchmarks") or {}).get("datasets")) or {})),
        score_split=cfg["wattbot"]["score_split"],
        bootstrap=int(rep["bootstrap"]),
        seed=int(rep["seed"]),
        cache_dir=cfg.get("cache_dir") or "data/cache",
    )
