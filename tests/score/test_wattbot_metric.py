"""The WattBot metric, rule by rule (../shared/docs/wattbot-metric.md), for both profiles, plus sanity checks on
the real train_QA.csv. Every check goes through the public API on one-row frames."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline.score.wattbot import PROFILES, per_question, score_files, score_frames

from pipeline.datasets.paths import wattbot_dir

TRAIN = wattbot_dir() / "train_QA.csv"
BOTH = pytest.mark.parametrize("profile", PROFILES)
BLANK_SUB = {"answer_value": "is_blank", "ref_id": "is_blank", "ref_url": "is_blank",
             "supporting_materials": "is_blank"}


def frames(gold: dict, sub: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One question; fields not given are a plain answerable question answered perfectly."""
    base = {"id": "q1", "answer_value": "42", "answer_unit": "is_blank", "ref_id": "['a']"}
    g = base | gold
    s = base | {"id": g["id"], "answer_unit": g["answer_unit"], "ref_id": g["ref_id"], "ref_url": "['u']",
                "supporting_materials": "quote", "explanation": "because"} | sub
    return pd.DataFrame([g]), pd.DataFrame([s])


def one(gold: dict, sub: dict, profile: str) -> dict:
    sol, subm = frames(gold, sub)
    rows = per_question(sol, subm, profile).to_dict("records")
    assert len(rows) == 1
    return rows[0]


def value(gold: str, sub: str, profile: str, unit: str = "is_blank") -> int:
    return one({"answer_value": gold, "answer_unit": unit}, {"answer_value": sub}, profile)["value"]


# ---------------------------------------------------------------- blank detection


@BOTH
@pytest.mark.parametrize("sub", [
    "", "  ", "NA", "na", "n/a", "N/A", " IS_BLANK ", "is_blank",
    "Unable to answer with confidence based on the provided documents.",
    "unable to answer with confidence based on the provided documents; nothing found",
])
def test_blank_variants_abstain(profile, sub):
    r = one({"answer_value": "is_blank", "ref_id": "is_blank"}, BLANK_SUB | {"answer_value": sub}, profile)
    assert r["na"] == 1 and r["value"] == 1


@BOTH
@pytest.mark.parametrize("sub", ["nan", "NaN", "is blank", "unable to answer", "none", "0"])
def test_not_blank(profile, sub):
    r = one({"answer_value": "is_blank", "ref_id": "is_blank"}, BLANK_SUB | {"answer_value": sub}, profile)
    assert r["na"] == 0


@BOTH
def test_empty_csv_cell_reads_as_nan_which_is_not_blank(tmp_path, profile):
    # pandas reads "N/A" and an empty cell as NaN -> "nan": the official metric does not see a blank.
    sol, _ = frames({"answer_value": "is_blank", "ref_id": "is_blank"}, {})
    sol.to_csv(tmp_path / "sol.csv", index=False)
    (tmp_path / "sub.csv").write_text(
        "id,answer_value,answer_unit,ref_id,ref_url,supporting_materials,explanation\n"
        "q1,N/A,is_blank,is_blank,is_blank,is_blank,x\n")
    assert score_files(tmp_path / "sol.csv", tmp_path / "sub.csv", profile)["all"]["na"] == 0.0


# ---------------------------------------------------------------- value: numbers


@BOTH
@pytest.mark.parametrize("gold,sub,ok", [
    ("4.3", "4.3", 1), ("1", "1.0", 1), ("1000", "1e3", 1), ("1000", "1_000", 1),
    ("1000", "1001", 1), ("1000", "1001.5", 0),  # relative 1e-3 of the larger value
    ("0.02", "0.0209", 1), ("0.02", "0.0211", 0),  # absolute floor 1e-3
    ("13900", "13,900", 0), ("13900", "13900", 1),  # commas are not numbers
    ("4.3", "43", 0), ("4.3", "4.3 tCO2e", 0),
    ("1", "True", 0), ("0", "False", 0), ("1", "1", 1), ("0", "0.0", 1),  # True/False are 1/0
])
def test_numeric_tolerance(profile, gold, sub, ok):
    assert value(gold, sub, profile) == ok


# ---------------------------------------------------------------- value: lists, ranges, sets


@BOTH
@pytest.mark.parametrize("gold,sub,ok", [
    ("[80,90]", "[90,80]", 1), ("[80,90]", "[80.05, 90]", 1), ("[80,90]", "[80,91]", 0),
    ("[80,90]", "[80,90,100]", 0), ("[1,2,3]", "[3, 1, 2]", 1),
    ("['a','B']", "['b', 'A']", 1), ("['a','b']", '["a","c"]', 0),
    ("[a, b]", "['b','a']", 1),  # gold that is not JSON: split on commas
    ("['a','b']", "a", 0),  # a scalar against a categorical list
])
def test_bracket_lists(profile, gold, sub, ok):
    assert value(gold, sub, profile) == ok


