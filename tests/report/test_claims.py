"""The reproduction table: verdict rule, Holm, controls fixed in advance, suite claims with their pooled row,
claims.yaml's checks and the page that renders claims.csv."""
import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.report.claims.claim import Claim, load_claims
from pipeline.report.claims.measure import ClaimsInputs, measure_claims
from pipeline.report.pages.claims_table import render, verdict_text
from pipeline.report.render.tables import markdown_table
from pipeline.report.stats.verdicts import holm, min_detectable, verdict
from pipeline.workflow.report_settings import figures_params

REP = {"seed": 0, "bootstrap": 500, "permutations": 2000}
QUICK = ClaimsInputs(sizing=False)  # power is simulated in tests/report/test_claims_power.py


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


def params(ablations: dict, suite: dict | None = None, **extra):
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
    t = measure_claims(p, wb, {}, p.ablations, claims, QUICK).set_index("claim_id")
    assert t.loc["up", "verdict"] == "reproduced" and t.loc["down", "verdict"] == "contradicted"
    assert t.loc["up", "diff"] == pytest.approx(b.mean() - a.mean(), abs=1e-4)
    assert t.loc["up", "estimate"] == t.loc["up", "diff"] and t.loc["up", "scale"] == "difference"
    assert t.loc["up", "lo"] > 0 and t.loc["up", "n"] == 60 and t.loc["up", "test"] == "sign-flip"
    assert t.loc["up", "resamples"] >= 2000 and t.loc["up", "mc_se_p"] >= 0
    assert t.loc["up", "p_holm"] >= t.loc["up", "p_value"] and t.loc["up", "family"] == "S"
    assert t.loc["gone", "verdict"] == "not run" and "config.full.yaml" in t.loc["gone", "note"]
    assert t.loc["typo", "verdict"] == "not run" and "no variant C" in t.loc["typo", "note"]
    assert pd.isna(t.loc["gone", "p_holm"])


def test_every_interval_agrees_with_its_p():
    """One procedure: a measured row's interval excludes 0 exactly when its unadjusted p < 0.05."""
    rng = np.random.default_rng(4)
    rows = []
    for i in range(12):
        a = rng.integers(0, 2, 50).astype(float)
        b = np.clip(a + (rng.random(50) < 0.03 * i) - (rng.random(50) < 0.05), 0, 1)
        p = params({"ab": {"stage": "answering", "variants": ["A", "B"]}})
        rows.append(measure_claims(p, tables({"A": a, "B": b}), {}, p.ablations, [claim()], QUICK).iloc[0])
    for r in rows:
        assert (r["lo"] > 0 or r["hi"] < 0) == (r["p_value"] < 0.05), (r["lo"], r["hi"], r["p_value"])
    assert any(r["p_value"] < 0.05 for r in rows) and any(r["p_value"] >= 0.05 for r in rows)


def test_best_of_control_is_the_one_chosen_in_advance():
    """A best_of control is the candidate chosen on the pilot (claims.yaml control.chosen), not the best on
    the data judged; the row says where it was chosen; a dataset without a choice does not run."""
    wb = tables({"A": [0, 0, 0, 1] * 5, "A2": [0, 1, 0, 1] * 5, "B": [1, 1, 0, 1] * 5})
    ab = {"ab": {"stage": "answering", "variants": ["A", "A2", "B"]}}
    chosen = claim(control=["A", "A2"], chosen={"wattbot": "A"}, control_why="the pilot")
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [chosen], QUICK)
    assert t.loc[0, "control"] == "A"  # the weaker candidate here: chosen elsewhere, kept
    assert t.loc[0, "control_chosen"] == "best of A, A2, chosen on the pilot"
    none = claim(control=["A", "A2"], chosen={"msmarco": "A"})
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [none], QUICK)
    assert t.loc[0, "verdict"] == "not run" and "no control chosen in advance for wattbot" in t.loc[0, "note"]
    weak = claim(testable_if={"variant": "control", "metric": "value", "min": 0.6})
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [weak], QUICK)
    assert t.loc[0, "verdict"] == "not testable with this model" and "testable_if" in t.loc[0, "note"]


