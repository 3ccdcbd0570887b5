"""Runs where researchers track experiments: one MLflow run per answering and per retrieval variant.

With ``tracking: {mlflow: URI}`` in the config (an optional extra: ``pip install -e ".[mlflow]"``; a local
``sqlite:///mlruns.db`` works offline), ``python -m pipeline track`` (called by the Snakefile's ``onsuccess``
and by ``make run`` after its time table) reads what the run left and logs, per variant:

* params: the variant's resolved config slice as its result manifest hashed it (flattened to dotted keys),
  its ``config_hash`` and the ``git_commit`` that made it;
* metrics: its scores with their 95% bootstrap intervals (``<metric>``, ``<metric>_lo``, ``<metric>_hi``):
  an answering variant's leaderboard row (reports/wattbot/leaderboard.csv), a retrieval variant's WattBot
  and retrieval-suite metrics (from its per-question scores, with the report's seed and resamples), each
  a measure the registry shows in MLflow (pipeline/registry/metrics.py, as ``report.metrics`` picks), and
  the counts beside them;
  cost (LLM calls, tokens and USD its answers record per split, and this run's spend from the LLM usage
  table); time (wall and CPU seconds of its jobs per rule and split, from benchmarks/*.tsv); and, once the
  time-table step has written it, its energy estimate;
* the report (reports/index.html and its figures/) as artifacts; tags: the wattbench run id (pipeline/run_ids.py), the
  config files, the kind and the variant.

Logging the same run id and variant again replaces the earlier MLflow run (found by its tags), so a resumed
or repeated ``track`` never duplicates. Nothing is written under results/ or reports/ (the byte-identical
set); mlflow is imported only when the config asks for it.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline import paths
from pipeline.config import ConfigError
from pipeline.registry.metrics import EVERYTHING, MLFLOW, Pick
from pipeline.report.sections import read_primary_block
from pipeline.report.telemetry.time_table import JobTime
from pipeline.report_specs import Tracking  # config `tracking`: its keys declared beside its fields

INSTALL = 'pip install -e ".[mlflow]"'
TAG = "wattbench."  # prefix of the tags this module sets (and searches by)
MAX_PARAM = 6000  # MLflow's longest param value (3.x): longer values are cut, with a marker
CUT = " ...[cut by wattbench]"
BATCH = 100  # MLflow's most params per log_batch (1000 metrics)
SUITE_SKIP = ("query_id", "n_gold", "n_hits")  # per-query columns that are counts, not scores


@dataclass(frozen=True)
class TrackSettings:
    """What logging a run reads of its config, parsed once by the driver (the ``track`` verb, the Snakefile's
    ``onsuccess``): where runs go (None: nowhere), the variants, the scored split, the report's bootstrap."""

    tracking: Tracking | None
    answering: tuple[str, ...]
    retrieval: tuple[str, ...]
    suite_datasets: tuple[str, ...]  # suite.datasets: the retrieval suite's (none: WattBot only)
    score_split: str
    bootstrap: int  # report.bootstrap: resamples per interval
    seed: int  # report.seed
    cache_dir: str  # where the LLM cache (and its usage table) is, relative to the run's root
    metrics: Pick = EVERYTHING  # report.metrics: the measures logged (with the counts beside them)


def require_mlflow(tracking: Tracking | None) -> Tracking | None:
    """``tracking``, after checking MLflow can be imported (at parse time: a run does not find out after its
    last job); None when the config asks for none."""
    if tracking is not None and importlib.util.find_spec("mlflow") is None:
        raise ConfigError(f"config key 'tracking.mlflow': MLflow is not installed ({INSTALL})")
    return tracking


@dataclass
class VariantRun:
    """What one MLflow run holds: a variant's params, metrics and tags."""

    kind: str  # answering | retrieval
    variant: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


# --- names and values as MLflow takes them ---


