"""Labels per split (#33 item 1): `wattbot.solutions` names each split's labels file. A subset of the split's
questions is scored and the rest counted as unlabelled; a bad file is one line naming file, row and column;
the leaderboard gets a block per labelled split, and per Kaggle Usage value (Public/Private, n=0 reported)."""
import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline.datasets.paths import data_root
from pipeline.datasets.wattbot import InputError, load_labels
from pipeline.report.pages.leaderboard import ReportInputs, build_reports
from pipeline.report.sections import primary_block, read_primary_block
from pipeline.score.evaluate import evaluate_variant
from pipeline.workflow import check_labels, extra_labelled_splits, labelled_splits, labels_source
from pipeline.workflow.report_settings import report_params

pytestmark = pytest.mark.data  # WattBot's shipped labels and questions, from ../shared (#47 item 7)

WATTBOT = data_root() / "wattbot"
PUBLIC = WATTBOT / "test_solutions_public.csv"
QUESTIONS = WATTBOT / "test_Q.csv"


def real_rows(n: int) -> pd.DataFrame:
    """The first ``n`` rows of the shipped Public labels, as published (every column a string)."""
    return pd.read_csv(PUBLIC, dtype=str, keep_default_na=False, encoding="utf-8-sig").head(n)


@pytest.fixture
def labels(tmp_path) -> Path:
    """Eight real labelled test rows, the last three marked Private: both Usage values, as the full file has."""
    df = real_rows(8)
    df.loc[5:, "Usage"] = "Private"
    path = tmp_path / "test_labels.csv"
    df.to_csv(path, index=False)
    return path


def test_a_subset_of_the_split_is_labelled_and_loads(labels):
    df = load_labels(labels, QUESTIONS)
    assert len(df) == 8 and sorted(df["Usage"].unique()) == ["Private", "Public"]
    assert len(load_labels(PUBLIC, QUESTIONS)) == len(real_rows(10_000))  # the shipped file: every row a test id


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda df: df.assign(id=df["id"].where(df.index != 3, "q99999")), r"row 5, field id: no question 'q99999' in .*test_Q.csv"),
        (lambda df: pd.concat([df, df.iloc[[2]]], ignore_index=True), r"row 10, field id: duplicate id"),
        (lambda df: df.drop(columns=["ref_id"]), r"missing column\(s\) ref_id"),
    ],
    ids=["unknown id", "duplicate id", "missing column"],
)
def test_a_bad_labels_file_is_one_line_naming_file_row_and_column(tmp_path, change, message):
    path = tmp_path / "bad.csv"
    change(real_rows(8)).to_csv(path, index=False)
    with pytest.raises(InputError, match=message) as err:
        load_labels(path, QUESTIONS)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def wattbot_cfg(solutions: dict | None) -> dict:
    wb = {"dir": str(WATTBOT), "splits": {"train": "train_QA.csv", "test": "test_Q.csv"}, "score_split": "train"}
    return {"wattbot": wb | ({"solutions": solutions} if solutions is not None else {})}


def test_the_config_names_a_labels_file_per_split(labels):
    cfg = wattbot_cfg({"train": "train_QA.csv", "test": str(labels)})  # an absolute path stays as it is
    assert labelled_splits(cfg) == ["train", "test"] and extra_labelled_splits(cfg) == ["test"]
    assert labels_source(cfg, "test") == str(labels)
    check_labels(cfg)
    # without solutions: the score split's own file, as before, and no other split
    plain = wattbot_cfg(None)
    assert labelled_splits(plain) == ["train"] and labels_source(plain, "train") == str(WATTBOT / "train_QA.csv")
    with pytest.raises(InputError, match="wattbot.solutions.dev.*no split 'dev'"):
        check_labels(wattbot_cfg({"dev": "train_QA.csv"}))


def submission(ids: list[str], right: set[str]) -> pd.DataFrame:
    """Kaggle-format answers for ``ids``: the label's own answer for ``right``, a blank for the rest."""
    gold = real_rows(10_000).set_index("id")
    rows = []
    for qid in ids:
        g = gold.loc[qid] if qid in right else None
        rows.append({"id": qid, "question": "q", "answer": "x", "answer_value": g["answer_value"] if g is not None else "is_blank",
                     "answer_unit": g["answer_unit"] if g is not None else "is_blank",
                     "ref_id": g["ref_id"] if g is not None else "is_blank", "ref_url": "is_blank",
                     "supporting_materials": "is_blank", "explanation": "x"})
    return pd.DataFrame(rows)


def evaluate(tmp_path: Path, labels: Path, name: str, right: set[str], ids: list[str]) -> tuple[str, str]:
    sub = tmp_path / f"{name}.csv"
    submission(ids, right).to_csv(sub, index=False)
    answers, retrieval = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.retrieval.jsonl"
    answers.write_text("".join(json.dumps({"id": i, "is_blank": i not in right}) + "\n" for i in ids))
    retrieval.write_text("".join(json.dumps({"id": i, "hits": []}) + "\n" for i in ids))
    out, pq = tmp_path / f"{name}.json", tmp_path / f"{name}.per_question.csv"
    evaluate_variant(str(labels), str(sub), str(retrieval), str(answers), str(out), str(pq))
    return str(out), str(pq)


