"""KohakuRAG's own vote (`vote --kohaku-compat`, `vote: {kohaku_compat: true}`) on hand-made member
files: every mode with and without ignore_blank, both tiebreaks, the all-blank questions whose refs
the script still combines (../shared/docs/kohakurag.md, "The all-blank case"). The expected rows are
worked out by hand from the script's rules written there, not by running the code under test.

The team's published PowerEdge runs and ensemble files are not in ../shared, so no test compares
against them (see docs/ensembles.md)."""
import json

import pandas as pd
import pytest

from pipeline.answer.kohaku_vote import aggregate, format_ref_ids, parse_ref_ids
from pipeline.answer.submission import COLUMNS
from pipeline.cli import main
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.answer.vote import VoteSettings
from pipeline.workflow import answering_params

# question -> (answer_value, raw ref_id cell) of members A, B, C, in the file order (not sorted).
ROWS = {
    #      A                                          B                                  C
    "q5": [("is_blank", "['wu2021b']"),                 ("is_blank", "is_blank"),          ("7", "['z']")],
    "q1": [("is_blank", "is_blank"),                    ("is_blank", '["is_blank"]'),      ("is_blank", "['luccioni2023']")],
    "q2": [("is_blank", '["is_blank", "luccioni2023"]'), ("is_blank", "['luccioni2023']"),
           ("is_blank", "['luccioni2023','wu2021b']")],
    "q3": [("5", "['a']"),                              ("is_blank", "is_blank"),          ("5", "['a','b']")],
    "q4": [("1", "['x']"),                              ("2", "['y']"),                    ("is_blank", "is_blank")],
}
# q1, q2: every member blank (q1 as KohakuRAG, the UI fork's JSON and a blank row that cites write it;
# q2: every blank row cites). q3: an answer against a blank. q4: every value differs. q5: blanks are the
# majority, and a blank row cites.