def metric_key(name: str) -> str:
    """A name MLflow accepts (letters, digits, ``_ - . / `` and spaces): ``doc_recall@5`` -> ``doc_recall_at_5``."""
    return re.sub(r"[^\w./ -]", "_", name.replace("@", "_at_"))


def flatten(obj: object, prefix: str = "") -> dict[str, str]:
    """Nested dicts as dotted keys (``upstream.retrieval.top_k``); lists and scalars as their JSON (a string
    as itself); a value longer than MLflow takes is cut with a marker."""
    if isinstance(obj, dict) and obj:
        out: dict[str, str] = {}
        for k, v in obj.items():
            out |= flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    text = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True)
    if len(text) > MAX_PARAM:
        text = text[: MAX_PARAM - len(CUT)] + CUT
    return {metric_key(prefix): text}


def logged(row: dict, pick: Pick) -> dict:
    """``row``'s columns MLflow takes: the measures shown there that ``pick`` picks, and what is no measure."""
    return {k: v for k, v in row.items() if pick.keeps(str(k), MLFLOW)}


def numbers(row: dict, prefix: str = "") -> dict[str, float]:
    """The finite numeric values of ``row`` as metrics (strings, blanks and NaN left out)."""
    out = {}
    for k, v in row.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            continue
        out[metric_key(f"{prefix}{k}")] = float(v)
    return out


def with_intervals(table: pd.DataFrame, prefix: str, n_boot: int, seed: int) -> dict[str, float]:
    """Each numeric column's mean and its 95% bootstrap interval (``_lo``, ``_hi``), NaN rows of a column
    left out (e.g. ``quote_in_context`` of questions without a quote); rounded as the reports round."""
    from pipeline.report.stats.resampling import bootstrap_mean

    out: dict[str, float] = {}
    for col in table.select_dtypes("number").columns:
        values = table[col].dropna().to_numpy(dtype=float)
        if len(values) == 0:
            continue
        ci = bootstrap_mean(values, n_boot, seed)
        key = metric_key(f"{prefix}{col}")
        out |= {key: round(ci.mean, 4), f"{key}_lo": round(ci.lo, 4), f"{key}_hi": round(ci.hi, 4)}
    return out


# --- what the run left, per variant ---


def manifest_params(path: Path) -> dict[str, str]:
    """The params of a result: its manifest's hashed config slice, ``config_hash`` and ``git_commit``."""
    m_path = Path(f"{path}.manifest.json")
    if not m_path.exists():
        return {}
    m = json.loads(m_path.read_text())
    return {
        **flatten(m.get("config") or {}),
        "config_hash": str(m.get("config_hash")),
        "git_commit": str(m.get("git_commit")),
    }


def job_times(jobs: list[JobTime], kind: str) -> dict[str, dict[str, float]]:
    """Variant -> ``time.<rule>[.<dataset>][.<split>].{wall_s,cpu_s}`` of its jobs, and their totals
    ``time.wall_s`` / ``time.cpu_s`` (a job counts for the variant its ``{av}``/``{rv}`` names)."""
    from pipeline.report.telemetry.energy import RULE_WILDCARDS, VARIANT_WILDCARDS

    wildcard = next(w for w, k in VARIANT_WILDCARDS.items() if k == kind)
    out: dict[str, dict[str, float]] = {}
    for j in jobs:
        rx = RULE_WILDCARDS.get(j.rule)
        m = rx.match(f"benchmarks/{j.job}.tsv") if rx else None
        if m is None or not m.groupdict().get(wildcard):
            continue
        where = ".".join(v for k, v in m.groupdict().items() if k != wildcard and v)
        times = out.setdefault(m.group(wildcard), {"time.wall_s": 0.0, "time.cpu_s": 0.0})
        for what, value in (("wall_s", j.wall_s), ("cpu_s", j.cpu_s)):
            key = metric_key(f"time.{j.rule}.{where}.{what}" if where else f"time.{j.rule}.{what}")
            times[key] = round(times.get(key, 0.0) + value, 3)
            times[f"time.{what}"] = round(times[f"time.{what}"] + value, 3)
    return out