def test_scored_on_the_labelled_questions_with_the_rest_counted(tmp_path, labels):
    ids = real_rows(12)["id"].tolist()  # 12 answered, 8 labelled
    out, pq = evaluate(tmp_path, labels, "a", set(ids[:3]), ids)
    res = json.loads(Path(out).read_text())
    assert res["n_questions"] == 8 and res["unlabelled_questions"] == 4
    assert res["wattbot2025"]["public"]["n"] == 5 and res["wattbot2025"]["private"]["n"] == 3
    per_q = pd.read_csv(pq)
    assert len(per_q) == 8 and set(per_q["Usage"]) == {"Public", "Private"} and "Quote" in per_q


def params(variants: list[str]) -> dict:
    slices = {v: {"answering": {"backend": "extractive", "retrieval": "r"}, "upstream": {"indexes": ["i"]}} for v in variants}
    return report_params({"default_variant": variants[0], "score_split": "train", "variants": slices,
                          "report": {"seed": 0, "bootstrap": 200}, "config_hash": "h"})


@pytest.mark.parametrize("private", [3, 0], ids=["both Usage values", "Public rows only, as shipped"])
def test_the_leaderboard_has_a_block_per_labelled_split_and_usage(tmp_path, labels, private):
    if not private:  # the shipped file's shape: no Private row
        pd.read_csv(labels, dtype=str).assign(Usage="Public").head(5).to_csv(labels, index=False)
    train_labels = WATTBOT / "train_QA.csv"
    train_ids = pd.read_csv(train_labels)["id"].tolist()
    test_ids = real_rows(12)["id"].tolist()
    inputs = ReportInputs({}, {}, {}, split_scores={}, split_per_question={})
    for v, k in (("good", 4), ("weak", 1)):
        inputs.scores[v], inputs.per_question[v] = evaluate(tmp_path, train_labels, f"train-{v}", set(), train_ids)
        score, pq = evaluate(tmp_path, labels, f"test-{v}", set(test_ids[:k]) | set(test_ids[5:5 + k]), test_ids)
        inputs.split_scores[f"test:{v}"], inputs.split_per_question[f"test:{v}"] = score, pq
    build_reports(params(["good", "weak"]), inputs, str(tmp_path / "reports"))
    board = pd.read_csv(tmp_path / "reports" / "wattbot" / "leaderboard.csv")
    assert list(board.columns[:2]) == ["split", "variant"] and "unlabelled" in board
    assert list(dict.fromkeys(board["split"])) == ["train", "test", "test/Public", "test/Private"]
    n = board.groupby("split", sort=False)["n"].max().to_dict()
    assert n == {"train": 41, "test": 5 + private, "test/Public": 5, "test/Private": private}
    test = board[board["split"] == "test"].set_index("variant")
    assert list(test.index) == ["good", "weak"] and (test["unlabelled"] == 12 - 5 - private).all()
    assert (test["score_lo"] <= test["score"]).all() and (test["score"] <= test["score_hi"]).all()
    priv = board[board["split"] == "test/Private"]
    assert len(priv) == 2  # reported, not hidden
    assert priv["score"].isna().all() == (private == 0) and priv["score_lo"].isna().all() == (private == 0)
    assert list(primary_block(board)["split"].unique()) == ["train"]
    index = (tmp_path / "reports" / "index.md").read_text()
    assert f"block `test/Private`: n={private}" in index and "unlabelled" in index
    # the score split's block read alone, typed as before (the summary, docs and tracking read it so)
    alone = read_primary_block(tmp_path / "reports" / "wattbot" / "leaderboard.csv", keep_default_na=False)
    assert len(alone) == 2 and alone["failures"].dtype.kind == "i" and alone["score"].dtype.kind == "f"
    # per question type of the labelled test rows: n per type, the score with its interval, its components
    types = pd.read_csv(tmp_path / "reports" / "wattbot" / "leaderboard_by_type.csv")
    labelled = pd.read_csv(labels).head(5 + private)
    assert set(types["type"]) == {"Quote", "Table", "Figure", "Math", "is_NA"}
    assert list(dict.fromkeys(types["split"])) == ["test", "test/Public", "test/Private"]  # the leaderboard's blocks
    for block, rows in (("test", labelled), ("test/Public", labelled.head(5)), ("test/Private", labelled.iloc[5:])):
        good = types[(types["variant"] == "good") & (types["split"] == block)].set_index("type")
        for flag in good.index:
            assert good.loc[flag, "n"] == int((rows[flag].astype(int) == 1).sum())
        shown = good[good["n"] > 0]
        assert ((shown["score_lo"] <= shown["score"]) & (shown["score"] <= shown["score_hi"])).all()
        assert good[good["n"] == 0]["score"].isna().all()  # a type with no question there: n=0, no score
    assert {"value", "ref", "na"} <= set(types.columns)
    assert "## Per question type" in index and "good on test (overall" in index


def test_without_other_labelled_splits_the_leaderboard_is_as_before(tmp_path):
    train_labels = WATTBOT / "train_QA.csv"
    ids = pd.read_csv(train_labels)["id"].tolist()
    score, pq = evaluate(tmp_path, train_labels, "only", set(), ids)
    build_reports(params(["only"]), ReportInputs({"only": score}, {"only": pq}, {}), str(tmp_path / "reports"))
    board = pd.read_csv(tmp_path / "reports" / "wattbot" / "leaderboard.csv")
    assert "split" not in board and "unlabelled" not in board and len(board) == 1
    assert primary_block(board).equals(board)
