"""`python -m pipeline vote` over hand-made Kaggle submissions: every mode, blanks, tiebreaks,
exact vs normalised values, member order, and the one-line errors."""
import pandas as pd
import pytest

from pipeline.answer.submission import COLUMNS
from pipeline.cli import main

# question -> (answer_value, ref ids) of members A, B, C; "is_blank" rows are abstentions.
ROWS = {
    #      A                      B                        C
    "q1": [("5", ["a"]),          ("5", ["b"]),            ("7", ["c"])],
    "q2": [("1", ["x"]),          ("2", ["y"]),            ("2", ["x"])],
    "q3": [("is_blank", []),      ("is_blank", []),        ("3", ["z"])],
    "q4": [("12", ["q"]),         ("13900", ["p"]),        ("13900.0", ["p"])],
}
URLS = {r: f"https://example.org/{r}" for r in "abcxyzpq"}


def write(path, member: int, rows=ROWS, drop: str | None = None):
    out = []
    for qid, answers in rows.items():
        value, refs = answers[member]
        blank = value == "is_blank"
        ref = "[" + ",".join(f"'{r}'" for r in refs) + "]" if refs else "is_blank"
        url = "[" + ",".join(f"'{URLS[r]}'" for r in refs) + "]" if refs else "is_blank"
        out.append({"id": qid, "question": f"question {qid}?", "answer": value if not blank else "is_blank",
                    "answer_value": value, "answer_unit": "kWh", "ref_id": ref, "ref_url": url,
                    "supporting_materials": "is_blank" if blank else f"quote by {'ABC'[member]}",
                    "explanation": "is_blank" if blank else f"member {'ABC'[member]}"})
    df = pd.DataFrame(out)
    if drop:
        df = df.drop(columns=[drop])
    df.to_csv(path, index=False)
    return str(path)


@pytest.fixture
def csvs(tmp_path):
    return [write(tmp_path / f"{m}.csv", i) for i, m in enumerate("ABC")]


def run_vote(tmp_path, files, *flags) -> pd.DataFrame:
    out = tmp_path / "voted.csv"
    assert main(["vote", *flags, "--out", str(out), *files]) == 0
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(df.columns) == list(COLUMNS) and list(df["id"]) == list(ROWS)
    return df.set_index("id")


def outcome(df, qid):
    return df.loc[qid, "answer_value"], df.loc[qid, "ref_id"]


@pytest.mark.parametrize("mode, q1, q2", [
    # q1: 5 wins 2-1; refs of the 5-voters a, b tie.  q2: 2 wins 2-1 (B, C); ref x is the majority (A, C).
    ("independent", ("5", "['a']"), ("2", "['x']")),        # refs voted over every row: a/b/c tie -> a; x wins
    ("answer_priority", ("5", "['a']"), ("2", "['y']")),    # refs of the winners only: a/b -> a; y/x -> y (B first)
    ("ref_priority", ("5", "['a']"), ("1", "['x']")),       # ref first: x (A, C), then their values 1/2 tie -> 1
    ("union", ("5", "['a','b']"), ("2", "['x','y']")),      # union of the winners' refs
    ("intersection", ("is_blank", "is_blank"), ("is_blank", "is_blank")),  # no common ref -> blank
])
def test_every_mode(tmp_path, csvs, mode, q1, q2):
    df = run_vote(tmp_path, csvs, "--mode", mode, "--ignore-blank")
    assert outcome(df, "q1") == q1 and outcome(df, "q2") == q2
    assert outcome(df, "q3") == ("3", "['z']")  # the blanks are dropped: C's answer stands alone


def test_union_keeps_urls_evidence_and_lists_members(tmp_path, csvs):
    df = run_vote(tmp_path, csvs, "--mode", "union", "--ignore-blank")
    assert df.loc["q1", "ref_url"] == "['https://example.org/a','https://example.org/b']"
    assert df.loc["q1", "supporting_materials"] == "quote by A"     # the first winning row's evidence
    assert df.loc["q1", "question"] == "question q1?" and df.loc["q1", "answer_unit"] == "kWh"
    expl = df.loc["q1", "explanation"]
    assert expl.startswith("member A") and "A.csv, " in expl and "voted by: " in expl and "C.csv" in expl


