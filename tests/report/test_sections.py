"""Report sections come per dataset entry: a suite dataset added by registration alone gets its IE@k rows,
its headline in the forest plot and its line on docs/results.md; a name registered nowhere is an error."""
import numpy as np
import pandas as pd
import pytest

from pipeline.paths import Reports
from pipeline.publish.results_doc import render_ablations
from pipeline.report.pages.figures import headline
from pipeline.report.sections import LABELLED, SUITE, section_of
from pipeline.report.stats.ablation import ablation_stats, summary_numbers
from pipeline.registry.suite_datasets import SuiteDataset, register, unregister
from pipeline.workflow.report_settings import figures_params

TOY = "toy-report"


@pytest.fixture
def toy():
    register(SuiteDataset(TOY, loader="tests.datasets.toy_suite", folder="toy"))
    yield TOY
    unregister(TOY)


def suite_run(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(12)]
    return pd.DataFrame({"ie@1": rng.random(12), "ie@5": rng.random(12)}, index=pd.Index(ids, name="query_id"))


def stats_with(dataset: str) -> pd.DataFrame:
    params = figures_params({
        "report": {"ablations": {}, "seed": 0, "bootstrap": 200, "permutations": 200},
        "answering": {}, "retrieval": {}, "config_hash": "h",
        "suite": {"datasets": [dataset], "variants": ["a", "b"], "ks": [1, 5]},
    })
    return ablation_stats(params, {}, {(dataset, "a"): suite_run(1), (dataset, "b"): suite_run(2)})


def test_a_registered_suite_dataset_gets_the_suite_section(toy, tmp_path):
    assert section_of(toy) == SUITE and section_of("wattbot") == LABELLED
    summary = summary_numbers(stats_with(toy))
    assert set(summary["dataset"]) == {toy} and set(summary["metric"]) == {"ie@1", "ie@5"}
    top = headline(summary, [1, 5])  # the forest plot: IE at the largest k only
    assert list(zip(top["dataset"], top["metric"])) == [(toy, "ie@5")]
    out = Reports.at(tmp_path)
    out_path = tmp_path / Reports().relative(out.ablation_differences)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out_path, index=False)
    page = render_ablations(tmp_path)
    assert f"| {toy} | ie@5 |" in page and "ie@1" not in page


def test_the_labelled_headline_prefers_the_score(toy):
    rows = [("abl", "wattbot", "score"), ("abl", "wattbot", "doc_hit@1"), ("ret", "wattbot", "doc_hit@1"),
            ("ret", "wattbot", "doc_recall@5"), ("ret", toy, "ie@1"), ("ret", toy, "ie@5")]
    summary = pd.DataFrame(rows, columns=["ablation", "dataset", "metric"])
    assert headline(summary, [1, 5]).values.tolist() == [
        ["abl", "wattbot", "score"], ["ret", "wattbot", "doc_hit@1"], ["ret", toy, "ie@5"]]


def test_a_dataset_registered_nowhere_has_no_section():
    with pytest.raises(KeyError, match="not-registered"):
        section_of("not-registered")
    summary = pd.DataFrame([("abl", "not-registered", "ie@5")], columns=["ablation", "dataset", "metric"])
    with pytest.raises(KeyError):
        headline(summary, [5])