LUC = "['is_blank', 'luccioni2023']"
# (mode, ignore_blank) -> question -> (answer_value, ref_id cell) of KohakuRAG's row, tiebreak "first".
EXPECTED = {
    ("independent", True): {"q1": ("is_blank", '["is_blank"]'), "q2": ("is_blank", '["is_blank", "luccioni2023"]'),
                            "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("7", "['wu2021b']")},
    ("answer_priority", True): {"q1": ("is_blank", '["is_blank"]'),
                                "q2": ("is_blank", '["is_blank", "luccioni2023"]'),
                                "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("7", "['z']")},
    ("ref_priority", True): {"q1": ("is_blank", '["is_blank"]'), "q2": ("is_blank", '["is_blank", "luccioni2023"]'),
                             "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("is_blank", "['wu2021b']")},
    ("union", True): {"q1": ("is_blank", LUC), "q2": ("is_blank", "['is_blank', 'luccioni2023', 'wu2021b']"),
                      "q3": ("5", "['a', 'b']"), "q4": ("1", "['x']"), "q5": ("7", "['z']")},
    ("intersection", True): {"q1": ("is_blank", "is_blank"), "q2": ("is_blank", "['luccioni2023']"),
                             "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("7", "['z']")},
    ("independent", False): {"q1": ("is_blank", "is_blank"), "q2": ("is_blank", '["is_blank", "luccioni2023"]'),
                             "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("is_blank", "['wu2021b']")},
    ("answer_priority", False): {"q1": ("is_blank", "is_blank"),
                                 "q2": ("is_blank", '["is_blank", "luccioni2023"]'),
                                 "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("is_blank", "['wu2021b']")},
    ("ref_priority", False): {"q1": ("is_blank", "is_blank"), "q2": ("is_blank", '["is_blank", "luccioni2023"]'),
                              "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("is_blank", "['wu2021b']")},
    ("union", False): {"q1": ("is_blank", LUC), "q2": ("is_blank", "['is_blank', 'luccioni2023', 'wu2021b']"),
                       "q3": ("5", "['a', 'b']"), "q4": ("1", "['x']"), "q5": ("is_blank", "['wu2021b']")},
    ("intersection", False): {"q1": ("is_blank", "is_blank"), "q2": ("is_blank", "['luccioni2023']"),
                              "q3": ("5", "['a']"), "q4": ("1", "['x']"), "q5": ("is_blank", "is_blank")},
}
# The member whose row the output copies (the first whose value equals the winner), per winner value.
BASE = {("q5", "7"): "C", ("q5", "is_blank"): "A", ("q1", "is_blank"): "A", ("q2", "is_blank"): "A",
        ("q3", "5"): "A", ("q4", "1"): "A"}


def member_rows(member: int) -> list[dict]:
    name = "ABC"[member]
    return [{"id": qid, "question": f"question {qid}?", "answer": f"{value} by {name}", "answer_value": value,
             "answer_unit": "kWh", "ref_id": ref, "ref_url": f"url of {name}", "supporting_materials": f"quote {name}",
             "explanation": f"member {name}"} for qid, answers in ROWS.items() for value, ref in [answers[member]]]


@pytest.fixture
def csvs(tmp_path):
    paths = []
    for i, m in enumerate("ABC"):
        pd.DataFrame(member_rows(i)).to_csv(tmp_path / f"{m}.csv", index=False)
        paths.append(str(tmp_path / f"{m}.csv"))
    return paths


def vote(tmp_path, files, *flags) -> pd.DataFrame:
    out = tmp_path / "voted.csv"
    assert main(["vote", "--kohaku-compat", *flags, "--out", str(out), *files]) == 0
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(df.columns) == list(COLUMNS) and list(df["id"]) == sorted(ROWS)   # the script sorts the ids
    return df.set_index("id")


@pytest.mark.parametrize("mode, ignore_blank", sorted(EXPECTED))
def test_every_mode_with_and_without_ignore_blank(tmp_path, csvs, mode, ignore_blank):
    df = vote(tmp_path, csvs, "--mode", mode, *(["--ignore-blank"] if ignore_blank else []))
    for qid, (value, ref) in EXPECTED[mode, ignore_blank].items():
        assert (df.loc[qid, "answer_value"], df.loc[qid, "ref_id"]) == (value, ref), qid
        base = BASE[qid, value]   # every other column is the base row's, unchanged
        assert df.loc[qid, "explanation"] == f"member {base}" and df.loc[qid, "ref_url"] == f"url of {base}"
        assert df.loc[qid, "answer"] == f"{value} by {base}" and df.loc[qid, "supporting_materials"] == f"quote {base}"


@pytest.mark.parametrize("mode", ["independent", "ref_priority", "answer_priority", "union", "intersection"])
def test_tiebreak_blank_abstains_only_where_every_value_differs(tmp_path, csvs, mode):
    df = vote(tmp_path, csvs, "--mode", mode, "--ignore-blank", "--tiebreak", "blank")
    row = df.loc["q4"]   # 1 / 2 / is_blank: all differ (counted before the blank is dropped)
    assert (row[["answer", "answer_value", "ref_id", "ref_url", "supporting_materials", "explanation"]]
            == "is_blank").all()
    assert (row["question"], row["answer_unit"]) == ("question q4?", "kWh")
    for qid in ("q1", "q2", "q3", "q5"):   # a value repeats: the tiebreak does not fire, all-blank rows included
        assert (df.loc[qid, "answer_value"], df.loc[qid, "ref_id"]) == EXPECTED[mode, True][qid]


def test_wattbench_default_writes_is_blank_where_kohakurag_combines_refs(tmp_path, csvs):
    out = tmp_path / "default.csv"
    assert main(["vote", "--mode", "union", "--ignore-blank", "--out", str(out), *csvs]) == 0
    df = pd.read_csv(out, dtype=str, keep_default_na=False).set_index("id")
    assert (df.loc["q1", "ref_id"], df.loc["q2", "ref_id"]) == ("is_blank", "is_blank")
    assert df.loc["q3", "ref_id"] == "['a','b']" and list(df.index) == list(ROWS)   # its format, file order
    kohaku = vote(tmp_path, csvs, "--mode", "union", "--ignore-blank")
    assert parse_ref_ids(kohaku.loc["q1", "ref_id"]) == {"is_blank", "luccioni2023"}


def test_exact_strings_and_member_order(tmp_path):
    rows = [[{"id": "q", "answer_value": v, "ref_id": r}] for v, r in [("13900", "['p']"), ("13900.0", "['q']"),
                                                                      ("13900.0 ", "['r']")]]
    row, voters = aggregate([r[0] for r in rows], "answer_priority", True, "first")
    assert (row["answer_value"], row["ref_id"], voters) == ("13900.0", "['q']", [1, 2])   # stripped, not parsed
    row, voters = aggregate([r[0] for r in rows[:2]], "answer_priority", True, "first")
    assert (row["answer_value"], voters) == ("13900", [0])   # a tie: the first member's
    row, _ = aggregate([{"id": "q", "answer_value": " ", "ref_id": ""}], "union", True, "blank")
    assert (row["answer_value"], row["ref_id"]) == ("is_blank", "is_blank")   # empty cells are is_blank


def test_ref_parsing_and_format():
    assert parse_ref_ids("is_blank") == parse_ref_ids("") == set()
    assert parse_ref_ids('["is_blank"]') == {"is_blank"}      # a list holding is_blank gives the id
    assert parse_ref_ids("['a','b']") == parse_ref_ids("a, b") == parse_ref_ids("[a,b]") == {"a", "b"}
    assert format_ref_ids({"b", "a"}) == "['a', 'b']" and format_ref_ids(set()) == "is_blank"


def test_normalise_contradicts_kohaku_compat(tmp_path, csvs, capsys):
    assert main(["vote", "--kohaku-compat", "--normalise", "--out", str(tmp_path / "o.csv"), *csvs]) == 2
    assert "exact stripped strings" in capsys.readouterr().err


# --- the ensemble variant: vote: {kohaku_compat: true} ---


@pytest.fixture()
def raw():
    import yaml

    return yaml.safe_load((REPO / "tests" / "grid.yaml").read_text())


def test_kohaku_compat_is_hashed_only_when_set(raw):
    before = answering_params(validate(raw), "ens5")
    raw["answering"]["ens5"]["vote"]["kohaku_compat"] = False     # the default: same params
    assert answering_params(validate(raw), "ens5") == before
    raw["answering"]["ens5"]["vote"]["kohaku_compat"] = True
    assert answering_params(validate(raw), "ens5") != before
    vote = raw["answering"]["ens5"].pop("vote")
    before = answering_params(validate(raw), "ens5")        # no vote block at all
    raw["answering"]["ens5"]["vote"] = {"kohaku_compat": False}
    assert answering_params(validate(raw), "ens5") == before and vote


@pytest.mark.parametrize("variant, vote, key", [
    ("ens5", {"kohaku_compat": True, "normalise": True}, "answering.ens5.vote.normalise"),
    ("llm-cf", {"kohaku_compat": True}, "answering.llm-cf.vote.kohaku_compat"),
])
def test_kohaku_compat_errors_name_their_key(raw, variant, vote, key):
    raw["answering"][variant]["vote"] = vote
    with pytest.raises(ConfigError, match=f"'{key}'"):
        validate(raw)


def record(qid, value, refs):
    blank = value == "is_blank"
    return {"id": qid, "question": f"q {qid}?", "answer_unit": "kWh", "answer": value, "answer_value": value,
            "ref_id": refs, "is_blank": blank, "explanation": "is_blank" if blank else "e",
            "supporting_materials": "is_blank", "failure": ""}


def test_ensemble_verb_writes_kohakurag_rows(tmp_path):
    """Members' records become their submission rows (a blank record: is_blank refs, as wattbench writes
    them); so an all-blank question gives is_blank under both votes, and the compat CSV has the script's
    format."""
    members = {"x1": [record("a", "5", ["d1"]), record("b", "is_blank", [])],
               "x2": [record("a", "5", ["d2", "d1"]), record("b", "is_blank", [])],
               "x3": [record("a", "6", ["d2"]), record("b", "is_blank", [])]}
    args = []
    for name, recs in members.items():
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        args += ["--member", f"{name}={tmp_path / f'{name}.jsonl'}"]
    pd.DataFrame({"id": ["a", "b"], "question": ["q a?", "q b?"], "answer_unit": ["kWh", "kWh"]}).to_csv(
        tmp_path / "questions.csv", index=False)
    pd.DataFrame({"id": ["d1", "d2"], "url": ["https://d1", "https://d2"]}).to_csv(tmp_path / "meta.csv", index=False)
    params = {"answering": {"backend": "ensemble", "members": list(members),
                            "vote": {"mode": "union", "ignore_blank": True, "kohaku_compat": True}}, "name": "ens"}
    out = tmp_path / "ens.jsonl"
    assert main(["ensemble", *args, "--questions", str(tmp_path / "questions.csv"), "--metadata",
                 str(tmp_path / "meta.csv"), "--params", json.dumps(params), "--out", str(out),
                 "--out-csv", str(tmp_path / "ens.csv")]) == 0
    recs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert recs["a"]["answer_value"] == "5" and recs["a"]["ref_id"] == ["d1", "d2"] and recs["a"]["voters"] == ["x1", "x2"]
    assert recs["b"]["is_blank"] and recs["b"]["ref_id"] == []
    sub = pd.read_csv(tmp_path / "ens.csv", dtype=str, keep_default_na=False)
    assert list(sub["id"]) == ["a", "b"] and list(sub["ref_id"]) == ["['d1', 'd2']", "is_blank"]
    assert sub["ref_url"][0] == "['https://d1']" and sub["explanation"][0] == "e"   # x1's row, unchanged


def test_the_ensemble_size_curve_uses_kohakurag_vote(tmp_path):
    """Two members agree on the value with disjoint refs: wattbench's intersection blanks the answer,
    KohakuRAG's keeps it with ref is_blank (0.75 value + 0.10 na)."""
    from pipeline.answer.ensemble import member_from_records
    from pipeline.report.pages.ensemble_size import size_curve
    from pipeline.report.params import Resampling

    pd.DataFrame([{"id": q, "question": "q?", "answer": v, "answer_value": v, "answer_unit": "kWh",
                   "ref_id": f"['{r}']", "explanation": "x"} for q, v, r in (("q1", "10", "a"), ("q2", "20", "c"))]
                 ).to_csv(tmp_path / "gold.csv", index=False)
    gold = pd.read_csv(tmp_path / "gold.csv")
    members = [member_from_records(n, [record("q1", "10", [ref]), record("q2", "20", ["c"])])
               for n, ref in (("M1", "a"), ("M2", "b"))]
    rep = Resampling(seed=0, bootstrap=200, permutations=200)
    ours = size_curve("e", members, VoteSettings.from_dict({"mode": "intersection"}), gold, rep, 20)
    theirs = size_curve("e", members, VoteSettings.from_dict({"mode": "intersection", "kohaku_compat": True}), gold, rep, 20)
    # k=1: q1 scores 1.0 (M1) and 0.85 (M2, wrong ref), q2 1.0; k=2: q1 0.1 (ours) or 0.85 (theirs)
    assert list(ours["score"]) == [0.9625, 0.55] and list(theirs["score"]) == [0.9625, 0.925]


def test_render_ensembles_shows_the_leaderboard_ensembles(tmp_path):
    from pipeline.publish.results_doc import render_ensembles

    (tmp_path / "wattbot").mkdir()
    pd.DataFrame({"variant": ["ens5", "x", "ens5-kohaku"], "backend": ["ensemble", "extractive", "ensemble"],
                  "score": [0.668, 0.7, 0.661], "score_lo": [0.55, 0.6, 0.54], "score_hi": [0.78, 0.8, 0.77],
                  "value": [0.5, 0.6, 0.5], "ref": [0.9, 0.9, 0.85], "na": [1.0, 1.0, 1.0], "abstained": [1, 0, 1],
                  "n": [41, 41, 41]}).to_csv(tmp_path / "wattbot" / "leaderboard.csv", index=False)
    text = render_ensembles(tmp_path)
    assert "| ens5 | 0.668 [0.550, 0.780] |" in text and "| ens5-kohaku | 0.661 [0.540, 0.770] |" in text
    assert "| x |" not in text and text.startswith("41 questions")
