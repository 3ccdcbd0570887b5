"""The suite's power table (#33 item 5): from a run's per-query suite results, per dataset the spread of
sprout - the best baseline (claim sprout-ie's control rule), the n needed for the published effect, the
effect detectable at the run's n and the dataset's CPU seconds; the results.md block rendered from it."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline import paths
from pipeline.publish.readme import REGISTRY
from pipeline.report.pages.suite_power import PowerInputs, power_table, render, write_power
from pipeline.report.stats.verdicts import Z_ALPHA, Z_POWER, detectable_effect, n_needed

BASELINES = ("hier-dense", "hier-convex", "bm25", "flat-dense")


def write_run(root, dataset: str, ie: dict[str, list[float]], cpu: dict[str, float]) -> None:
    """A run's per-query tables (only ie@5 matters), its export's docs.csv and benchmark TSVs."""
    for v, xs in ie.items():
        f = root / paths.suite_per_query(dataset, v)
        f.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"query_id": [f"q{i}" for i in range(len(xs))], "ie@5": xs}).to_csv(f, index=False)
    docs = root / paths.export_dir(dataset) / "docs.csv"
    docs.parent.mkdir(parents=True, exist_ok=True)
    docs.write_text("doc_id,title\nd1,a\nd2,b\nd3,c\n")
    for job, seconds in cpu.items():
        f = root / "benchmarks" / dataset / f"{job}.tsv"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds * 2}\t0:00:01\t10\t{seconds}\n")


@pytest.fixture
def run(tmp_path):
    sprout = [0.5, 0.1, 0.9, 0.3, 0.6, 0.2]
    ie = {"sprout": sprout, "hier-dense": [0.1] * 6, "hier-convex": [0.4, 0.2, 0.5, 0.3, 0.1, 0.3],
          "bm25": [0.3] * 6, "flat-dense": [0.0] * 6}
    write_run(tmp_path, "msmarco", ie, {"index/hier": 3.5, "retrieve/sprout/queries": 1.25, "suite_export": 0.25})
    write_run(tmp_path, "hotpotqa", ie, {"index/hier": 2.0})
    (tmp_path / "benchmarks" / "sprout").mkdir()
    (tmp_path / "benchmarks" / "sprout" / "train.tsv").write_text("s\tcpu_time\n9\t9\n")  # shared: no dataset's
    return tmp_path


def test_power_table_on_hand_made_results(run):
    t = power_table(PowerInputs(run, ["hotpotqa", "msmarco", "legalbench_rag"], "config.yaml")).set_index("dataset")
    assert list(t.index) == ["hotpotqa", "msmarco"]  # legalbench_rag: not scored in this run
    ms = t.loc["msmarco"]
    # control: the best baseline by mean (hier-convex 0.3 ties bm25 0.3: the name breaks ties, as claims do)
    assert ms["control"] == "hier-convex" and ms["n"] == 6 and ms["docs"] == 3
    diff = np.array([0.5, 0.1, 0.9, 0.3, 0.6, 0.2]) - np.array([0.4, 0.2, 0.5, 0.3, 0.1, 0.3])
    sd = diff.std(ddof=1)
    assert ms["sd_diff"] == pytest.approx(sd, abs=1e-4) and ms["diff"] == pytest.approx(diff.mean(), abs=1e-4)
    assert ms["published_effect"] == 0.0683
    assert ms["n_needed"] == math.ceil(((Z_ALPHA + Z_POWER) * sd / 0.0683) ** 2)
    assert ms["detectable_effect"] == pytest.approx((Z_ALPHA + Z_POWER) * sd / math.sqrt(6), abs=1e-4)
    assert ms["cpu_s"] == 5.0  # its three jobs, not the shared head training
    hp = t.loc["hotpotqa"]
    assert pd.isna(hp["published_effect"]) and pd.isna(hp["n_needed"]) and hp["cpu_s"] == 2.0


def test_detectable_effect_is_what_n_needed_sizes_to():
    """The two directions of one formula: the effect detectable at n needs n questions (up to the ceiling)."""
    for sd, n in [(0.28, 97), (0.09, 20), (0.17, 54)]:
        assert n_needed(sd, detectable_effect(sd, n)) in (n, n + 1)
    assert detectable_effect(0.0, 50) is None and detectable_effect(0.2, 0) is None


def test_detectable_effect_has_80_percent_power_in_simulation():
    """Paired differences drawn with the detectable effect as their mean: a two-sided 5% test on n of them
    rejects in ~80% of draws, and at half the effect in far fewer."""
    sd, n = 0.3, 60
    effect = detectable_effect(sd, n)

    def power(mean: float, draws: int = 4000) -> float:
        d = np.random.default_rng(2).normal(mean, sd, size=(draws, n))
        z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
        return float((np.abs(z) > Z_ALPHA).mean())

    assert power(effect) == pytest.approx(0.80, abs=0.03)
    assert power(effect / 2) < 0.4


def test_written_table_and_its_block(run):
    reports = run / "reports"
    write_power(PowerInputs(run, ["hotpotqa", "msmarco"], "config.pilot.yaml"), reports)
    out = paths.Reports.at(reports).suite_power
    assert pd.read_csv(out)["config"].tolist() == ["config.pilot.yaml"] * 2
    text = render(reports)
    assert "| msmarco | config.pilot.yaml | 6 | hier-convex |" in text and "| +0.0683 |" in text
    assert "| hotpotqa | config.pilot.yaml | 6 | hier-convex |" in text and "| none | – |" in text
    assert REGISTRY["suite-power"].source == "retrieval/power.telemetry.csv"
