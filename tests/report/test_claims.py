"""The reproduction table: verdict rule, Holm, detectable effect, and claims.yaml against the configs."""
import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.report.params import FiguresParams
from pipeline.workflow.report_settings import figures_params
from pipeline.report.claims.measure import Claim, holm, load_claims, measure_claims, min_detectable, verdict
from pipeline.report.pages.claims_table import render, verdict_text
from pipeline.report.render.tables import markdown_table

REP = {"seed": 0, "bootstrap": 500, "permutations": 2000}


@pytest.mark.parametrize("direction, lo, hi, margin, expected", [
    ("greater", 0.01, 0.2, None, "reproduced"),
    ("greater", -0.2, -0.01, None, "contradicted"),
    ("greater", -0.05, 0.1, None, "undecided"),
    ("greater", 0.0, 0.1, None, "undecided"),          # an interval touching 0 does not exclude it
    ("less", -0.2, -0.01, None, "reproduced"),
    ("less", 0.01, 0.2, None, "contradicted"),
    ("negligible", -0.04, 0.03, 0.05, "reproduced"),
    ("negligible", -0.121, -0.007, 0.05, "undecided"),  # may be small, may be large: n too small
    ("negligible", -0.3, -0.06, 0.05, "contradicted"),  # certainly more than 'little'
    ("negligible", 0.06, 0.2, 0.05, "contradicted"),
])
def test_verdict_rule(direction, lo, hi, margin, expected):
    assert verdict(direction, lo, hi, margin) == expected


def test_holm_matches_the_step_down_by_hand():
    # sorted 0.01, 0.02, 0.04, 0.5 -> 4*0.01, 3*0.02, max(2*0.04, prev), 1*0.5
    assert holm([0.04, 0.01, 0.5, 0.02]) == pytest.approx([0.08, 0.04, 0.5, 0.06])
    assert holm([0.9, 0.3]) == pytest.approx([0.9, 0.6])
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1, and monotone
    assert holm([]) == []


def test_min_detectable_effect_from_interval_width():
    # a 95% interval of half-width 1.96 SE -> SE 0.05 -> (1.96 + 0.84) * 0.05
    assert min_detectable(-0.098, 0.098) == pytest.approx(0.14, abs=1e-3)


def tables(values: dict[str, list[float]], metric: str = "score") -> dict:
    ids = [f"q{i}" for i in range(len(next(iter(values.values()))))]
    return {("answering", v): pd.DataFrame({metric: x, "value": x}, index=ids) for v, x in values.items()}


def claim(**kw) -> Claim:
    base = dict(id="c", system="S", claim="B beats A", source="src", published="+1 pp", ablation="ab",
                treatment="B", control="A", metric="score", datasets=("wattbot",), direction="greater")
    return Claim(**(base | kw))


def params(ablations: dict, suite: dict | None = None, **extra) -> FiguresParams:
    """The figures rule's params as its verb reads them (pipeline/workflow/report_settings.py)."""
    return figures_params({"report": REP | {"ablations": ablations}, "suite": suite or {}, "answering": {},
                           "retrieval": {}, "config_hash": "h", **extra})


def test_measure_reproduced_contradicted_and_not_run():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.clip(a + (rng.random(60) < 0.5), 0, 1)  # B fixes about half of A's misses, breaks nothing
    wb = tables({"A": a.tolist(), "B": b.tolist()})
    ab = {"ab": {"stage": "answering", "variants": ["A", "B"]}}
    claims = [claim(id="up"), claim(id="down", direction="less"),
              claim(id="gone", ablation="elsewhere"), claim(id="typo", treatment="C")]
    p = params(ab, claims_elsewhere={"config.full.yaml": ["elsewhere"]})
    t = measure_claims(p, wb, {}, p.ablations, claims).set_index("claim_id")
    assert t.loc["up", "verdict"] == "reproduced" and t.loc["down", "verdict"] == "contradicted"
    assert t.loc["up", "diff"] == pytest.approx(b.mean() - a.mean(), abs=1e-4)
    assert t.loc["up", "diff_lo"] > 0 and t.loc["up", "n"] == 60
    assert t.loc["up", "p_holm"] >= t.loc["up", "p_value"]
    assert t.loc["gone", "verdict"] == "not run" and "config.full.yaml" in t.loc["gone", "note"]
    assert t.loc["typo", "verdict"] == "not run" and "no variant C" in t.loc["typo", "note"]
    assert pd.isna(t.loc["gone", "p_holm"])