def answer_cost(answers_path: Path) -> dict[str, float]:
    """LLM calls, tokens and USD the answers of one split record (every sample and retry of each answer)."""
    from pipeline.io import read_jsonl
    from pipeline.report.telemetry.cost import calls_of

    calls = [c for r in read_jsonl(answers_path) for c in calls_of(r)]
    usd: list[float | None] = [c.get("cost_usd") for c in calls]
    out = {
        "llm_calls": float(len(calls)),
        "prompt_tokens": float(sum(int(c.get("prompt_tokens") or 0) for c in calls)),
        "completion_tokens": float(sum(int(c.get("completion_tokens") or 0) for c in calls)),
    }
    if calls and all(u is not None for u in usd):  # unpriced calls: no USD rather than a low one
        out["usd"] = float(sum(u or 0.0 for u in usd))
    return out


def run_spend(cache_dir: Path, run_id: str) -> dict[str, dict[str, float]]:
    """Variant -> this run's LLM spend from the usage table (calls made and cached, tokens bought, USD):
    what the run paid, all splits together; empty without an LLM cache."""
    from pipeline.llm.usage import cost_rows

    path = cache_dir / "llm.sqlite"
    if not path.is_file():
        return {}
    out: dict[str, dict[str, float]] = {}
    for r in cost_rows(path, run_id):
        s = out.setdefault(r.variant, {})
        for k in ("calls", "cached", "prompt_tokens", "completion_tokens", "usd", "unpriced"):
            s[f"spend.{k}"] = s.get(f"spend.{k}", 0.0) + float(getattr(r, k))
    return out


def _csv_rows(path: Path, key: str) -> dict[str, dict]:
    if not path.exists() or path.stat().st_size <= 1:
        return {}
    return {str(r[key]): r for r in read_primary_block(path).to_dict("records")}


def energy_rows(reports: Path, kind: str) -> dict[str, dict[str, float]]:
    """Variant -> ``energy.{kwh,gco2e,...}`` of the time-table step's estimate (reports/energy.telemetry.csv)."""
    from pipeline.report.telemetry.energy import TABLE

    rows = _csv_rows(reports / TABLE, "variant")
    cols = ("cpu_s", "hosted_llm_tokens", "kwh", "gco2e")
    return {v: numbers({c: r[c] for c in cols}, "energy.") for v, r in rows.items() if r.get("kind") == kind}


@dataclass(frozen=True)
class RunFiles:
    """Where one run's files are: the Snakemake working directory, its reports folder, what its config says."""

    root: Path
    reports: Path
    settings: TrackSettings
    jobs: list[JobTime]

    @property
    def score_split(self) -> str:
        return self.settings.score_split

    @property
    def boot(self) -> tuple[int, int]:
        return self.settings.bootstrap, self.settings.seed


def answering_runs(f: RunFiles, run_id: str) -> list[VariantRun]:
    """One run per answering variant of the config that has answers: its params, leaderboard row (score and
    interval), cost per split, this run's spend, time and energy."""
    out = paths.Reports.at(f.reports)
    board, tele = _csv_rows(Path(out.leaderboard), "variant"), _csv_rows(Path(out.leaderboard_telemetry), "variant")
    times, spend, energy = (
        job_times(f.jobs, "answering"),
        run_spend(f.root / f.settings.cache_dir, run_id),
        energy_rows(f.reports, "answering"),
    )
    runs = []
    for av in f.settings.answering:
        made = (f.root / paths.answers(av, "x")).parent.glob("*.jsonl")
        splits = sorted(p.stem for p in made if "." not in p.stem)  # not <split>.jsonl.telemetry.jsonl
        if not splits:
            continue
        scored = f.score_split if f.score_split in splits else splits[0]
        run = VariantRun("answering", av, manifest_params(f.root / paths.answers(av, scored)))
        run.params["splits"] = ",".join(splits)
        run.metrics |= numbers(logged(board.get(av, {}), f.settings.metrics))
        extra = {k: v for k, v in tele.get(av, {}).items() if k not in board.get(av, {})}
        run.metrics |= numbers(extra, "telemetry.")
        for split in splits:
            run.metrics |= {f"cost.{split}.{k}": v for k, v in answer_cost(f.root / paths.answers(av, split)).items()}
        run.metrics |= times.get(av, {}) | spend.get(av, {}) | energy.get(av, {})
        runs.append(run)
    return runs