@BOTH
@pytest.mark.parametrize("gold,sub,ok", [
    ("[80,90]", "85", 1), ("[80,90]", "80", 1), ("[80,90]", "90", 1),
    ("[80,90]", "90.0009", 1), ("[80,90]", "90.0011", 0),
    ("[80,90]", "79.9991", 1), ("[80,90]", "79.9989", 0),
    ("[0.02,0.1]", "0.05", 1), ("[80,90]", "80-90", 0), ("[80,90]", "eighty", 0),
    ("[1,2,3]", "2", 0),  # only a numeric 2-list is a range
])
def test_range(profile, gold, sub, ok):
    assert value(gold, sub, profile) == ok


@BOTH
@pytest.mark.parametrize("gold,sub,ok", [
    ("{a, b}", "{B,a}", 1), ("{a, b}", "{ a ,b }", 1), ("{a, b}", "{a}", 0),
    ("{a, b}", "{a, b, c}", 0), ("{a, b}", "b, a", 1),
])
def test_sets(profile, gold, sub, ok):
    assert value(gold, sub, profile) == ok


# ---------------------------------------------------------------- value: text


@BOTH
@pytest.mark.parametrize("gold,sub", [("ML.ENERGY Benchmark", "  ml.energy benchmark "), ("GPT-3", "gpt-3")])
def test_text_strip_lower_matches(profile, gold, sub):
    assert value(gold, sub, profile) == 1


@pytest.mark.parametrize("gold,sub,ok2025,ok2026", [
    ("ML.ENERGY Benchmark", "ml.energy  benchmark", 0, 1),  # internal spaces
    ("Jevons' paradox", "Jevons paradox", 0, 1),  # punctuation
    ("Water consumption", "The water consumption", 0, 1),  # leading article
    ("Water consumption", "water consumption.", 0, 1),
    ("GPT-3", "GPT-4", 0, 0), ("a water use", "water usage", 0, 0),
    ("GPT-3.5", "GPT-35", 0, 0), ("GPT-3.5", "gpt-3.5.", 0, 1),  # decimal points survive
    ("['x', 1.05]", "['x', 10.5]", 0, 0), ("{x, 1.05}", "{x, 10.5}", 0, 0),
])
def test_text_normalisation_by_profile(gold, sub, ok2025, ok2026):
    assert (value(gold, sub, "wattbot2025"), value(gold, sub, "wattbot2026")) == (ok2025, ok2026)


# ---------------------------------------------------------------- unanswerable questions


def test_answering_unanswerable_value_by_profile():
    gold = {"answer_value": "is_blank", "ref_id": "is_blank"}
    r25, r26 = (one(gold, {"answer_value": "42"}, p) for p in PROFILES)
    assert (r25["value"], r25["na"]) == (1, 0)  # 2025: answering costs no value points
    assert (r26["value"], r26["na"]) == (0, 0)  # 2026: abstaining is the only correct answer


@pytest.mark.parametrize("field", ["ref_id", "ref_url", "supporting_materials"])
def test_2026_na_needs_every_evidence_field_blank(field):
    gold = {"answer_value": "is_blank", "ref_id": "is_blank"}
    assert one(gold, BLANK_SUB, "wattbot2026")["na"] == 1
    partial = BLANK_SUB | {field: "['x']"}
    assert one(gold, partial, "wattbot2026")["na"] == 0
    assert one(gold, partial, "wattbot2025")["na"] == 1  # 2025 looks at answer_value only


@BOTH
def test_na_is_one_on_answerable_questions(profile):
    assert one({}, BLANK_SUB, profile)["na"] == 1
    assert one({}, {"answer_value": "7"}, profile)["na"] == 1


# ---------------------------------------------------------------- ref


@pytest.mark.parametrize("gold,sub,jac", [
    ("['a']", "['a']", 1.0), ("['a','b']", "['a']", 0.5), ("['a','b']", "['b','c']", 1 / 3),
    ("['a']", '["a"]', 1.0), ("['a']", "a", 1.0), ("luccioni2025b", "['luccioni2025b']", 1.0),
    ("[' A ']", "a", 1.0), ("['a']", "A", 1.0),
    ("['a','b']", "a,b", 0.0),  # a bare "a,b" is ONE id
    ("['a']", "[a]", 0.0),  # "[a]" is not JSON: the single id "[a]"
    ("is_blank", "is_blank", 1.0), ("is_blank", "['is_blank']", 1.0), ("is_blank", "[]", 0.0),
    ("[]", "[]", 1.0), ("['a']", "[]", 0.0), ("[]", "['a']", 0.0),
])
def test_ref_jaccard_2025(gold, sub, jac):
    assert one({"ref_id": gold}, {"ref_id": sub}, "wattbot2025")["ref"] == pytest.approx(jac)