def test_suite_claims_expand_to_every_suite_dataset_and_pool():
    rng = np.random.default_rng(2)
    ids = [f"q{i}" for i in range(40)]
    suite = {}
    for d in ("hotpotqa", "msmarco"):
        a = rng.random(40)
        suite[(d, "A")] = pd.DataFrame({"ie@5": a}, index=ids)
        suite[(d, "B")] = pd.DataFrame({"ie@5": a + 0.2 + rng.normal(0, 0.05, 40)}, index=ids)
    ab = {"ab": {"stage": "retrieval", "variants": ["A", "B"]}}
    p = params(ab, {"datasets": ["hotpotqa", "msmarco"]})
    t = measure_claims(p, {}, suite, p.ablations, [claim(metric="ie@5", datasets=("suite",))], QUICK)
    assert list(t["dataset"]) == ["hotpotqa", "msmarco", "pooled"]
    assert (t["verdict"] == "reproduced").all()
    pooled = t.iloc[2]
    assert pooled["decides"] and pooled["family"] == "S" and pooled["units"] == "2 datasets"
    assert pooled["lo"] <= pooled["estimate"] <= pooled["hi"] and "pooled: hotpotqa, msmarco" in pooled["note"]
    assert not t.iloc[0]["decides"] and list(t["family"][:2]) == ["hotpotqa", "msmarco"]  # per dataset beside it


def test_bad_claims_file_names_the_claim(tmp_path):
    bad = tmp_path / "claims.yaml"
    raw = {"id": "x", "system": "S", "claim": "c", "source": "s", "published": "p", "ablation": "a", "treatment": "t",
           "control": "c", "metric": "m", "datasets": ["wattbot"], "direction": "sideways"}
    bad.write_text(yaml.safe_dump({"claims": [raw]}))
    with pytest.raises(ValueError, match="claim x: direction"):
        load_claims(bad)
    for fix, match in (({"direction": "negligible", "margin": 0.05}, "margin_reason"),
                       ({"direction": "greater", "control": {"best_of": ["a", "b"]}}, "control.chosen"),
                       ({"direction": "greater", "control": {"best_of": ["a"], "chosen": {"w": "z"}, "why": "p"}},
                        "not among best_of")):
        bad.write_text(yaml.safe_dump({"claims": [raw | fix]}))
        with pytest.raises(ValueError, match=match):
            load_claims(bad)


def test_render_reads_claims_csv(tmp_path):
    wb = tables({"A": [0, 1] * 10, "B": [1, 1] * 10})
    ab = {"ab": {"stage": "answering", "variants": ["A", "B"]}}
    t = measure_claims(params(ab), wb, {}, params(ab).ablations, [claim(), claim(id="gone", ablation="zzz")], QUICK)
    t.to_csv(tmp_path / "claims.csv", index=False)
    text = render(tmp_path)
    assert text.startswith("2 claims: 1 reproduced, 1 not run; 2 rows: 1 reproduced, 1 not run.")
    assert "+0.500 [" in text and "| KohakuRAG" not in text and "| S | B beats A |" in text
    assert "nan" not in text  # the reproduced row's empty note reads back as NaN: no "reproduced: nan"
    assert "| reproduced |" in text
    assert markdown_table(pd.DataFrame({"a": ["x|y"]})) == "| a |\n|---|\n| x\\|y |\n"


def test_undecided_verdict_says_when_the_variants_never_differ():
    """Identical per-question scores: the reason, not a number of questions to size."""
    wb = tables({"A": [0, 1] * 10, "B": [0, 1] * 10})
    ab = {"ab": {"stage": "answering", "variants": ["A", "B"]}}
    row = measure_claims(params(ab), wb, {}, params(ab).ablations, [claim()], QUICK).iloc[0].to_dict()
    assert row["verdict"] == "undecided" and pd.isna(row["n_needed"])
    assert verdict_text(row) == (
        "undecided: no differing question: the two score the same on every question, so only undecided is "
        "possible; every paired score is equal"
    )
    sized = {**row, "note": "", "power": 0.41, "p_consistent": 0.3, "n_needed": 300, "n_needed_for": "published +0.031"}
    assert verdict_text(sized) == "undecided: power 0.41 at n=20, consistent 0.30; needs n≈300 for published +0.031"


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_n_is_one_line_not_a_crash(n):
    """0, 1 or 2 paired questions: a row reading undecided with its reason (and power sized without a crash)."""
    ids = [f"q{i}" for i in range(3)]
    a = pd.DataFrame({"score": [0.0, 0.0, 0.0]}, index=ids)
    b = pd.DataFrame({"score": [1.0] * n + [np.nan] * (3 - n)}, index=ids)
    p = params({"ab": {"stage": "answering", "variants": ["A", "B"]}})
    from pipeline.report.claims.claim import Effect

    t = measure_claims(p, {("answering", "A"): a, ("answering", "B"): b}, {}, p.ablations,
                       [claim(effect=Effect(0.1, "absolute", "t"))])
    row = t.iloc[0].to_dict()
    assert row["verdict"] == "undecided" and row["n"] == n
    assert ("no paired question" if n == 0 else f"{n} differing question") in row["note"]
    assert "\n" not in verdict_text(row)
