"""The config sections read after the answers: ``report`` (the figures and statistics of reports/index.html),
``energy`` (the stated constants of the energy estimate) and ``tracking`` (where MLflow runs go), each key
declared beside the field that reads it (pipeline/config_schema.py ``key``).

Below the report stage and the config layer both: the config generates its schema from these
declarations, and the report reads the same dataclasses (pipeline/workflow/report_settings.py parses
them), so no reader keeps its own copy of a default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pipeline.config_schema import NAME, ConfigTable, key, parse_spec

ABLATION_STAGES = ("answering", "retrieval")  # the config tables an ablation's variants come from


@dataclass(frozen=True)
class AblationSpec:
    """``report.ablations.<name>``: variants of one stage compared, the first the reference."""

    stage: str = key("which config table the variants are in", choices=ABLATION_STAGES, default="answering")
    variants: tuple[str, ...] = key(
        "the variants compared, the reference first (a variant not configured is a config error)",
        type="array",
        schema={"minItems": 2, "uniqueItems": True, "items": {"type": "string"}},
    )
    note: str = key("one line shown with the figure", type="string", default="")

    @classmethod
    def from_dict(cls, d: ConfigTable, where: str = "report.ablations") -> AblationSpec:
        spec = parse_spec(cls, d, where)
        return cls(spec.stage, tuple(spec.variants), spec.note)


@dataclass(frozen=True)
class ReportSpec:
    """``report``: the figures and statistics of reports/index.html (the ``figures`` rule) and the
    intervals of every leaderboard."""

    seed: int = key("seed of the bootstrap and the sign-flip test", type="integer", default=0, schema={"minimum": 0})
    bootstrap: int = key(
        "resamples of the questions per interval of one mean (the default is issue #44's floor)",
        type="integer",
        default=10000,
        schema={"minimum": 100},
    )
    permutations: int = key(
        "sign patterns of the paired sign-flip test and its inverted interval (every pattern when 2**k is fewer)",
        type="integer",
        default=10000,
        schema={"minimum": 100},
    )
    embedding_index: str | None = key(
        "a 'tree' index for the embedding map (default: the first by name)", type=("string", "null")
    )
    embedding_sample: int = key(
        "nodes per level drawn for the embedding map (seeded)", type="integer", default=1500, schema={"minimum": 10}
    )
    ensemble_subsets: int = key(
        "ensemble-size curve: member subsets scored per size (a seeded sample when more)",
        type="integer",
        default=20,
        schema={"minimum": 1},
    )
    metrics: tuple[str, ...] | None = key(
        'the measures the report shows, by name (pipeline/registry/metrics.py: "ie@3", "ndcg@10", "wattbot2026"; '
        "a cutoff shows the measure at it only); absent: every registered measure where it declares it is shown",
        type="array",
        schema={"minItems": 1, "uniqueItems": True, "items": {"type": "string"}},
    )
    claims_left_out: dict = key(
        "claim id -> why this grid does not run it (a cost, said in the config): its rows read 'not run: left out "
        "by the config' with the reason, which `make readme-check` accepts; a claim the grid runs is an error",
        type="object",
        default={},
        schema={"additionalProperties": {"type": "string", "minLength": 1}},
    )
    ablations: dict = key(
        "name -> the variants compared (the first is the reference)",
        table=AblationSpec,
        default={},
        schema={"propertyNames": NAME},
    )

    @classmethod
    def from_dict(cls, d: ConfigTable | None) -> ReportSpec:
        """A ``report`` table (or the part of it a rule's params carry), its declared defaults for the rest."""
        spec = parse_spec(cls, d or {}, "report")
        ablations = {n: AblationSpec.from_dict(a, f"report.ablations.{n}") for n, a in spec.ablations.items()}
        return replace(spec, ablations=ablations)


DEFAULT_REPORT = ReportSpec.from_dict({})  # a comparison made outside a run's config (`compare`: kept runs)


@dataclass(frozen=True)
class PowerModel:
    """``energy``: the stated constants of a run's energy and CO2 estimate (pipeline/report/telemetry/energy.py,
    docs/energy.md). Execution-only: no params or cache key; rough constants, not measurements (RAPL is not
    read per job)."""

    cpu_watts_per_core: float = key(
        "W per busy core (TDP-style)", type="number", default=10.0, schema={"exclusiveMinimum": 0}
    )
    pue: float = key("data-centre overhead factor", type="number", default=1.0, schema={"minimum": 1})
    llm_wh_per_1k_tokens: float = key(
        "hosted LLM calls, Wh per 1000 tokens, prompt + generated", type="number", default=0.3, schema={"minimum": 0}
    )
    grid_gco2_per_kwh: float = key(
        "grid carbon intensity, gCO2e per kWh", type="number", default=475.0, schema={"minimum": 0}
    )
    country: str = key("whose grid that intensity is", type="string", default="world")

    @classmethod
    def from_dict(cls, d: ConfigTable | None) -> PowerModel:
        return parse_spec(cls, d or {}, "energy")

    def cpu_kwh(self, cpu_s: float) -> float:
        return cpu_s * self.cpu_watts_per_core * self.pue / 3.6e6

    def llm_kwh(self, tokens: int) -> float:
        return tokens / 1000 * self.llm_wh_per_1k_tokens / 1000

    def gco2e(self, kwh: float) -> float:
        return kwh * self.grid_gco2_per_kwh


@dataclass(frozen=True)
class Tracking:
    """``tracking``: after a run, one MLflow run per answering and retrieval variant (params, scores with
    intervals, cost, time, the report; docs/tracking.md). Execution-only: no params or cache key. Omit it to
    log nothing; needs the mlflow extra (pip install -e ".[mlflow]")."""

    uri: str = key(
        "tracking URI, e.g. sqlite:///mlruns.db (offline) or http://host:5000",
        type="string",
        schema={"minLength": 1},
        name="mlflow",
    )
    experiment: str = key(
        "the MLflow experiment the runs go to", type="string", default="wattbench", schema={"minLength": 1}
    )
    artifacts: str | None = key(
        "artifact folder of a new experiment (default: mlartifacts/ beside a sqlite store)",
        type="string",
        schema={"minLength": 1},
        field_default=None,
    )

    @classmethod
    def from_dict(cls, d: ConfigTable) -> Tracking:
        return parse_spec(cls, d, "tracking")

    def artifact_root(self) -> str | None:
        """Where a new experiment keeps artifacts: ``tracking.artifacts``, else ``mlartifacts/`` beside a
        ``sqlite:///`` store (MLflow's default is ./mlruns of whatever folder the logging ran in)."""
        if self.artifacts:
            return Path(self.artifacts).resolve().as_uri()
        if self.uri.startswith("sqlite:///"):
            return (Path(self.uri.removeprefix("sqlite:///")).resolve().parent / "mlartifacts").as_uri()
        return None