def wattbot_retrieval(f: RunFiles, rv: str) -> dict[str, float]:
    """A retrieval variant's WattBot metrics on the scored split with intervals (``wattbot.<metric>``)."""
    from pipeline.io import read_jsonl
    from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics

    run, gold = f.root / paths.retrieval(paths.WATTBOT, rv, f.score_split), f.root / paths.ingest_split(f.score_split)
    if not run.exists() or not gold.exists():
        return {}
    table, summary = wattbot_retrieval_metrics(read_jsonl(run), pd.read_csv(gold, dtype=str, keep_default_na=False))
    shown = [c for c in table.columns if c != "id" and f.settings.metrics.keeps(c, MLFLOW)]
    return with_intervals(table[shown], "wattbot.", *f.boot) | {"wattbot.questions": float(summary["questions"])}


def suite_retrieval(f: RunFiles, rv: str) -> dict[str, float]:
    """A retrieval variant's retrieval-suite metrics per dataset with intervals (``<dataset>.<metric>``)."""
    out: dict[str, float] = {}
    for ds in f.settings.suite_datasets:
        path = f.root / paths.suite_per_query(ds, rv)
        if path.exists():
            table = pd.read_csv(path).drop(columns=list(SUITE_SKIP), errors="ignore")
            shown = [c for c in table.columns if f.settings.metrics.keeps(c, MLFLOW)]
            out |= with_intervals(table[shown], f"{ds}.", *f.boot) | {f"{ds}.queries": float(len(table))}
    return out


def retrieval_runs(f: RunFiles) -> list[VariantRun]:
    """One run per retrieval variant of the config that has a retrieval run: its params (from its WattBot
    run's manifest, else its first suite run's), scores with intervals, time and energy."""
    times, energy = job_times(f.jobs, "retrieval"), energy_rows(f.reports, "retrieval")
    runs = []
    for rv in f.settings.retrieval:
        made = sorted(f.root.glob(paths.retrieval("*", rv, "*")), key=lambda p: (paths.WATTBOT not in p.parts, str(p)))
        if not made:
            continue
        run = VariantRun("retrieval", rv, manifest_params(made[0]))
        run.params["ran_on"] = ",".join(sorted({p.parent.parent.parent.name for p in made}))
        run.metrics |= wattbot_retrieval(f, rv) | suite_retrieval(f, rv) | times.get(rv, {}) | energy.get(rv, {})
        runs.append(run)
    return runs


def collect(root: str | Path, reports: str | Path, settings: TrackSettings, run_id: str) -> list[VariantRun]:
    """Every variant's run of this working directory: answering variants, then retrieval variants."""
    from pipeline.report.telemetry.time_table import read_benchmarks

    f = RunFiles(Path(root), Path(reports), settings, read_benchmarks(root))
    return answering_runs(f, run_id) + retrieval_runs(f)


# --- MLflow ---


def _chunks(items: list, n: int = BATCH) -> Iterator[list]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def experiment_id(client, tracking: Tracking) -> str:
    exp = client.get_experiment_by_name(tracking.experiment)
    if exp is not None:
        return exp.experiment_id
    return client.create_experiment(tracking.experiment, artifact_location=tracking.artifact_root())