@pytest.mark.parametrize("gold,sub,f1,prec,rec", [
    ("['a']", "['a']", 1, 1, 1), ("['a','b']", "['a']", 2 / 3, 1, 0.5),
    ("['a']", "['a','b']", 2 / 3, 0.5, 1), ("['a','b']", "['b','c']", 0.5, 0.5, 0.5),
    ("['a','b']", "a,b", 0, 0, 0), ("is_blank", "is_blank", 1, 1, 1), ("is_blank", "[]", 0, 0, 0),
    ("[]", "[]", 1, 1, 1),
])
def test_ref_f1_2026(gold, sub, f1, prec, rec):
    r = one({"ref_id": gold}, {"ref_id": sub}, "wattbot2026")
    assert (r["ref"], r["ref_precision"], r["ref_recall"]) == pytest.approx((f1, prec, rec))


def test_ref_precision_recall_only_in_2026():
    assert "ref_precision" not in one({}, {}, "wattbot2025")
    sol, sub = frames({"ref_id": "['a','b']"}, {"ref_id": "['a']"})
    res = score_frames(sol, sub, "wattbot2026")["all"]
    assert (res["ref_precision"], res["ref_recall"]) == (1.0, 0.5)


# ---------------------------------------------------------------- unit


@BOTH
def test_unit_has_weight_zero(profile):
    r = one({"answer_unit": "kWh"}, {"answer_unit": "MWh"}, profile)
    assert r["unit"] == 0 and r["score"] == 1.0
    assert score_frames(*frames({}, {}), profile)["weights"]["unit"] == 0.0


@pytest.mark.parametrize("gold,sub,same2025,same2026", [
    ("MWh", " mwh ", 1, 1), ("percent", "%", 0, 1), ("percent", "Percent", 1, 1),
    ("multiplier", "x", 0, 1), ("multiplier", "times", 0, 1), ("lbs", "lb", 0, 1),
    ("metric tons", "tonne", 0, 1), ("metric tons", "metric ton", 0, 1), ("days", "day", 0, 1),
    ("USD", "U.S.D.", 0, 1), ("is_blank", "", 0, 1),
    ("kWh", "MWh", 0, 0), ("Wh", "kWh", 0, 0), ("ms", "m", 0, 0), ("g CO2eq", "kg CO2eq", 0, 0),
])
def test_unit_canonicalisation(gold, sub, same2025, same2026):
    got = [one({"answer_unit": gold}, {"answer_unit": sub}, p)["unit"] for p in PROFILES]
    assert got == [same2025, same2026]


@pytest.mark.parametrize("gold,sub,unit,ok2026", [
    ("43", "43 percent", "percent", 1), ("43", "43%", "percent", 1), ("43", "43 %", "percent", 1),
    ("2", "2x", "multiplier", 1), ("2", "2 times", "multiplier", 1), ("1438", "1438 lbs", "lbs", 1),
    ("1438", "1438 lb", "lbs", 1), ("4.3", "4.3 tCO2e", "tCO2e", 1), ("2510000", "USD 2510000", "USD", 1),
    ("13", "13 days", "days", 1), ("[80,90]", "85 percent", "percent", 1),
    ("5", "5 ml", "liters", 0),  # never across scale
    ("24", "24 kWh", "MWh", 0), ("43", "43 percent", "is_blank", 0),
])
def test_2026_unit_words_stripped_from_value(gold, sub, unit, ok2026):
    assert value(gold, sub, "wattbot2026", unit) == ok2026
    assert value(gold, sub, "wattbot2025", unit) == 0


# ---------------------------------------------------------------- 2026 collections


@pytest.mark.parametrize("gold,sub,ok2025,ok2026", [
    ("(1, 2)", "(1, 2)", 1, 1), ("(1, 2)", "(2, 1)", 0, 1), ("(1, 2)", "[1, 2]", 0, 1),
    ("(1, 2)", "1", 0, 0), ("(1, 2)", "1.5", 0, 0), ("(1, 2)", "(1)", 0, 0),
    ("(a, b)", "(B, a)", 0, 1), ("(a, b)", "(a)", 0, 0),
    ("[1,2]", "(1, 2)", 0, 1), ("[1,2]", "1.5", 1, 1),
])
def test_tuple_is_all_required_list_vs_range(gold, sub, ok2025, ok2026):
    assert (value(gold, sub, "wattbot2025"), value(gold, sub, "wattbot2026")) == (ok2025, ok2026)


