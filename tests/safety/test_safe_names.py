"""Issue 46, cases 1, 2 and the names of case 9: a name that becomes a path (a kept run's id, a run id, a
metadata id in `fetch`, a split name) follows one rule (pipeline/names.py), checked where it is read with one
line naming the field and the file, and a path built from it stays inside its root. Each test plays the attack
as the issue tried it, through the project's own functions and verbs."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.kept_runs.store import ScoredSet, keep_run, wattbot_profile
from pipeline.run_ids import ENV, RunState, begin_run, read_state
from pipeline.score.wattbot import per_question

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "rvignettes" / "solutions.csv"


def kept(tmp_path: Path, run_id: str, wrong: set[str]) -> Path:
    """A run kept under tmp_path/runs/<run_id>/ with real per-question scores (one variant, x)."""
    gold = pd.read_csv(GOLD)
    sub = gold.copy()
    sub.loc[sub["id"].isin(wrong), "answer_value"] = "-1"
    scores = tmp_path / f"work-{run_id}" / "x.per_question.csv"
    scores.parent.mkdir(parents=True)
    per_question(gold, sub).to_csv(scores, index=False)
    reports = tmp_path / f"work-{run_id}" / "reports"
    reports.mkdir()
    s = ScoredSet("wattbot", "train", str(GOLD), wattbot_profile(), ("score",), "id", {"x": str(scores)})
    return keep_run(RunState(run_id), reports, [s], tmp_path / "runs")


def edit_record(folder: Path, **changes) -> None:
    path = folder / "run.json"
    record = json.loads(path.read_text())
    for key, value in changes.items():
        if key == "scores":
            record["scored"][0]["scores"] = value
        else:
            record[key] = value
    path.write_text(json.dumps(record))


def test_compare_of_a_kept_run_whose_id_climbs_out_writes_nothing_outside_runs(tmp_path, capsys):
    """Case 1: a colleague's run.json id with ../ segments made `compare` write its CSV outside runs/."""
    kept(tmp_path, "r1", {"q01"})
    b = kept(tmp_path, "r2", {"q02"})
    edit_record(b, id="../../escaped")
    rc = main(["compare", "r1", "r2", "--runs", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and err.count("\n") == 0
    assert f"{b / 'run.json'}: field id: '../../escaped'" in err
    assert [p.name for p in tmp_path.rglob("*.csv") if "compare-" in p.name] == []


def test_compare_refuses_scores_paths_outside_the_kept_run(tmp_path, capsys):
    """Case 1: a kept run's `scores` paths were read without containment (absolute paths accepted)."""
    kept(tmp_path, "r1", {"q01"})
    b = kept(tmp_path, "r2", {"q02"})
    secret = tmp_path / "elsewhere.csv"
    kept_scores = json.loads((b / "run.json").read_text())["scored"][0]["scores"]["x"]  # scores/wattbot/train/… (#44)
    secret.write_text((b / kept_scores).read_text())
    for given in (str(secret), "../../elsewhere.csv"):
        edit_record(b, scores={"x": given})
        rc = main(["compare", "r1", "r2", "--runs", str(tmp_path / "runs")])
        err = capsys.readouterr().err.strip()
        assert rc != 0 and "field scored.scores.x" in err and err.count("\n") == 0
    assert not list((tmp_path / "runs").glob("compare-*.csv"))


@pytest.mark.parametrize("bad", ["./../victim", "../victim"])
def test_a_run_id_that_climbs_out_deletes_no_folder(tmp_path, monkeypatch, bad):
    """Case 2: an id with ../ in logs/run.json renamed, deleted and replaced an unrelated folder, and
    runs/latest pointed there (``./../victim``: its temp folder ``runs/../../victim.tmp-…`` could be made)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    monkeypatch.chdir(tmp_path)
    Path("logs").mkdir()
    Path("logs/run.json").write_text(json.dumps({"id": bad, "status": "running"}))
    scores = tmp_path / "x.per_question.csv"
    scores.write_text("id,score\nq01,1\n")
    s = ScoredSet("wattbot", "train", str(GOLD), wattbot_profile(), ("score",), "id", {"x": str(scores)})
    with pytest.raises(ValueError, match=f"^logs/run.json: field id: '{bad}'"):
        keep_run(read_state() or RunState(bad), tmp_path, [s], tmp_path / "runs")
    assert (victim / "precious.txt").read_text() == "keep me"
    assert not (tmp_path / "runs" / "latest").exists()


def test_a_run_id_set_by_hand_is_a_name(tmp_path, monkeypatch):
    """Case 2: WATTBENCH_RUN_ID set by hand becomes runs/<id>/ too."""
    monkeypatch.setenv(ENV, "../victim")
    with pytest.raises(ValueError, match=f"environment variable {ENV}: '../victim'"):
        begin_run(tmp_path / "run.json")
    assert not (tmp_path / "run.json").exists()


def test_keep_run_refuses_a_state_id_that_leaves_runs(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    with pytest.raises(ValueError, match="the run's id: './../victim'"):
        keep_run(RunState("./../victim"), tmp_path / "reports", [], tmp_path / "runs")
    assert (victim / "precious.txt").exists()
