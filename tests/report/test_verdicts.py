"""Verdicts against a published effect, the n a test needs, identical outputs and Holm per family, on
hand-made paired data whose answer is known (issue #33 item 3)."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.report.claims.claim import Claim, Effect, Pooled, load_claims
from pipeline.report.claims.measure import IDENTICAL, ClaimsInputs, SplitTables, measure_claims, verdict_counts
from pipeline.report.pages.claims_table import measurement_text, verdict_text
from pipeline.report.stats.ablation import InputFiles
from pipeline.report.stats.outputs import Outputs
from pipeline.report.stats.verdicts import (CONSISTENT, CONTRADICTED, LARGER, REPRODUCED, SMALLER,
                                            SMALLER_SIGN_UNDECIDED, UNDECIDED, holm, holm_by_family, n_needed,
                                            published_verdict)
from pipeline.workflow.report_settings import figures_params

REP = {"seed": 0, "bootstrap": 500, "permutations": 2000}


@pytest.mark.parametrize("lo, hi, published, expected", [
    (0.02, 0.08, 0.05, CONSISTENT),           # contains P, excludes 0
    (0.01, 0.03, 0.05, SMALLER),              # between 0 and P
    (0.06, 0.10, 0.05, LARGER),               # beyond P
    (-0.01, 0.03, 0.05, SMALLER_SIGN_UNDECIDED),  # contains 0, below P
    (-0.01, 0.06, 0.05, UNDECIDED),           # contains 0 and P
    (-0.05, -0.01, 0.05, CONTRADICTED),       # excludes 0 on the wrong side
    (0.0, 0.05, 0.05, UNDECIDED),             # touching 0 does not exclude it; touching P contains it
    (-0.08, -0.02, -0.05, CONSISTENT),        # a negative published effect mirrors the table
    (0.01, 0.05, -0.05, CONTRADICTED),
    (-0.03, -0.01, -0.05, SMALLER),
])
def test_published_verdict_table(lo, hi, published, expected):
    assert published_verdict(lo, hi, published) == expected


def test_published_effect_of_zero_is_an_error():
    with pytest.raises(ValueError, match="negligible"):
        published_verdict(-0.1, 0.1, 0.0)


def shifted(n: int, shift: float, spread: float, seed: int = 0) -> tuple[list[float], list[float]]:
    """Control scores and treatment = control + shift + alternating +-spread: the paired mean difference is
    ``shift`` exactly and its 95% interval about shift +- 2 * spread / sqrt(n)."""
    a = np.random.default_rng(seed).uniform(0.2, 0.6, n)
    return a.tolist(), (a + shift + spread * np.where(np.arange(n) % 2, 1.0, -1.0)).tolist()


def params(ablations: dict, suite: dict | None = None, **extra):
    return figures_params({"report": REP | {"ablations": ablations}, "suite": suite or {}, "answering": {},
                           "retrieval": {}, "config_hash": "h", **extra})


def claim(**kw) -> Claim:
    base = dict(id="c", system="S", claim="B beats A", source="src", published="+5 pp", ablation="ab",
                treatment="B", control="A", metric="score", datasets=("wattbot",), direction="greater")
    return Claim(**(base | kw))


QUICK = ClaimsInputs(sizing=False)


def measured(shift: float, spread: float, effect: Effect | None, n: int = 200, **kw) -> dict:
    a, b = shifted(n, shift, spread)
    ids = [f"q{i}" for i in range(n)]
    wb = {("answering", v): pd.DataFrame({"score": x}, index=ids) for v, x in (("A", a), ("B", b))}
    p = params({"ab": {"stage": "answering", "variants": ["A", "B"]}}, score_split="train")
    return measure_claims(p, wb, {}, p.ablations, [claim(effect=effect, **kw)], QUICK).iloc[0].to_dict()


ABS = Effect(0.05, "absolute", "a table")


@pytest.mark.parametrize("shift, spread, expected", [
    (0.05, 0.05, CONSISTENT),
    (0.02, 0.05, SMALLER),
    (0.09, 0.05, LARGER),
    (-0.03, 0.05, CONTRADICTED),
    (0.0, 0.05, SMALLER_SIGN_UNDECIDED),
    (0.02, 0.5, UNDECIDED),
])
def test_every_verdict_is_reached_on_paired_data(shift, spread, expected):
    row = measured(shift, spread, ABS)
    assert row["verdict"] == expected, (row["lo"], row["hi"])
    assert row["diff"] == pytest.approx(shift, abs=1e-4) and row["scale"] == "difference"
    assert row["published_effect"] == 0.05 and row["published_kind"] == "absolute"
    assert row["sample"] == "in-sample" and row["decides"] and row["family"] == "S"  # train, no held-out row


def test_a_relative_effect_is_judged_on_its_own_scale():
    """+50% relative is judged on mean(t)/mean(c) - 1 (the ratio test's interval), not times the control's
    observed mean on the difference's interval."""
    a, _ = shifted(200, 0, 0)
    row = measured(0.5 * float(np.mean(a)), 0.05, Effect(0.5, "relative", "abstract"))
    assert row["scale"] == "ratio" and row["published_effect"] == 0.5 and row["published_kind"] == "relative"
    assert row["estimate"] == pytest.approx(row["relative"], abs=1e-4) == pytest.approx(0.5, abs=1e-3)
    assert row["lo"] < 0.5 < row["hi"] and row["verdict"] == CONSISTENT
    assert verdict_text(row) == "consistent with published +50.0%: in-sample"  # train, and no other row: it decides
    assert measurement_text(row).startswith("+50.0% relative [+")


def test_a_relative_effect_of_a_control_at_0_is_undecided_with_its_reason():
    ids = [f"q{i}" for i in range(20)]
    wb = {("answering", "A"): pd.DataFrame({"score": [0.0] * 20}, index=ids),
          ("answering", "B"): pd.DataFrame({"score": [1.0, 0.0] * 10}, index=ids)}
    p = params({"ab": {"stage": "answering", "variants": ["A", "B"]}})
    t = measure_claims(p, wb, {}, p.ablations, [claim(effect=Effect(0.8, "relative", "abstract"))], QUICK)
    assert t.loc[0, "verdict"] == UNDECIDED and "the control's mean is 0" in t.loc[0, "note"]
    assert measurement_text(t.loc[0].to_dict()).startswith("nan") is False
    assert "[−∞, +∞]" in measurement_text(t.loc[0].to_dict())


def test_a_negligible_claim_is_read_by_two_one_sided_tests_alone():
    """One reading: the TOST p, its 90% interval against the margin; the published +3.1 pp is not a verdict."""
    row = measured(0.0, 0.05, Effect(0.031, "absolute", "abstract"), direction="negligible", margin=0.05)
    assert row["verdict"] == REPRODUCED and row["test"] == "two one-sided tests" and row["level"] == 0.9
    assert -0.05 < row["lo"] and row["hi"] < 0.05 and row["p_value"] < 0.05
    far = measured(0.03, 0.4, Effect(0.031, "absolute", "abstract"), direction="negligible", margin=0.05)
    assert far["verdict"] == UNDECIDED and far["p_value"] >= 0.05  # +0.031 in truth: 'little', not shown equal
    assert "published" not in verdict_text(far)


def test_a_per_dataset_effect_judges_only_the_datasets_it_names():
    suite = {(d, v): pd.DataFrame({"ie@5": x}, index=[f"q{i}" for i in range(200)])
             for d in ("hotpotqa", "msmarco") for v, x in zip(("A", "B"), shifted(200, 0.05, 0.05), strict=True)}
    p = params({"ab": {"stage": "retrieval", "variants": ["A", "B"]}}, {"datasets": ["hotpotqa", "msmarco"]})
    c = claim(metric="ie@5", datasets=("suite",), effect=Effect({"msmarco": 0.05, "scidocs": 0.04}, "absolute", "t"),
              pooled=Pooled(0.045, "abstract", {"scidocs": "not offline"}))
    t = measure_claims(p, {}, suite, p.ablations, [c], QUICK).set_index("dataset")
    assert t.loc["msmarco", "verdict"] == CONSISTENT and t.loc["hotpotqa", "verdict"] == "reproduced"
    assert pd.isna(t.loc["hotpotqa", "published_effect"])
    assert list(t["family"]) == ["hotpotqa", "msmarco", "S"]
    pooled = t.loc["pooled"]
    assert pooled["published_effect"] == 0.045 and pooled["verdict"] == CONSISTENT
    assert "no published value: hotpotqa" in pooled["note"] and "scidocs (not offline)" in pooled["note"]
    assert "against the mean of the published values of msmarco (+0.0500): consistent with published" in pooled["note"]
    assert pooled["claim_verdict"] == CONSISTENT and t["claim_verdict"].nunique() == 1


def two_splits(test_shift: float, train_shift: float, n_test: int = 150, n_train: int = 60):
    out = {}
    for split, shift, n in (("test", test_shift, n_test), ("train", train_shift, n_train)):
        a, b = shifted(n, shift, 0.05, seed=len(split))
        ids = [f"{split}{i}" for i in range(n)]
        out[split] = {("answering", v): pd.DataFrame({"score": x}, index=ids) for v, x in (("A", a), ("B", b))}
    return SplitTables(out)


def test_train_rows_are_in_sample_and_kept_out_of_families_and_the_headline():
    p = params({"ab": {"stage": "answering", "variants": ["A", "B"]}}, score_split="train")
    t = measure_claims(p, two_splits(0.05, -0.05), {}, p.ablations, [claim(effect=ABS)], QUICK).set_index("dataset")
    test, train = t.loc["wattbot/test"], t.loc["wattbot/train"]
    assert (test["sample"], test["decides"], test["family"]) == ("held-out", True, "S")
    assert (train["sample"], train["decides"]) == ("in-sample", False)
    assert pd.isna(train["family"]) or train["family"] == "" and pd.isna(train["p_holm"])
    assert train["verdict"] == CONTRADICTED and test["claim_verdict"] == train["claim_verdict"] == CONSISTENT
    assert verdict_text(train.to_dict()).startswith("contradicted (published +0.050): in-sample, not counted")
    assert verdict_text(test.to_dict()) == "consistent with published +0.050"
    assert verdict_counts(t.reset_index()) == {CONSISTENT: 1}


def test_a_verdict_that_excludes_0_needs_the_holm_adjusted_level():
    """Three claims in one family, one of them p ~ 0.03: excludes 0 at 5% but not at the Holm level, so it reads
    as if its interval contained 0 and says why."""
    n = 120
    ids = [f"q{i}" for i in range(n)]
    a = np.zeros(n)
    wb = {("answering", "A"): pd.DataFrame({"score": a}, index=ids)}
    d = np.zeros(n)
    d[:12], d[12:15] = 1.0, -1.0  # 12 wins, 3 losses: p ~ 0.035 two-sided, 3 x p > 0.05
    wb[("answering", "B")] = pd.DataFrame({"score": a + d}, index=ids)
    wb[("answering", "C")] = pd.DataFrame({"score": a + np.where(np.arange(n) % 2, 0.3, -0.3)}, index=ids)
    wb[("answering", "D")] = pd.DataFrame({"score": a + np.where(np.arange(n) % 3, 0.2, -0.4)}, index=ids)
    p = params({"ab": {"stage": "answering", "variants": ["A", "B", "C", "D"]}})
    claims = [claim(id="b"), claim(id="c", treatment="C"), claim(id="d", treatment="D")]
    t = measure_claims(p, wb, {}, p.ablations, claims, QUICK).set_index("claim_id")
    b = t.loc["b"]
    assert b["p_value"] < 0.05 < b["p_holm"] and b["lo"] > 0
    assert b["verdict"] == UNDECIDED and "not at family S's Holm-adjusted level" in b["note"]


def test_a_claim_measured_twice_has_one_verdict():
    """Two sampling seeds (replicate_of) are one claim: one verdict where both agree, else undecided."""
    p = params({"ab": {"stage": "answering", "variants": ["A", "B"]}, "ab2": {"stage": "answering", "variants": ["A", "B2"]}})
    a, b = shifted(200, 0.05, 0.05)
    _, b2 = shifted(200, 0.0, 0.3)
    ids = [f"q{i}" for i in range(200)]
    wb = {("answering", v): pd.DataFrame({"score": x}, index=ids) for v, x in (("A", a), ("B", b), ("B2", b2))}
    claims = [claim(id="seed0", effect=ABS), claim(id="seed100", ablation="ab2", treatment="B2", effect=ABS,
                                                     replicate_of="seed0")]
    t = measure_claims(p, wb, {}, p.ablations, claims, QUICK)
    assert list(t["claim_key"]) == ["seed0", "seed0"] and list(t["verdict"]) == [CONSISTENT, SMALLER_SIGN_UNDECIDED]
    assert set(t["claim_verdict"]) == {UNDECIDED} and "deciding rows disagree" in t.loc[0, "note"]
    assert verdict_counts(t) == {UNDECIDED: 1}


def test_n_needed_gives_80_percent_power_in_simulation():
    """A hand-made paired population (20 questions the treatment wins, 8 it loses, 72 ties): at the
    formula's n a two-sided 5% test on the mean difference rejects in ~80% of draws, at half that n in
    far fewer (the formula is not trivially satisfied)."""
    pop = np.array([1.0] * 20 + [-1.0] * 8 + [0.0] * 72)
    effect, sd = pop.mean(), pop.std(ddof=1)
    n = n_needed(sd, effect)
    assert n == int(np.ceil(((1.959964 + 0.841621) * sd / effect) ** 2))

    def power(m: int, draws: int = 4000) -> float:
        d = np.random.default_rng(1).choice(pop, size=(draws, m))
        z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(m))
        return float((np.abs(z) > 1.959964).mean())

    assert power(n) == pytest.approx(0.80, abs=0.03)
    assert power(n // 2) < 0.6
    assert n_needed(0.0, 0.05) is None and n_needed(0.3, 0.0) is None  # nothing to size


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def answers(values: list[str]) -> list[dict]:
    return [{"id": f"q{i}", "answer_value": v, "answer_unit": "is_blank", "ref_id": ["d1"], "explanation": f"run {v}"}
            for i, v in enumerate(values)]


def test_identical_outputs_are_not_testable(tmp_path):
    """Two variants with the same answers on every question (their explanations differ) read 'not testable:
    identical outputs', outside Holm; two that answer one question differently but score the same stay
    undecided and say so."""
    files = InputFiles(answers_of={
        "A": write_jsonl(tmp_path / "a.jsonl", answers(["1", "2", "3", "4"])),
        "B": write_jsonl(tmp_path / "b.jsonl", answers(["1", "2", "3", "4"])),
        "C": write_jsonl(tmp_path / "c.jsonl", answers(["1", "2", "3", "5"])),  # wrong either way: same score
    })
    ids = [f"q{i}" for i in range(4)]
    wb = {("answering", v): pd.DataFrame({"score": [1.0, 1.0, 0.0, 0.0]}, index=ids) for v in "ABC"}
    wb[("answering", "D")] = pd.DataFrame({"score": [1.0, 0.0, 1.0, 0.0]}, index=ids)
    p = params({"ab": {"stage": "answering", "variants": ["A", "B", "C", "D"]}})
    claims = [claim(id="same"), claim(id="equal", treatment="C", alike_because="C only differs on q3"), claim(id="real", treatment="D")]
    t = measure_claims(p, wb, {}, p.ablations, claims, ClaimsInputs(Outputs(files).of, sizing=False)).set_index("claim_id")
    assert t.loc["same", "verdict"] == IDENTICAL and "the same answers on all 4 questions" in t.loc["same", "note"]
    assert verdict_text(t.loc["same"].to_dict()) == f"{IDENTICAL}: the same answers on all 4 questions"
    assert pd.isna(t.loc["same", "p_holm"]) and pd.isna(t.loc["same", "n_needed"])
    assert t.loc["equal", "verdict"] == UNDECIDED
    assert "answers differ on 1 of 4 questions, yet every paired score is equal" in t.loc["equal", "note"]
    assert t.loc["equal", "note"].endswith("; C only differs on q3")  # the claim's own reason, from claims.yaml
    assert t.loc["real", "p_holm"] == pytest.approx(min(1.0, 2 * t.loc["real", "p_value"]), abs=1e-4)  # 2 tested
    assert t.loc["equal", "claim_verdict"] == UNDECIDED and t.loc["same", "claim_verdict"] == IDENTICAL
    # outputs of other questions (another split's file) decide nothing: the row stays undecided on its scores
    other = {("answering", v): x.set_axis([f"t{i}" for i in range(4)]) for (_, v), x in wb.items()}
    t = measure_claims(p, other, {}, p.ablations, claims[:1], ClaimsInputs(Outputs(files).of, sizing=False))
    assert t.loc[0, "verdict"] == UNDECIDED and "every paired score is equal" in t.loc[0, "note"]


def hits(ids_per_query: list[list[str]]) -> list[dict]:
    return [{"id": f"x{i}", "hits": [{"node_id": n} for n in ids], "context": []} for i, ids in enumerate(ids_per_query)]


def test_suite_outputs_compare_retrieved_ids(tmp_path):
    """Suite runs are compared by their ranked ids: the same ids in another order differ (a rerank)."""
    files = InputFiles(suite_run_of={
        "msmarco:A": write_jsonl(tmp_path / "a.jsonl", hits([["n1", "n2"], ["n3"]])),
        "msmarco:B": write_jsonl(tmp_path / "b.jsonl", hits([["n1", "n2"], ["n3"]])),
        "msmarco:C": write_jsonl(tmp_path / "c.jsonl", hits([["n2", "n1"], ["n3"]])),
    })
    suite = {("msmarco", v): pd.DataFrame({"ie@5": [0.5, 0.0]}, index=["x0", "x1"]) for v in "ABC"}
    p = params({"ab": {"stage": "retrieval", "variants": ["A", "B", "C"]}}, {"datasets": ["msmarco"]})
    claims = [claim(id="same", metric="ie@5", datasets=("suite",)),
              claim(id="order", treatment="C", metric="ie@5", datasets=("suite",))]
    t = measure_claims(p, {}, suite, p.ablations, claims, ClaimsInputs(Outputs(files).of, sizing=False)).set_index("claim_id")
    assert t.loc["same", "verdict"] == IDENTICAL and "retrieved ids" in t.loc["same", "note"]
    assert t.loc["order", "verdict"] == UNDECIDED and "(in order alone on 1)" in t.loc["order", "note"]


def test_holm_runs_within_each_family():
    p = [0.01, 0.04, 0.03, 0.02]
    fam = ["wattbot/train", "wattbot/test", "wattbot/train", "wattbot/test"]
    assert holm_by_family(p, fam) == pytest.approx([0.02, 0.04, 0.03, 0.04])
    assert holm_by_family(p, ["all"] * 4) == pytest.approx(holm(p))
    with pytest.raises(ValueError, match="one family per p-value"):
        holm_by_family([0.1], [])


def test_bad_effect_names_the_claim(tmp_path):
    raw = {"id": "x", "system": "S", "claim": "c", "source": "s", "published": "p", "ablation": "a", "treatment": "t",
           "control": "c", "metric": "score", "datasets": ["wattbot"], "direction": "greater"}
    for effect in ({"value": 0.03, "kind": "percent", "ref": "r"}, {"value": 0, "kind": "absolute", "ref": "r"},
                   {"value": 0.03, "kind": "absolute"}):
        bad = tmp_path / "claims.yaml"
        bad.write_text(yaml.safe_dump({"claims": [raw | {"effect": effect}]}))
        with pytest.raises(ValueError, match="claim x: effect"):
            load_claims(bad)


def test_shipped_claims_record_the_published_numbers():
    """The numbers of ../shared/docs (kohakurag.md §8, sproutrag.md §6), frozen in claims.yaml."""
    by_id = {c.id: c for c in load_claims()}
    assert by_id["kohaku-bm25"].effect == Effect(0.031, "absolute", by_id["kohaku-bm25"].effect.ref)
    assert by_id["kohaku-ensemble"].effect.on("wattbot") == 0.012
    assert (by_id["kohaku-context-first"].effect.kind, by_id["kohaku-context-first"].effect.on("wattbot")) == ("relative", 0.8)
    assert (by_id["kohaku-retry"].effect.kind, by_id["kohaku-retry"].effect.on("wattbot")) == ("relative", 0.69)
    ie = by_id["sprout-ie"].effect
    assert (ie.on("dragonball"), ie.on("msmarco"), ie.on("legalbench_rag"), ie.on("hotpotqa")) == (0.0806, 0.0683, 0.049, None)
    assert ie.on("scidocs") == 0.0465 and by_id["sprout-ie"].pooled.value == 0.061  # the abstract's average of four
    assert set(by_id["sprout-ie"].pooled.absent) == {"scidocs"}
    assert by_id["kohaku-ensemble-seed100"].key == "kohaku-ensemble"
    negligible = [c for c in by_id.values() if c.direction == "negligible"]
    assert negligible and all(c.margin and c.margin_reason for c in negligible)
    assert all("§" in c.effect.ref for c in by_id.values() if c.effect)


def test_figures_rule_is_passed_the_suite_runs():
    """The figures rule declares each suite run beside its per-query table, so the claims can compare ids."""
    from pipeline import paths
    from pipeline.config.load import load_config
    from pipeline.datasets.paths import REPO
    from pipeline.workflow import figures_inputs, named_args

    files = figures_inputs(load_config([REPO / "config.yaml"]))
    assert set(files["suite_run"]) == set(files["suite"]) and files["suite_run"]
    assert files["suite_run"]["msmarco:sprout"] == paths.retrieval("msmarco", "sprout", "queries")
    assert "--suite-run msmarco:sprout=" in named_args(files)
    assert files["suite_gold"]["msmarco"] == paths.export_gold("msmarco")  # each query's documents: the units


def test_n_needed_sizes_no_float_noise_and_always_fits_an_integer_column():
    """Two variants whose per-question scores differ yet average the same give a difference of ~1e-17:
    sizing for it asked for ~1e33 questions and the claims table's Int64 column overflowed (a default run
    with `precision: fp32` failed in its figures job). Noise sizes nothing; any real effect on a metric in
    [0, 1] (per-question differences in [-1, 1], so sd <= 1) sizes to an n that fits an int64."""
    from pipeline.report.stats.verdicts import NOISE_EFFECT

    t = np.array([0.1, 0.7, 0.3, 0.2])
    c = np.array([0.1, 0.2, 0.3, 0.7])
    noise = t.mean() - c.mean()
    assert noise != 0 and abs(noise) < NOISE_EFFECT  # the float noise itself, as a claim row computes it
    assert n_needed(float(np.std(t - c, ddof=1)), noise) is None
    assert n_needed(0.3, -1e-17) is None
    worst = n_needed(1.0, NOISE_EFFECT)
    assert worst is not None and worst < 2**63
    assert pd.Series([worst, None]).astype("Int64").iloc[0] == worst