# ---------------------------------------------------------------- join, splits, breakdown, output


@BOTH
def test_missing_ids_score_zero_over_all_solution_ids(profile):
    """Kaggle semantics: a partial submission is not flattered by a smaller n; extras are ignored."""
    sol = pd.concat([frames({"id": i}, {})[0] for i in ("q1", "q2", "q3")])
    sub = pd.concat([frames({"id": i}, {"answer_value": "0" if i == "q9" else "42"})[1]
                     for i in ("q1", "q3", "q9")])
    res = score_frames(sol, sub, profile)
    assert res["all"]["n"] == 3 and res["n_missing"] == 1
    assert res["all"]["score"] == pytest.approx(2 / 3)
    assert all(res["all"][c] == pytest.approx(2 / 3) for c in ("value", "ref", "na"))
    assert (res["missing_ids"], res["extra_ids"]) == (["q2"], ["q9"])
    pq = per_question(sol, sub, profile).set_index("id")
    assert list(pq.index) == ["q1", "q2", "q3"]
    assert (pq.loc["q2"] == 0).all() and pq.loc["q1", "score"] == 1.0


@BOTH
def test_missing_unanswerable_id_is_not_an_abstention(profile):
    """An unanswerable question earns value and na for an abstention, never for a missing row."""
    sol = pd.concat([frames({"id": i, "answer_value": "is_blank", "ref_id": "is_blank"}, {})[0] for i in ("q1", "q2")])
    sub = frames({"id": "q1"}, {"answer_value": "is_blank", "ref_id": "is_blank", "ref_url": "is_blank",
                                "supporting_materials": "is_blank"})[1]
    res = score_frames(sol, sub, profile)
    assert res["all"]["n"] == 2 and res["all"]["score"] == pytest.approx(0.5)
    assert res["all"]["na"] == 0.5 and res["all"]["value"] == 0.5


def test_one_row_of_many_scores_as_a_small_fraction(wattbot_dir):
    """The issue's case: 1 submitted row of the whole split is ~1/n, not a perfect n=1 score."""
    gold = pd.read_csv(TRAIN)
    res = score_frames(gold, gold.iloc[:1], "wattbot2025")
    assert res["all"]["n"] == len(gold) and res["n_missing"] == len(gold) - 1
    assert res["all"]["score"] == pytest.approx(1 / len(gold))


@BOTH
def test_strict_rejects_differing_id_sets(profile):
    sol = pd.concat([frames({"id": i}, {})[0] for i in ("q1", "q2")])
    full = pd.concat([frames({"id": i}, {})[1] for i in ("q1", "q2")])
    assert score_frames(sol, full, profile, strict=True)["n_missing"] == 0
    with pytest.raises(ValueError, match=r"1 missing, e\.g\. q2; 0 extra"):
        score_frames(sol, full.iloc[:1], profile, strict=True)
    extra = pd.concat([full, frames({"id": "q7"}, {})[1]])
    with pytest.raises(ValueError, match=r"0 missing.*1 extra, e\.g\. q7"):
        score_frames(sol, extra, profile, strict=True)


@BOTH
def test_usage_split_and_by_type(profile):
    sol = pd.concat([frames({"id": f"q{i}"}, {})[0] for i in range(4)]).assign(
        Usage=["Public", "Public", "Private", "Private"],
        Quote=[1, 0, 1, 0], Table=[0, 1, 0, 0], Figure=[0, 0, 0, 0], Math=[0, 0, 0, 1], is_NA=0)
    sub = pd.concat([frames({"id": f"q{i}"}, {"answer_value": ["42", "7", "7", "42"][i]})[1]
                     for i in range(4)])
    res = score_frames(sol, sub, profile)
    assert res["all"]["n"] == 4 and res["all"]["value"] == 0.5
    assert (res["public"]["n"], res["public"]["value"]) == (2, 0.5)
    assert (res["private"]["n"], res["private"]["value"]) == (2, 0.5)
    bt = res["by_type"]
    assert set(bt) == {"Quote", "Table", "Figure", "Math", "is_NA"}
    assert (bt["Quote"]["n"], bt["Quote"]["value"]) == (2, 0.5)
    assert (bt["Table"]["n"], bt["Table"]["value"]) == (1, 0.0)
    assert (bt["Math"]["value"], bt["Figure"]["n"], bt["Figure"]["score"]) == (1.0, 0, None)
    assert res["public"]["by_type"]["Table"]["n"] == 1
    json.dumps(res)  # JSON-able: no numpy scalars, no NaN


