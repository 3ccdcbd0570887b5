"""The report's typed settings, built here by the drivers: what the steps after a run read of the config
(the energy estimate's constants and served-here variants, where MLflow runs go: for the ``time-table`` and
``track`` verbs and the Snakefile), and each report rule's params read back from the JSON Snakemake hashed
(for the report verbs). The ``report``, ``energy`` and ``tracking`` sections are parsed by their specs
(pipeline/report_specs.py: each key's default declared there, once); pipeline/report/ never indexes a
config or params dict."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import DROPPED, LEFT_OUT
from pipeline.llm_models import serving_kind  # a model the job serves itself, on its own cores
from pipeline.registry.metrics import Pick
from pipeline.report.pages.suite_power import PowerInputs
from pipeline.report.params import (
    Ablation,
    CorpusReportParams,
    Dropped,
    FiguresParams,
    Leaderboard,
    ReportParams,
    Resampling,
    SproutReportParams,
    SuiteReportParams,
    SuiteRuns,
)
from pipeline.report.telemetry.energy import EnergyInputs
from pipeline.report_specs import PowerModel, ReportSpec
from pipeline.tracking import Tracking, TrackSettings


def power_model(cfg: dict) -> PowerModel:
    """Config ``energy``, its declared defaults where it says nothing."""
    return PowerModel.from_dict(cfg.get("energy"))


def served_here(variant: dict, default_model: str) -> bool:
    """Whether an answering variant's calls ran on the job's own cores (a ``local/`` model: its own
    ``model:``, else ``llm.model``; inside the job's CPU seconds) or drew nothing (a stand-in: litellm's
    ``mock_response``)."""
    model = variant.get("model") or default_model
    return not serving_kind(model).calls_out or "mock_response" in (variant.get("params") or {})


def energy_inputs(cfg: dict) -> EnergyInputs:
    default_model = (cfg.get("llm") or {}).get("model") or ""
    variants = cfg.get("answering") or {}
    here = frozenset(av for av, v in variants.items() if served_here(v, default_model))
    return EnergyInputs(power_model(cfg), here)


def power_inputs(cfg: dict, root: Path, files: list[str]) -> PowerInputs:
    """The suite power table's inputs: the run's suite datasets, its config files' names (``suite-power``,
    ``time-table``)."""
    datasets = sorted((cfg.get("suite") or {}).get("datasets") or {})
    return PowerInputs(Path(root), datasets, "+".join(Path(f).name for f in files))


def tracking_of(cfg: dict) -> Tracking | None:
    """Config ``tracking`` (None: no ``tracking.mlflow``, nothing is logged)."""
    t = cfg.get("tracking") or {}
    return Tracking.from_dict(t) if t.get("mlflow") else None


def track_settings(cfg: dict) -> TrackSettings:
    rep = ReportSpec.from_dict(cfg.get("report"))
    return TrackSettings(
        tracking=tracking_of(cfg),
        answering=tuple(sorted(cfg.get("answering") or {})),
        retrieval=tuple(sorted(cfg.get("retrieval") or {})),
        suite_datasets=tuple(sorted(((cfg.get("suite") or {}).get("datasets")) or {})),
        score_split=cfg["wattbot"]["score_split"],
        bootstrap=rep.bootstrap,
        seed=rep.seed,
        cache_dir=cfg.get("cache_dir") or "data/cache",
        metrics=Pick.of(rep.metrics),
    )


# --- the report rules' params (the JSON pipeline/workflow/reports.py wrote) as typed specs ---


def resampling(rep: dict) -> Resampling:
    """``report``'s seed, bootstrap and permutations, the declared defaults for those a rule's params omit."""
    r = ReportSpec.from_dict(rep)
    return Resampling(r.seed, r.bootstrap, r.permutations)


def leaderboard_of(params: dict) -> Leaderboard:
    return Leaderboard(params["variants"], resampling(params.get("report") or {}), Pick.of(params.get("metrics")))


def report_params(params: dict) -> ReportParams:
    return ReportParams(
        leaderboard_of(params),
        params["default_variant"],
        params["score_split"],
        params["config_hash"],
        params,
        params.get("pdf_fallback") or {},
        params.get("limit"),
    )


def corpus_report_params(params: dict) -> CorpusReportParams:
    return CorpusReportParams(
        leaderboard_of(params),
        params["corpus"],
        params["labelled"],
        params["submission_variant"],
        params,
        {
            name: Ablation("answering", ab.variants, ab.note)
            for name, ab in ReportSpec.from_dict({"ablations": params.get("ablations") or {}}).ablations.items()
        },
        params.get("limit"),
    )


def figures_params(params: dict) -> FiguresParams:
    """The figures rule's params; ``gold`` (the scored split's CSV) is passed beside them."""
    rep = ReportSpec.from_dict(params["report"])
    suite = params.get("suite") or {}
    return FiguresParams(
        resampling=Resampling(rep.seed, rep.bootstrap, rep.permutations),
        ablations={name: Ablation(ab.stage, ab.variants, ab.note) for name, ab in rep.ablations.items()},
        answering=params["answering"],
        retrieval=tuple(sorted(params["retrieval"])),
        suite=SuiteRuns(tuple(suite.get("datasets", ())), tuple(suite.get("variants", ())), tuple(suite.get("ks", ()))),
        gold=params.get("gold", ""),
        config_hash=params["config_hash"],
        hashed=params,
        embedding_index=rep.embedding_index,
        embedding_sample=rep.embedding_sample,
        ensemble_subsets=rep.ensemble_subsets,
        corpora=tuple(params.get("corpora") or ()),
        parse_quality=params.get("parse_quality") or "",
        by_type=params.get("by_type") or "",
        claims_elsewhere=params.get("claims_elsewhere") or {},
        dropped=dropped(params.get(DROPPED) or {}),
        left_out=dict(rep.claims_left_out),
        limit=params.get("limit"),
        metrics=Pick.of(rep.metrics),
    )


def dropped(record: dict) -> Dropped:
    """The config's record of dropped entries (pipeline/config/drops.py), as the claims read it."""
    ablations: dict[str, tuple[str, ...]] = {name: () for name in record.get("report.ablations", [])}
    for path, gone in (record.get(LEFT_OUT) or {}).items():
        if path.startswith("report.ablations."):
            ablations[path.removeprefix("report.ablations.")] = tuple(gone)
    return Dropped(tuple(v for table in ("answering", "retrieval") for v in record.get(table, [])), ablations)


def suite_report_params(params: dict) -> SuiteReportParams:
    return SuiteReportParams(params["config_hash"], params, params.get("limit"), Pick.of(params.get("metrics")))


def sprout_report_params(params: dict) -> SproutReportParams:
    return SproutReportParams(params["sweep"], tuple(params["ks"]), params, Pick.of(params.get("metrics")))