def test_blanks_win_without_ignore_blank(tmp_path, csvs):
    df = run_vote(tmp_path, csvs, "--mode", "answer_priority")
    assert outcome(df, "q3") == ("is_blank", "is_blank")
    assert (df.loc["q3", ["ref_url", "supporting_materials", "explanation"]] == "is_blank").all()


def test_exact_strings_by_default_normalised_on_request(tmp_path, csvs):
    exact = run_vote(tmp_path, csvs, "--mode", "answer_priority")
    assert outcome(exact, "q4") == ("12", "['q']")          # 12 / 13900 / 13900.0: three votes, first wins
    norm = run_vote(tmp_path, csvs, "--mode", "answer_priority", "--normalise")
    assert outcome(norm, "q4") == ("13900", "['p']")        # 13900 == 13900.0: two votes; B's string kept


def test_tiebreak_blank_when_every_member_differs(tmp_path, csvs):
    df = run_vote(tmp_path, csvs, "--mode", "answer_priority", "--tiebreak", "blank")
    assert outcome(df, "q4") == ("is_blank", "is_blank")    # all three differ exactly
    assert outcome(df, "q1") == ("5", "['a']")              # a majority exists: not a tie
    norm = run_vote(tmp_path, csvs, "--mode", "answer_priority", "--tiebreak", "blank", "--normalise")
    assert outcome(norm, "q4") == ("13900", "['p']")


def test_ties_go_to_the_first_member_given(tmp_path, csvs):
    a, b, c = csvs
    df = run_vote(tmp_path, [b, a, c], "--mode", "answer_priority")
    assert outcome(df, "q1") == ("5", "['b']")               # B now first among the 5-voters
    assert outcome(df, "q4") == ("13900", "['p']")           # every value differs: the first member's
    df = run_vote(tmp_path, [c, b, a], "--mode", "ref_priority")
    assert outcome(df, "q2") == ("2", "['x']")               # ref x (C, A) first; C's value first


def test_single_member_is_itself(tmp_path, csvs):
    df = run_vote(tmp_path, csvs[:1], "--mode", "union")
    assert outcome(df, "q2") == ("1", "['x']") and outcome(df, "q3") == ("is_blank", "is_blank")


def error_of(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_missing_column_is_one_line(tmp_path, csvs, capsys):
    bad = write(tmp_path / "bad.csv", 0, drop="ref_id")
    err = error_of(capsys, ["vote", "--out", str(tmp_path / "o.csv"), csvs[0], bad])
    assert "bad.csv: missing column(s) ref_id" in err


def test_mismatched_ids_are_named(tmp_path, csvs, capsys):
    other = {k: v for k, v in ROWS.items() if k != "q3"} | {"q9": ROWS["q1"]}
    bad = write(tmp_path / "other.csv", 1, rows=other)
    err = error_of(capsys, ["vote", "--out", str(tmp_path / "o.csv"), csvs[0], bad])
    assert "other.csv: question ids differ" in err and "lacks q3" in err and "extra q9" in err


@pytest.mark.parametrize("flag, bad, listed", [("--mode", "plurality", "union"), ("--tiebreak", "random", "blank")])
def test_unknown_mode_and_tiebreak(tmp_path, csvs, capsys, flag, bad, listed):
    """--mode and --tiebreak have choices: argparse names the bad value and the choices (exit status 2)."""
    with pytest.raises(SystemExit) as exc:
        main(["vote", flag, bad, "--out", str(tmp_path / "o.csv"), *csvs])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"invalid choice: '{bad}'" in err and listed in err
    assert not (tmp_path / "o.csv").exists()


def test_missing_file_is_one_line(tmp_path, capsys):
    err = error_of(capsys, ["vote", "--out", str(tmp_path / "o.csv"), str(tmp_path / "nothere.csv")])
    assert "nothere.csv: no such file" in err
    assert not (tmp_path / "o.csv").exists()