@BOTH
def test_no_usage_no_split_keys(profile):
    res = score_frames(*frames({}, {}), profile)
    assert "public" not in res and "private" not in res and "by_type" not in res
    assert res["profile"] == profile


@BOTH
def test_per_question_columns(profile):
    cols = list(per_question(*frames({}, {}), profile).columns)
    extra = ["ref_precision", "ref_recall"] if profile == "wattbot2026" else []
    assert cols == ["id", "value", "ref", "na", "unit", *extra, "score"]


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("col", ["id", "answer_value", "answer_unit", "ref_id", "explanation"])
def test_missing_submission_column_names_file_and_column(tmp_path, col):
    sol, sub = frames({}, {})
    sol.to_csv(tmp_path / "sol.csv", index=False)
    sub.drop(columns=col).to_csv(tmp_path / "sub.csv", index=False)
    with pytest.raises(ValueError, match=rf"sub\.csv: missing column\(s\) {col}"):
        score_files(tmp_path / "sol.csv", tmp_path / "sub.csv")


def test_2026_needs_evidence_columns():
    sol, sub = frames({}, {})
    sub = sub.drop(columns=["ref_url", "supporting_materials"])
    assert score_frames(sol, sub, "wattbot2025")["all"]["score"] == 1.0
    with pytest.raises(ValueError, match="ref_url, supporting_materials"):
        score_frames(sol, sub, "wattbot2026")


@BOTH
def test_empty_explanation_names_row(profile):
    with pytest.raises(ValueError, match="empty explanation for id.*q1"):
        score_frames(*frames({}, {"explanation": "   "}), profile)


@pytest.mark.parametrize("which", ["solution", "submission"])
def test_duplicate_ids_rejected(which):
    sol, sub = frames({}, {})
    sol, sub = (pd.concat([sol, sol]), sub) if which == "solution" else (sol, pd.concat([sub, sub]))
    with pytest.raises(ValueError, match=f"{which}: duplicate id.*q1"):
        score_frames(sol, sub)


def test_unknown_profile():
    with pytest.raises(ValueError, match="unknown WattBot profile"):
        score_frames(*frames({}, {}), "wattbot2024")


# ---------------------------------------------------------------- sanity checks on real data


@pytest.fixture(scope="module")
def train(wattbot_dir) -> pd.DataFrame:
    return pd.read_csv(TRAIN)


@BOTH
def test_gold_against_itself_is_exactly_one(train, profile):
    res = score_files(TRAIN, TRAIN, profile)
    assert res["all"]["n"] == 41 and res["all"]["score"] == 1.0
    assert score_frames(train, train, profile)["all"]["score"] == 1.0


def blank_ids(train: pd.DataFrame) -> list[str]:
    ids = train.loc[train["answer_value"] == "is_blank", "id"].tolist()
    assert len(ids) == 2  # SOURCE.md: 41 questions, 2 unanswerable
    return ids


@pytest.mark.parametrize("profile,expected", [
    ("wattbot2025", 0.75 * (2 / 41) + 0.15 * (2 / 41) + 0.10 * 1),
    ("wattbot2026", 0.75 * (2 / 41) + 0.20 * (2 / 41) + 0.05 * 1),
])
def test_all_blank_submission(train, profile, expected):
    blank_ids(train)
    sub = train.assign(**BLANK_SUB, explanation="is_blank")
    assert score_frames(train, sub, profile)["all"]["score"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("profile,ref_id,expected", [
    # answered with a number and a cited doc: 2025 loses ref + na (0.25), 2026 everything (1.0)
    ("wattbot2025", "['patterson2021']", 1 - 2 * 0.25 / 41),
    ("wattbot2026", "['patterson2021']", 1 - 2 * 1.00 / 41),
    # answered with a number but ref kept is_blank: 2025 loses na (0.10), 2026 value + na (0.80)
    ("wattbot2025", "is_blank", 1 - 2 * 0.10 / 41),
    ("wattbot2026", "is_blank", 1 - 2 * 0.80 / 41),
])
def test_answering_unanswerable_train_questions(train, profile, ref_id, expected):
    na = train["id"].isin(blank_ids(train))
    sub = train.copy()
    sub.loc[na, ["answer_value", "ref_id", "explanation"]] = ["123", ref_id, "made up"]
    assert score_frames(train, sub, profile)["all"]["score"] == pytest.approx(expected, abs=1e-12)