def test_best_of_control_and_testable_if():
    wb = tables({"A": [0, 0, 0, 1] * 5, "A2": [0, 1, 0, 1] * 5, "B": [1, 1, 0, 1] * 5})
    ab = {"ab": {"stage": "answering", "variants": ["A", "A2", "B"]}}
    best = claim(control=["A", "A2"])
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [best])
    assert t.loc[0, "control"] == "A2"  # the stronger of the two candidates on this dataset
    weak = claim(testable_if={"variant": "control", "metric": "value", "min": 0.6})
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [weak])
    assert t.loc[0, "verdict"] == "not testable with this model" and "testable_if" in t.loc[0, "note"]


def test_suite_claims_expand_to_every_suite_dataset():
    suite = {(d, v): pd.DataFrame({"ie@5": x}, index=[f"q{i}" for i in range(8)])
             for d in ("hotpotqa", "msmarco") for v, x in (("A", [0.1] * 8), ("B", [0.3] * 8))}
    ab = {"ab": {"stage": "retrieval", "variants": ["A", "B"]}}
    p = params(ab, {"datasets": ["hotpotqa", "msmarco"]})
    t = measure_claims(p, {}, suite, p.ablations, [claim(metric="ie@5", datasets=("suite",))])
    assert list(t["dataset"]) == ["hotpotqa", "msmarco"]
    assert list(t["diff"]) == pytest.approx([0.2, 0.2]) and (t["verdict"] == "reproduced").all()


def test_bad_claims_file_names_the_claim(tmp_path):
    bad = tmp_path / "claims.yaml"
    bad.write_text(yaml.safe_dump({"claims": [{"id": "x", "system": "S", "claim": "c", "source": "s", "published": "p",
                                               "ablation": "a", "treatment": "t", "control": "c", "metric": "m",
                                               "datasets": ["wattbot"], "direction": "sideways"}]}))
    with pytest.raises(ValueError, match="claim x: direction"):
        load_claims(bad)


def test_render_reads_claims_csv(tmp_path):
    wb = tables({"A": [0, 1] * 10, "B": [1, 1] * 10})
    ab = {"ab": {"stage": "answering", "variants": ["A", "B"]}}
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [claim(), claim(id="gone", ablation="zzz")])
    t.to_csv(tmp_path / "claims.csv", index=False)
    text = render(tmp_path)
    assert "2 rows: 1 reproduced, 1 not run." in text
    assert "+0.500 [" in text and "| KohakuRAG" not in text and "| S | B beats A |" in text
    assert "nan" not in text  # the reproduced row's empty note reads back as NaN: no "reproduced: nan"
    assert "| reproduced |" in text
    assert markdown_table(pd.DataFrame({"a": ["x|y"]})) == "| a |\n|---|\n| x\\|y |\n"


def test_undecided_verdict_says_when_the_variants_never_differ():
    """Identical per-question scores give a zero-width interval: no 'detects >= 0.000' but the reason."""
    wb = tables({"A": [0, 1] * 10, "B": [0, 1] * 10})
    ab = {"ab": {"stage": "answering", "variants": ["A", "B"]}}
    row = measure_claims(params(ab), wb, {}, params(ab).ablations, [claim()]).iloc[0].to_dict()
    assert row["verdict"] == "undecided" and pd.isna(row["n_needed"])
    assert verdict_text(row) == "undecided (n=20; every paired score is equal: no spread to size n from)"
    spread = {**row, "mde": 0.081, "note": "", "n_needed": 300, "n_needed_for": "published +0.031"}
    assert verdict_text(spread) == "undecided (n=20 detects ≥0.081; needs n≈300 for published +0.031)"
