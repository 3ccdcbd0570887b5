"""The ensemble-size curve on hand-made members whose votes and scores are known."""
import pandas as pd
import pytest

from pipeline.answer.ensemble import member_from_records, sample_members
from pipeline.report.pages.ensemble_size import COLUMNS, render, size_curve, subsets_of_size
from pipeline.answer.vote import VoteSettings
from pipeline.report.params import Resampling

GOLD = {"q1": ("10", "a"), "q2": ("20", "b"), "q3": ("30", "c"), "q4": ("40", "d")}
# Each member is right (value and ref: score 1.0) on two questions and wrong elsewhere (score 0.1: the
# na component only); on q4 all three are wrong with three different values.
RIGHT = {"M1": ("q1", "q2"), "M2": ("q1", "q3"), "M3": ("q2", "q3")}
REP = Resampling(seed=0, bootstrap=500, permutations=1000)


def records(name: str) -> list[dict]:
    wrong = name[-1]  # "1", "2", "3": distinct wrong values
    out = []
    for qid, (value, ref) in GOLD.items():
        ok = qid in RIGHT[name]
        out.append({"id": qid, "question": f"what is {qid}?", "answer_unit": "kWh", "answer": value if ok else wrong,
                    "answer_value": value if ok else wrong, "ref_id": [ref if ok else "z"], "is_blank": False,
                    "explanation": name, "supporting_materials": "is_blank", "failure": ""})
    return out


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.csv"
    pd.DataFrame([{"id": q, "question": f"what is {q}?", "answer": v, "answer_value": v, "answer_unit": "kWh",
                   "ref_id": f"['{r}']", "explanation": "x"} for q, (v, r) in GOLD.items()]).to_csv(path, index=False)
    return pd.read_csv(path)  # pandas defaults, as the evaluate rule reads the solution


def members():
    return [member_from_records(n, records(n)) for n in ("M1", "M2", "M3")]


def test_curve_matches_hand_computed_votes(gold, tmp_path):
    curve = size_curve("ens", members(), VoteSettings.from_dict({"mode": "answer_priority", "ignore_blank": True}), gold, REP, 20)
    assert list(curve.columns) == COLUMNS and list(curve["k"]) == [1, 2, 3]
    assert list(curve["subsets"]) == [3, 3, 1]
    # k=1: every member 2 x 1.0 + 2 x 0.1 over 4 questions. k=2: the tie on the question the pair splits goes
    # to the earlier member, so every pair also scores 0.55. k=3: the majority is right on q1-q3.
    assert list(curve["score"]) == [0.55, 0.55, 0.775]
    assert list(curve["subset_min"]) == [0.55, 0.55, 0.775] and list(curve["subset_max"]) == [0.55, 0.55, 0.775]
    assert curve.loc[2, "diff_vs_k1"] == 0.225 and curve.loc[0, "diff_vs_k1"] == 0 and curve.loc[0, "p_vs_k1"] == 1
    assert (curve["lo"] <= curve["score"]).all() and (curve["score"] <= curve["hi"]).all()
    assert curve.loc[2, "diff_lo"] <= 0.225 <= curve.loc[2, "diff_hi"]
    (tmp_path / "wattbot").mkdir()
    curve.to_csv(tmp_path / "wattbot" / "ensemble_size.csv", index=False)
    text = render(tmp_path)
    assert "| ens | 3 | 1 | 0.775 [" in text and "+0.225 [" in text


def test_tiebreak_blank_changes_the_curve(gold):
    # a pair now blanks the question it splits (every answer differs) instead of keeping the first member's
    # right answer: 1.0 + 3 x 0.1 (a blank on an answerable question keeps only the na point, like a wrong one).
    curve = size_curve("ens", members(), VoteSettings.from_dict({"mode": "answer_priority", "tiebreak": "blank"}), gold, REP, 20)
    assert list(curve["score"]) == [0.55, 0.325, 0.775]


def test_sampled_subsets_are_seeded_distinct_and_in_member_order():
    assert subsets_of_size(5, 2, 20, 0) == [(i, j) for i in range(5) for j in range(i + 1, 5)]
    drawn = subsets_of_size(6, 3, 4, 7)
    assert len(drawn) == 4 == len(set(drawn)) and all(list(s) == sorted(s) for s in drawn)
    assert drawn == subsets_of_size(6, 3, 4, 7)
    with pytest.raises(ValueError):
        subsets_of_size(3, 4, 5, 0)


def test_sampled_curve_uses_at_most_max_subsets(gold):
    curve = size_curve("ens", members(), VoteSettings.from_dict({"mode": "union"}), gold, REP, 2)
    assert list(curve["subsets"]) == [2, 2, 1]


def test_render_without_a_table(tmp_path):
    assert "no " in render(tmp_path)


def test_curve_over_a_sampled_variants_samples(gold):
    """The curve's members are one LLM variant's samples (call.sample_answers), voted as the variant votes."""
    per_sample = [records(n) for n in ("M1", "M2", "M3")]
    keys = ("answer", "answer_value", "ref_id", "explanation", "supporting_materials", "is_blank")
    sampled = [{**per_sample[0][j], "call": {"sample_answers": [
        {"sample": i, "seed": 7 + i, **{k: per_sample[i][j][k] for k in keys}} for i in range(3)]}}
        for j in range(len(GOLD))]
    samples = sample_members("n3", sampled)
    assert [m.name for m in samples] == ["n3#0", "n3#1", "n3#2"]
    curve = size_curve("n3", samples, VoteSettings.from_dict({"mode": "answer_priority"}), gold, REP, 20)
    assert list(curve["score"]) == [0.55, 0.55, 0.775]  # the same answers as the three runs above
    with pytest.raises(ValueError, match="no per-sample answers"):
        sample_members("cf", per_sample[0])


def test_identical_samples_make_a_flat_curve_with_no_difference(gold):
    """Three samples giving one answer: every k scores the same, and no float noise reads as a difference."""
    same = [member_from_records(n, records("M1")) for n in ("a", "b", "c")]
    curve = size_curve("n3", same, VoteSettings.from_dict({"mode": "answer_priority"}), gold, REP, 20)
    assert list(curve["score"]) == [0.55] * 3 and (curve["diff_vs_k1"] == 0).all() and (curve["p_vs_k1"] == 1).all()
