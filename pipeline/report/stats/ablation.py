"""Ablations as data: per-question metric tables per variant, and their paired statistics.

An ablation (``report.ablations`` in config.yaml) names variants of one stage; the first is the
reference. For WattBot every variant gets one value per train question and metric; for the
retrieval suite one per query and IE@k. Statistics pair variants on the questions they share. The
metrics compared are those the registry shows for the ablation's stage (pipeline/registry/metrics.py:
``ablations.answering``, ``ablations.retrieval``) and ``report.metrics`` picks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.io import read_jsonl
from pipeline.registry import metrics
from pipeline.registry.metrics import ANSWERS, DOCUMENTS, SUITE
from pipeline.report.params import FiguresParams, Resampling
from pipeline.report.sections import LABELLED_SET
from pipeline.report.stats.resampling import bootstrap_mean
from pipeline.report.stats.signflip import Settings, paired_test
from pipeline.report.stems import ablations_with_suite, suite_variants_of
from pipeline.score.wattbot_retrieval import wattbot_retrieval_metrics

VIEWS = {"answering": metrics.ABLATIONS_ANSWERING, "retrieval": metrics.ABLATIONS_RETRIEVAL}  # stage -> its view


@dataclass(frozen=True)
class InputFiles:
    """The result files a report verb was passed, by name (the rule declares them; pipeline/paths.py
    says where they live): the verb looks a file up here and never derives a path itself."""

    scores_of: dict[str, str] = field(default_factory=dict)  # answering variant -> scores JSON
    per_question_of: dict[str, str] = field(default_factory=dict)  # answering variant -> per-question CSV
    answers_of: dict[str, str] = field(default_factory=dict)  # answering variant -> answers JSONL (scored split)
    retrieval_of: dict[str, str] = field(default_factory=dict)  # retrieval variant -> run JSONL (scored split)
    suite_of: dict[str, str] = field(default_factory=dict)  # "dataset:variant" -> suite per-query CSV
    index_of: dict[str, str] = field(default_factory=dict)  # index name -> sqlite
    corpora_of: dict[str, str] = field(default_factory=dict)  # corpus name -> its leaderboard CSV
    suite_run_of: dict[str, str] = field(default_factory=dict)  # "dataset:variant" -> suite retrieval JSONL
    suite_gold_of: dict[str, str] = field(
        default_factory=dict
    )  # suite dataset -> its gold spans (question -> documents)

    @staticmethod
    def _get(files: dict[str, str], name: str, kind: str) -> Path:
        if name not in files:
            raise ValueError(f"no {kind} file passed for '{name}' (passed: {', '.join(sorted(files)) or 'none'})")
        return Path(files[name])

    def per_question(self, av: str) -> Path:
        return self._get(self.per_question_of, av, "per-question")

    def scores(self, av: str) -> Path:
        return self._get(self.scores_of, av, "scores")

    def answers(self, av: str) -> Path:
        return self._get(self.answers_of, av, "answers")

    def retrieval(self, rv: str) -> Path:
        return self._get(self.retrieval_of, rv, "retrieval")

    def suite(self, dataset: str, rv: str) -> Path:
        return self._get(self.suite_of, f"{dataset}:{rv}", "suite")

    def suite_run(self, dataset: str, rv: str) -> Path:
        return self._get(self.suite_run_of, f"{dataset}:{rv}", "suite retrieval")

    def index(self, name: str) -> Path:
        return self._get(self.index_of, name, "index")


def retrieval_per_question(paths: InputFiles, rv: str, gold: pd.DataFrame) -> pd.DataFrame:
    """WattBot retrieval metrics per answerable question (index: question id)."""
    return wattbot_retrieval_metrics(read_jsonl(paths.retrieval(rv)), gold)[0].set_index("id")


def wattbot_tables(params: FiguresParams, paths: InputFiles, gold: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """(stage, variant) -> per-question metrics, for every configured variant. An answering variant
    carries its retrieval's metrics (NaN on unanswerable questions, which have no gold document)."""
    rtables = {rv: retrieval_per_question(paths, rv, gold) for rv in sorted(params.retrieval)}
    out = {("retrieval", rv): t for rv, t in rtables.items()}
    for av, spec in sorted(params.answering.items()):
        pq = pd.read_csv(paths.per_question(av), dtype={"id": str}).set_index("id")
        r = rtables[spec["retrieval"]]
        out[("answering", av)] = pq[metrics.primary_columns()].join(r, how="left").reindex(gold["id"])
    return out


