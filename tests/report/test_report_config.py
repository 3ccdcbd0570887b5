"""The report block: ablations name configured variants or the config is rejected, naming the key."""

import pandas as pd
import pytest
import yaml

from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.report.telemetry.cost import pareto_front
from pipeline.report.params import Resampling
from pipeline.workflow import figure_stems


@pytest.fixture()
def raw():
    return yaml.safe_load((REPO / "tests" / "grid.yaml").read_text())  # the tests' own grid, not config.yaml


def test_ablation_variants_must_exist(raw):
    raw["report"]["ablations"]["prompt-order"] = {"variants": ["llm-context-first", "llm-question-first"]}
    with pytest.raises(ConfigError, match=r"'report\.ablations\.prompt-order\.variants'.*llm-context-first"):
        validate(raw)


def test_ablation_stage_decides_the_table(raw):
    raw["report"]["ablations"] = {"beam": {"variants": ["hier-dense", "bm25"]}}  # retrieval names, answering stage
    with pytest.raises(ConfigError, match="not configured in 'answering'"):
        validate(raw)
    raw["report"]["ablations"]["beam"]["stage"] = "retrieval"
    assert validate(raw)["report"]["ablations"]["beam"]["stage"] == "retrieval"


def test_bad_report_keys(raw):
    bad = dict(raw, report={**raw["report"], "embedding_index": "bm25"})
    with pytest.raises(ConfigError, match="report.embedding_index"):
        validate(bad)
    bad = dict(raw, report={**raw["report"], "ablations": {"x": {"variants": ["convex-extractive"]}}})
    with pytest.raises(ConfigError, match="report.ablations.x.variants"):
        validate(bad)


def test_figures_follow_from_the_config(raw):
    cfg = validate(raw)
    stems = figure_stems(cfg)
    for name, ab in cfg["report"]["ablations"].items():
        assert f"ablation-{name}" in stems
    assert "ablation-bm25-on-off-suite" in stems and "retrieval-suite-ie" in stems  # hier-dense/convex in the suite
    assert "ablation-fusion-suite" not in stems  # hier-rrf is not in the suite
    raw.pop("report")
    assert validate(raw)["report"]["ablations"] == {}  # the block is optional


def test_pareto_front():
    pts = pd.DataFrame({"v": list("abcd"), "tokens": [0, 0, 500, 900], "score": [0.6, 0.5, 0.7, 0.65]})
    assert list(pareto_front(pts, "tokens", "score")["v"]) == ["a", "c"]


def test_resampling_defaults_come_from_the_schema():
    """A rule's params without ``report`` (the leaderboard's intervals) resample as ReportSpec declares."""
    from pipeline.config_schema import declared_defaults
    from pipeline.report_specs import ReportSpec
    from pipeline.workflow.report_settings import resampling

    declared = declared_defaults(ReportSpec)
    assert resampling({}) == Resampling(declared["seed"], declared["bootstrap"], declared["permutations"])
    assert resampling({"bootstrap": 500}).bootstrap == 500