def replace_run(client, exp: str, run: VariantRun, tags: dict[str, str]) -> str:
    """A new MLflow run for ``run`` (the earlier ones with the same run id, kind and variant deleted)."""
    found = " and ".join(f"tags.`{TAG}{k}` = '{tags[TAG + k]}'" for k in ("run_id", "kind", "variant"))
    for old in client.search_runs([exp], filter_string=found):
        client.delete_run(old.info.run_id)
    return client.create_run(exp, tags=tags, run_name=f"{run.kind}/{run.variant}").info.run_id


def log_runs(
    tracking: Tracking, runs: list[VariantRun], run_id: str, artifacts: list[Path], tags: dict[str, str]
) -> list[str]:
    """Log each variant's run to ``tracking`` (its params, metrics, tags and the ``artifacts``); the MLflow
    run ids."""
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking.uri)
    exp = experiment_id(client, tracking)
    ids = []
    for run in runs:
        run_tags = {**tags, **run.tags, f"{TAG}run_id": run_id, f"{TAG}kind": run.kind, f"{TAG}variant": run.variant}
        if run.params.get("git_commit"):
            run_tags["mlflow.source.git.commit"] = run.params["git_commit"]
        mid = replace_run(client, exp, run, run_tags)  # the tags are set as the run is created
        now = int(time.time() * 1000)
        for part in _chunks([Param(k, v) for k, v in sorted(run.params.items())]):
            client.log_batch(mid, params=part)
        for mpart in _chunks([Metric(k, v, now, 0) for k, v in sorted(run.metrics.items())], 1000):
            client.log_batch(mid, metrics=mpart)
        for path in artifacts:  # a folder (the page's figures) keeps its name, so index.html's <img src> resolve
            if Path(path).is_dir():
                client.log_artifacts(mid, str(path), Path(path).name)
            else:
                client.log_artifact(mid, str(path))
        client.set_terminated(mid)
        ids.append(mid)
    return ids


def track(
    root: str | Path, reports: str | Path, settings: TrackSettings, tracking: Tracking
) -> tuple[list[VariantRun], str]:
    """Log every variant of the run in ``root`` to ``tracking`` (``settings.tracking``, known to be set);
    the runs logged and the wattbench run id."""
    from pipeline.run_ids import STATE, read_state

    state = read_state(Path(root) / STATE)
    if state is None:
        raise FileNotFoundError(f"{Path(root) / STATE}: no run here to track (run snakemake first)")
    runs = collect(root, reports, settings, state.id)
    out = paths.Reports.at(reports)
    html, figures = Path(out.index_html), Path(out.figures_dir)
    tags = {f"{TAG}config_files": ",".join(state.config_files), f"{TAG}score_split": settings.score_split}
    log_runs(tracking, runs, state.id, [p for p in (html, figures) if p.exists()], tags)
    return runs, state.id


def tracked_line(runs: list[VariantRun], run_id: str, tracking: Tracking) -> str:
    kinds = {k: sum(r.kind == k for r in runs) for k in ("answering", "retrieval")}
    return (
        f"MLflow: run {run_id}: {kinds['answering']} answering and {kinds['retrieval']} retrieval variant(s) "
        f"logged to {tracking.uri} (experiment {tracking.experiment})"
    )


def after_run(settings: TrackSettings, root: str | Path = ".", reports: str | Path = paths.reports.root) -> None:
    """Snakemake's ``onsuccess``: log the run when the config asks for it. Under ``make run`` / ``make resume``
    (``WATTBENCH_SUMMARY_LATER``) the Makefile's ``track`` step does it, after the time table (energy). A
    tracking server that cannot be reached is a warning: the run's results are made."""
    import os
    import sys

    from pipeline.report.summary import LATER

    tracking = settings.tracking
    if tracking is None or os.environ.get(LATER):
        return
    try:
        print(tracked_line(*track(root, reports, settings, tracking), tracking))
    except Exception as e:  # noqa: BLE001 - the run is done; say what failed and how to log it again
        print(
            f"warning: MLflow tracking failed ({type(e).__name__}: {e}); retry: python -m pipeline track",
            file=sys.stderr,
        )
