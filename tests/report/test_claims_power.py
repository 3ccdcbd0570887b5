"""A claims row's power (issue #44 item 6): simulated at the published effect from a pilot, never from the
observed difference; with the chance of reading "consistent"; at the family's first Holm level; and the
document units of a row whose questions share a document (item 10)."""
import numpy as np
import pandas as pd
import pytest

from pipeline.report.claims.claim import Claim, Effect
from pipeline.report.claims.documents import suite_clusters, wattbot_clusters
from pipeline.report.claims.measure import ClaimsInputs, SplitTables, measure_claims
from pipeline.report.claims.power import size_row, target_of
from pipeline.report.pages.claims_table import verdict_text
from pipeline.workflow.report_settings import figures_params

REP = {"seed": 0, "bootstrap": 500, "permutations": 2000}


def params(**extra):
    return figures_params({"report": REP | {"ablations": {"ab": {"stage": "answering", "variants": ["A", "B"]}}},
                           "suite": {}, "answering": {}, "retrieval": {}, "config_hash": "h", **extra})


def claim(**kw) -> Claim:
    base = dict(id="c", system="S", claim="B beats A", source="src", published="+10 pp", ablation="ab",
                treatment="B", control="A", metric="score", datasets=("wattbot",), direction="greater",
                effect=Effect(0.1, "absolute", "t"))
    return Claim(**(base | kw))


def binary(n: int, p_win: float, p_lose: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = (rng.random(n) < 0.5).astype(float)
    u = rng.random(n)
    t = c.copy()
    t[(c == 0) & (u < 2 * p_win)] = 1.0
    t[(c == 1) & (u < 2 * p_lose)] = 0.0
    return t, c


def split_tables(test: tuple, train: tuple) -> SplitTables:
    out = {}
    for split, (t, c) in (("test", test), ("train", train)):
        ids = [f"{split}{i}" for i in range(len(t))]
        out[split] = {("answering", "A"): pd.DataFrame({"score": c}, index=ids),
                      ("answering", "B"): pd.DataFrame({"score": t}, index=ids)}
    return SplitTables(out)


def test_power_is_simulated_at_the_published_effect_not_the_observed_one():
    """Two test splits with opposite observed effects, one train pilot: the same power and n needed."""
    pilot = binary(60, 0.2, 0.1, seed=1)
    p = params(score_split="train")
    rows = [measure_claims(p, split_tables(binary(80, w, l, seed=2), pilot), {}, p.ablations, [claim()]).iloc[0]
            for w, l in ((0.25, 0.05), (0.05, 0.25))]
    assert rows[0]["diff"] > 0 > rows[1]["diff"]
    for col in ("power", "p_consistent", "n_needed"):
        assert rows[0][col] == rows[1][col], col
    r = rows[0]
    assert 0 < r["power"] < 1 and 0 <= r["p_consistent"] <= r["power"] and r["n_needed"] > 0
    assert r["n_needed_for"] == "published +0.100"
    assert f"needs n≈{r['n_needed']} for published +0.100" in verdict_text(r.to_dict())


def test_more_questions_more_power_and_the_first_holm_step_costs_power():
    t, c = binary(60, 0.2, 0.1, seed=3)
    target = target_of("greater", 0.1, "difference", None)
    small, large = size_row(t, c, 40, target), size_row(t, c, 200, target)
    assert small["power"] < large["power"] and small["n_needed"] == large["n_needed"]  # n_needed: the pilot's
    strict = size_row(t, c, 200, target, alpha=0.05 / 8)
    assert strict["power"] < large["power"] and strict["n_needed"] > large["n_needed"]


def test_an_equivalence_claim_is_sized_for_equivalence_at_the_papers_effect():
    t, c = binary(60, 0.15, 0.15, seed=5)
    assert target_of("negligible", 0.031, "difference", 0.05).label == "equivalence within ±0.05 at the published +0.031"
    assert target_of("negligible", 0.09, "difference", 0.05).truth == 0  # the paper's beyond the margin: sized at 0
    at_paper = target_of("negligible", 0.06, "difference", 0.15)  # a wide margin: few questions, a quick test
    at_zero = target_of("negligible", None, "difference", 0.15)
    assert at_zero.label == "equivalence within ±0.15 at no difference"
    a, z = size_row(t, c, 100, at_paper), size_row(t, c, 100, at_zero)
    assert a["p_consistent"] is None and a["power"] <= z["power"]
    assert a["n_needed"] is None or z["n_needed"] < a["n_needed"]  # nearer the margin: more questions
    assert target_of("greater", None, "difference", None) is None  # no published effect: nothing to size


def test_a_question_without_a_pilot_pair_on_both_sides_says_so():
    t = np.ones(30)
    row = size_row(t, np.zeros(30), 30, target_of("greater", 0.1, "difference", None))
    assert row["power"] is None and row["n_needed_for"].endswith("no pilot pair on both sides of it")


def test_document_clusters_of_wattbot_and_the_suite(tmp_path):
    labels = pd.DataFrame({"id": ["q1", "q2", "q3", "q4", "q5"],
                           "ref_id": ["['a']", "['a','b']", "['b']", "['c']", "is_blank"]})
    cl = wattbot_clusters(labels)
    assert cl["q1"] == cl["q2"] == cl["q3"] == "a+b"  # one paper shared, or two joined by a question citing both
    assert cl["q4"] == "c" and cl["q5"].startswith("no document #")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(f'{{"query_id": "{q}", "doc_id": "{d}"}}\n' for q, d in
                            (("x", "d1"), ("x", "d1"), ("y", "d1"), ("z", "d2"))))
    s = suite_clusters(gold)
    assert s["x"] == s["y"] == "d1" and s["z"] == "d2"


def test_a_row_whose_questions_share_documents_flips_documents():
    """Units: documents where questions share one; the interval is wider than the per-question one."""
    rng = np.random.default_rng(7)
    n, docs = 120, 12
    doc = np.repeat(np.arange(docs), n // docs)
    c = (rng.random(n) < 0.5).astype(float)
    t = np.clip(c + (rng.random(n) < np.where(doc % 2, 0.4, 0.0)), 0, 1)  # half the documents gain a lot
    ids = [f"q{i}" for i in range(n)]
    wb = {("answering", "A"): pd.DataFrame({"score": c}, index=ids), ("answering", "B"): pd.DataFrame({"score": t}, index=ids)}
    p = params()
    clusters = {"wattbot": pd.Series([f"doc{d}" for d in doc], index=ids)}
    by_doc = measure_claims(p, wb, {}, p.ablations, [claim()], ClaimsInputs(clusters=clusters, sizing=False)).iloc[0]
    by_q = measure_claims(p, wb, {}, p.ablations, [claim()], ClaimsInputs(sizing=False)).iloc[0]
    assert by_doc["units"] == "documents (12 clusters)" and by_q["units"] == "questions"
    assert by_doc["estimate"] == pytest.approx(by_q["estimate"])
    assert by_doc["hi"] - by_doc["lo"] > by_q["hi"] - by_q["lo"]