def suite_tables(params: FiguresParams, paths: InputFiles) -> dict[tuple[str, str], pd.DataFrame]:
    """(dataset, retrieval variant) -> per-query suite metrics (ie@k, recall@k, ...)."""
    return {
        (d, rv): pd.read_csv(paths.suite(d, rv), dtype={"query_id": str}).set_index("query_id")
        for d in params.suite.datasets
        for rv in params.suite.variants
    }


def paired_values(tables: dict[str, pd.DataFrame], variants: Sequence[str], metric: str) -> pd.DataFrame:
    """questions x variants: ``metric`` on the questions every variant has a value for."""
    cols = pd.concat([tables[v][metric].rename(v) for v in variants], axis=1).dropna()
    if cols.empty:
        raise ValueError(f"metric {metric!r}: no question with a value for all of {variants}")
    return cols


def flip_settings(rep: Resampling) -> Settings:
    """The sign-flip test's settings from the config's resampling (``report.permutations``, ``report.seed``)."""
    return Settings(resamples=rep.permutations, seed=rep.seed)


def compare(tables: dict[str, pd.DataFrame], variants: Sequence[str], metric: str, rep: Resampling) -> list[dict]:
    """Rows of mean and 95% interval per variant (percentile bootstrap of its mean), and the paired difference
    to ``variants[0]`` with the paired sign-flip test's p and the interval that is its inversion
    (:func:`pipeline.report.stats.signflip.paired_test`: it excludes 0 exactly when p < 0.05), on the
    questions every variant has a value for (:func:`paired_values`)."""
    cols = paired_values(tables, variants, metric)
    x = cols.to_numpy(dtype=float)
    rows = []
    for j, v in enumerate(variants):
        ci = bootstrap_mean(x[:, j], rep.bootstrap, rep.seed)
        row = {
            "variant": v,
            "reference": variants[0],
            "metric": metric,
            "n": len(cols),
            "mean": ci.mean,
            "lo": ci.lo,
            "hi": ci.hi,
        }
        if j:
            test = paired_test(x[:, j], x[:, 0], settings=flip_settings(rep))
            row |= {"diff": test.estimate, "diff_lo": test.lo, "diff_hi": test.hi, "p_value": test.p}
        rows.append(row)
    return rows


def ablation_stats(params: FiguresParams, wattbot: dict, suite: dict) -> pd.DataFrame:
    """The long statistics table (reports/wattbot/ablations.csv): one row per ablation, dataset,
    metric and variant."""
    rep, pick = params.resampling, params.metrics
    suite_metrics = metrics.columns(metrics.ABLATIONS_RETRIEVAL, [SUITE], params.suite.ks, pick)
    rows = []
    for name, ab in sorted(ablations_with_suite(params).items()):
        if not ab.suite_only:
            tables = {v: wattbot[(ab.stage, v)] for v in ab.variants}
            for m in metrics.columns(VIEWS[ab.stage], [ANSWERS, DOCUMENTS], pick=pick):
                rows += [
                    {"ablation": name, "stage": ab.stage, "dataset": LABELLED_SET, **r}
                    for r in compare(tables, ab.variants, m, rep)
                ]
        rvs = suite_variants_of(params, ab)
        if rvs:
            for d in params.suite.datasets:
                tables = {rv: suite[(d, rv)] for rv in rvs}
                for m in suite_metrics:
                    rows += [
                        {"ablation": name, "stage": "retrieval", "dataset": d, **r}
                        for r in compare(tables, rvs, m, rep)
                    ]
    cols = [
        "ablation",
        "stage",
        "dataset",
        "metric",
        "variant",
        "reference",
        "n",
        "mean",
        "lo",
        "hi",
        "diff",
        "diff_lo",
        "diff_hi",
        "p_value",
    ]
    table = pd.DataFrame(rows, columns=cols)
    num = ["mean", "lo", "hi", "diff", "diff_lo", "diff_hi"]
    table[num] = table[num].astype(float).round(4)
    table["p_value"] = table["p_value"].astype(float).round(5)
    return table


def variant_interval(values: pd.Series, rep: Resampling) -> tuple[float, float, float]:
    """Mean and bootstrap interval of one variant's per-question values (NaN dropped)."""
    ci = bootstrap_mean(values.dropna().to_numpy(dtype=float), rep.bootstrap, rep.seed)
    return ci.mean, ci.lo, ci.hi


def summary_numbers(stats: pd.DataFrame) -> pd.DataFrame:
    """The A-vs-B lines (non-reference rows) for the README and the HTML: one per comparison."""
    part = stats[stats["diff"].notna()]
    return part[
        ["ablation", "dataset", "metric", "reference", "variant", "n", "diff", "diff_lo", "diff_hi", "p_value"]
    ].reset_index(drop=True)
