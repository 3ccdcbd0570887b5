"""Kept runs (pipeline/kept_runs/store.py) and `compare` (compare.py), on runs scored for real:
a small labelled question set (the rvignettes corpus's 15 solutions), submissions that answer some questions
wrong, per-question scores and leaderboard scores from the WattBot metric itself."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.paths import CLAIMS_FILE
from pipeline.kept_runs import store
from pipeline.kept_runs.store import (
    Prune,
    ScoredSet,
    keep_run,
    kept_runs as listed,
    latest_id,
    prune_runs,
    resolve_kept,
    wattbot_profile,
)
from pipeline.run_ids import RunState
from pipeline.score.wattbot import per_question, score_frames

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "rvignettes" / "solutions.csv"
N = len(pd.read_csv(GOLD))  # 14 labelled questions


def submission(gold: pd.DataFrame, wrong: set[str]) -> pd.DataFrame:
    """The gold answers, with a wrong value on the questions in ``wrong``."""
    sub = gold.copy()
    sub.loc[sub["id"].isin(wrong), "answer_value"] = "-1"
    return sub


def scored_run(root: Path, wrong: dict[str, set[str]], gold_path: Path = GOLD, ids: list[str] | None = None) -> ScoredSet:
    """A run's folder as its rules leave it: per variant the per-question scores (results/) and its row in the
    leaderboard (reports/), both from the real metric; ``ids``: score only these questions."""
    gold = pd.read_csv(gold_path)
    if ids is not None:
        gold = gold[gold["id"].isin(ids)].reset_index(drop=True)
    board, files = [], {}
    for v, bad in wrong.items():
        sub = submission(gold, bad)
        path = root / "results" / "wattbot" / "scores" / f"{v}.per_question.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        per_question(gold, sub).to_csv(path, index=False)
        files[v] = str(path)
        board.append({"variant": v, "score": score_frames(gold, sub)["all"]["score"], "n": len(gold)})
    (root / "reports" / "wattbot").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(board).to_csv(root / "reports" / "wattbot" / "leaderboard.csv", index=False)
    (root / "reports" / "index.html").write_text("<html>the run's page</html>")
    return ScoredSet("wattbot", "train", str(gold_path), wattbot_profile(), ("score",), "id", files)


def keep(tmp_path: Path, run_id: str, wrong: dict[str, set[str]], **kw) -> Path:
    work = tmp_path / f"work-{run_id}"
    s = scored_run(work, wrong, **kw)
    return keep_run(RunState(run_id, config_files=["config.yaml"]), work / "reports", [s], tmp_path / "runs")


def test_a_kept_run_holds_its_reports_scores_and_what_compare_checks(tmp_path):
    folder = keep(tmp_path, "r1", {"x": {"q01", "q02"}, "y": set()})
    assert folder == tmp_path / "runs" / "r1" and latest_id(tmp_path / "runs") == "r1"
    work = tmp_path / "work-r1"
    for rel in ("reports/wattbot/leaderboard.csv", "reports/index.html"):
        assert (folder / rel).read_bytes() == (work / rel).read_bytes()
    assert (folder / "scores/wattbot/train/x.per_question.csv").read_bytes() == (
        work / "results/wattbot/scores/x.per_question.csv"
    ).read_bytes()
    record = json.loads((folder / "run.json").read_text())
    assert record["id"] == "r1" and record["config_files"] == ["config.yaml"] and record["ended"].endswith("Z")
    assert record["claims_sha256"] == hashlib.sha256(CLAIMS_FILE.read_bytes()).hexdigest()  # the claims it judged
    [scored] = record["scored"]
    ids = sorted(pd.read_csv(GOLD)["id"])
    assert scored["gold_sha256"] == hashlib.sha256(GOLD.read_bytes()).hexdigest()
    assert scored["questions"] == N and scored["questions_sha256"] == hashlib.sha256("\n".join(ids).encode()).hexdigest()
    assert scored["metric_profile"]["name"] == "wattbot2025" and scored["metric_profile"]["weights"]["value"] == 0.75
    assert scored["scores"] == {"x": "scores/wattbot/train/x.per_question.csv", "y": "scores/wattbot/train/y.per_question.csv"}


def with_test_split(tmp_path: Path, run_id: str, train_wrong: dict, test_wrong: dict) -> Path:
    """A run that scored two splits whose per-question files share their names (train's and test's x.csv)."""
    work = tmp_path / f"work-{run_id}"
    train = scored_run(work, train_wrong)
    test_root = tmp_path / f"work-{run_id}-test"
    test = scored_run(test_root, test_wrong, ids=[f"q{i:02d}" for i in range(1, 9)])
    test = ScoredSet("wattbot", "test", test.gold, test.profile, test.metrics, test.id_column, test.scores)
    return keep_run(RunState(run_id, config_files=["config.yaml"]), work / "reports", [train, test], tmp_path / "runs")


def test_every_scored_split_is_kept_and_compared(tmp_path):
    """Train and test files share their names: each split is kept in a folder of its own, and compare pairs
    each (issue #44 item 12)."""
    folder = with_test_split(tmp_path, "rA", {"x": {"q01"}}, {"x": {"q02", "q03"}})
    assert (folder / "scores/wattbot/train/x.per_question.csv").is_file()
    assert len(pd.read_csv(folder / "scores/wattbot/test/x.per_question.csv")) == 8
    with_test_split(tmp_path, "rB", {"x": set()}, {"x": set()})
    out = tmp_path / "cmp.csv"
    assert main(["compare", "rA", "rB", "--runs", str(tmp_path / "runs"), "--out", str(out)]) == 0
    table = pd.read_csv(out).set_index("split")
    assert table.loc["train", "diff"] == pytest.approx(0.75 / N) and table.loc["test", "diff"] == pytest.approx(1.5 / 8)
    assert table.loc["test", "n"] == 8


def test_a_run_kept_before_split_folders_still_compares_on_train(tmp_path):
    """A run kept before this change (scores/wattbot/<file>, train only) against a new one (train and test):
    they pair on train, by the paths the old run.json recorded."""
    old = keep(tmp_path, "rOld", {"x": {"q01"}})
    record = json.loads((old / "run.json").read_text())
    for entry in record["scored"]:
        for v, rel in entry["scores"].items():
            flat = rel.replace("/train/", "/")
            (old / rel).rename(old / flat)
            entry["scores"][v] = flat
    record.pop("claims_sha256")
    (old / "run.json").write_text(json.dumps(record))
    with_test_split(tmp_path, "rNew", {"x": set()}, {"x": set()})
    out = tmp_path / "cmp.csv"
    assert main(["compare", "rOld", "rNew", "--runs", str(tmp_path / "runs"), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    paired = table[table["only_in"].isna()]
    assert list(paired["split"]) == ["train"] and paired["diff"].tolist() == pytest.approx([0.75 / N])


def test_keeping_again_replaces_the_copy_and_latest_follows_the_newest(tmp_path):
    keep(tmp_path, "r1", {"x": set()})
    stale = tmp_path / "runs" / "r1" / "reports" / "stale.txt"
    stale.write_text("from an earlier keep")
    keep(tmp_path, "r2", {"x": set()})
    assert os.readlink(tmp_path / "runs" / "latest") == "r2"
    keep(tmp_path, "r1", {"x": {"q03"}})  # the run resumed and kept again
    assert not stale.exists() and latest_id(tmp_path / "runs") == "r1"
    assert resolve_kept("latest", tmp_path / "runs") == tmp_path / "runs" / "r1"
    assert [p.name for p in (tmp_path / "runs").iterdir() if p.name.startswith(".")] == []  # no temp folder left


def test_latest_is_a_text_file_where_symlinks_fail(tmp_path, monkeypatch):
    def no_symlinks(*a, **k):
        raise OSError("symlinks not supported")

    monkeypatch.setattr(store.os, "symlink", no_symlinks)
    keep(tmp_path, "r1", {"x": set()})
    keep(tmp_path, "r2", {"x": set()})
    link = tmp_path / "runs" / "latest"
    assert not link.is_symlink() and link.read_text() == "r2\n"
    assert resolve_kept("latest", tmp_path / "runs") == tmp_path / "runs" / "r2"


def test_compare_gives_each_paired_difference_as_the_difference_of_the_leaderboards(tmp_path, capsys):
    """B answers q01 and q02 right where A did not (variant x), A and B agree on y, z is A's alone, w is B's:
    B − A per variant equals B's leaderboard score less A's on the (shared) questions, with an interval and p."""
    keep(tmp_path, "rA", {"x": {"q01", "q02", "q05"}, "y": {"q07"}, "z": set()})
    keep(tmp_path, "rB", {"x": {"q05"}, "y": {"q07"}, "w": set()})
    out = tmp_path / "cmp.csv"
    assert main(["compare", "rA", "rB", "--runs", str(tmp_path / "runs"), "--out", str(out), "--bootstrap", "500"]) == 0
    table = pd.read_csv(out)
    boards = {r: pd.read_csv(tmp_path / f"work-{r}/reports/wattbot/leaderboard.csv").set_index("variant") for r in ("rA", "rB")}
    paired = table[table["only_in"].isna()].set_index("variant")
    assert sorted(paired.index) == ["x", "y"]
    for v in ("x", "y"):
        assert paired.loc[v, "diff"] == pytest.approx(boards["rB"].loc[v, "score"] - boards["rA"].loc[v, "score"], abs=1e-12)
        assert paired.loc[v, "n"] == N and paired.loc[v, "control"] == "rA" and paired.loc[v, "treatment"] == "rB"
    x = paired.loc["x"]
    assert x["diff"] == pytest.approx(2 * 0.75 / N) and x["diff_lo"] <= x["diff"] <= x["diff_hi"] and 0 < x["p_value"] <= 1
    assert paired.loc["y", "diff"] == 0 and paired.loc["y", "p_value"] == 1
    assert dict(zip(table["variant"], table["only_in"]))["z"] == "control rA"
    assert dict(zip(table["variant"], table["only_in"]))["w"] == "treatment rB"
    printed = capsys.readouterr().out
    assert "rA (control, A) -> rB (treatment, B)" in printed and f"{2 * 0.75 / N:+.3f}" in printed
    assert "only in control rA: wattbot/train z" in printed and "only in treatment rB: wattbot/train w" in printed
    assert printed.rstrip().endswith(f"wrote {out}")


def test_compare_writes_beside_the_runs_by_default_and_takes_folders(tmp_path):
    a, b = keep(tmp_path, "rA", {"x": {"q01"}}), keep(tmp_path, "rB", {"x": set()})
    assert main(["compare", str(a), str(b), "--runs", str(tmp_path / "runs"), "--bootstrap", "200"]) == 0
    assert pd.read_csv(tmp_path / "runs" / "compare-rA-rB.csv")["diff"].tolist() == pytest.approx([0.75 / N])
    assert [r["id"] for r in listed(tmp_path / "runs")] == ["rA", "rB"]  # the CSV is no kept run


@pytest.mark.parametrize("change", ["gold", "questions", "profile"])
def test_compare_refuses_with_one_line_when_runs_are_not_scored_alike(tmp_path, capsys, change):
    keep(tmp_path, "rA", {"x": set()})
    if change == "gold":
        gold = tmp_path / "solutions-v2.csv"
        pd.read_csv(GOLD).assign(answer_value=lambda d: d["answer_value"].where(d["id"] != "q01", "11")).to_csv(gold, index=False)
        keep(tmp_path, "rB", {"x": set()}, gold_path=gold)
    elif change == "questions":
        keep(tmp_path, "rB", {"x": set()}, ids=[f"q{i:02d}" for i in range(1, 6)])
    else:
        keep(tmp_path, "rB", {"x": set()})
        run_json = tmp_path / "runs" / "rB" / "run.json"
        record = json.loads(run_json.read_text())
        record["scored"][0]["metric_profile"]["weights"]["ref"] = 0.2
        run_json.write_text(json.dumps(record))
    assert main(["compare", "rA", "rB", "--runs", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    why = {"gold": "the gold file differs", "questions": f"the scored question set differs ({N} vs 5", "profile": "metric profile differs (weights)"}
    assert len(err.splitlines()) == 1 and "not comparable on wattbot/train" in err and why[change] in err, err
    assert not (tmp_path / "runs" / "compare-rA-rB.csv").exists()


def test_a_run_not_kept_is_one_line(tmp_path, capsys):
    keep(tmp_path, "rA", {"x": set()})
    assert main(["compare", "rA", "nope", "--runs", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: nope: no kept run") and "newest kept here: rA" in err


def test_prune_keeps_the_n_newest_and_never_latest(tmp_path, monkeypatch, capsys):
    now = time.time()
    for i, rid in enumerate(["r1", "r2", "r3", "r4"]):  # kept a day apart, r4 last
        monkeypatch.setattr(time, "time", lambda i=i: now - (3 - i) * 86400)
        keep(tmp_path, rid, {"x": set()})
    monkeypatch.setattr(time, "time", lambda: now)
    runs = tmp_path / "runs"
    assert main(["runs", "prune", "--keep", "2", "--dry-run", "--runs", str(runs)]) == 0
    assert "would remove 2 kept run(s): r1, r2" in capsys.readouterr().out and (runs / "r1").exists()
    assert prune_runs(Prune(keep=3), runs) == ["r1"]
    assert prune_runs(Prune(older_than_days=1.5), runs) == ["r2"]  # r3 was kept a day ago
    keep(tmp_path, "r2", {"x": set()})  # kept again now: the newest
    assert prune_runs(Prune(keep=0), runs) == ["r3", "r4"]  # all but latest
    assert [r["id"] for r in listed(runs)] == ["r2"] and latest_id(runs) == "r2"
    assert main(["runs", "list", "--runs", str(runs)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("r2  ") and "wattbot/train 1 variants" in line and line.endswith("(latest)")
    assert main(["runs", "prune", "--runs", str(runs)]) == 2  # no rule given


def test_onsuccess_keeps_the_run_this_process_began_and_runs_is_git_ignored(tmp_path, monkeypatch, capsys):
    """The Snakefile's onsuccess (wf.after_run) keeps the run of logs/run.json when it is this process's
    (WATTBENCH_RUN_ID, exported by onstart); a --touch run begins none and keeps nothing again."""
    import subprocess

    from pipeline import workflow as wf
    from pipeline.report.summary import LATER
    from pipeline.run_ids import ENV, begin_run
    from pipeline.workflow.kept import keep_this_run

    monkeypatch.chdir(tmp_path)
    (tmp_path / "wb").mkdir()
    (tmp_path / "wb" / "train_QA.csv").write_bytes(GOLD.read_bytes())
    scored_run(tmp_path, {"x": {"q01"}}, gold_path=tmp_path / "wb" / "train_QA.csv")
    cfg = {"wattbot": {"dir": "wb", "splits": {"train": "train_QA.csv"}, "score_split": "train"},
           "answering": {"x": {}, "not-made": {}}, "retrieval": {}}
    monkeypatch.delenv(ENV, raising=False)
    state = begin_run(config_files=["my.yaml"])  # exports the id, as onstart does
    monkeypatch.setenv(ENV, state.id)
    wf.after_run(cfg)
    assert f"Kept: runs/{state.id}/" in capsys.readouterr().out
    [scored] = json.loads((tmp_path / "runs" / state.id / "run.json").read_text())["scored"]
    assert scored["gold"] == "wb/train_QA.csv" and list(scored["scores"]) == ["x"]  # only what the run made
    assert (tmp_path / "runs" / state.id / "reports" / "summary.json").exists()

    shutil.rmtree(tmp_path / "runs")
    monkeypatch.setenv(LATER, "1")  # make run / make resume: their `summary --keep` keeps it, once (#35)
    wf.after_run(cfg)
    assert not (tmp_path / "runs").exists() and "Kept" not in capsys.readouterr().out
    assert keep_this_run(cfg, "reports") == Path("runs") / state.id  # what `summary --keep` then does
    assert (tmp_path / "runs" / state.id / "run.json").exists()

    shutil.rmtree(tmp_path / "runs")
    monkeypatch.delenv(LATER)
    monkeypatch.delenv(ENV)  # --touch: no run begun in this process
    wf.after_run(cfg)
    assert not (tmp_path / "runs").exists()

    repo = Path(__file__).resolve().parents[2]
    ignored = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", f"runs/{state.id}/run.json"])
    assert ignored.returncode == 0, "runs/ must be git-ignored: git status stays clean after runs"


def test_a_dataset_only_one_run_scored_is_listed_as_its_own(tmp_path, capsys):
    keep(tmp_path, "rA", {"x": set()})
    work = tmp_path / "work-rB"
    s = scored_run(work, {"x": {"q02"}})
    corpus = ScoredSet("mycorpus", "questions", str(GOLD), wattbot_profile(), ("score",), "id", {"v": s.scores["x"]})
    keep_run(RunState("rB"), work / "reports", [s, corpus], tmp_path / "runs")
    assert main(["compare", "rA", "rB", "--runs", str(tmp_path / "runs"), "--bootstrap", "200"]) == 0
    table = pd.read_csv(tmp_path / "runs" / "compare-rA-rB.csv")
    assert table[["dataset", "variant", "only_in"]].fillna("").values.tolist() == [
        ["wattbot", "x", ""], ["mycorpus", "v", "treatment rB"]]
    assert "only in treatment rB: mycorpus/questions v" in capsys.readouterr().out


def test_compare_resamples_as_a_run_does_from_one_definition():
    """`compare`'s --seed/--bootstrap/--permutations default to DEFAULT_RESAMPLING (#35: the verb repeated its
    numbers), itself the declared report defaults, so a kept-run comparison resamples as a run's report."""
    from pipeline.cli import build_parser
    from pipeline.config_schema import declared_defaults
    from pipeline.kept_runs.compare import DEFAULT_RESAMPLING
    from pipeline.report_specs import ReportSpec
    from pipeline.report.params import Resampling

    a = build_parser().parse_args(["compare", "r1", "r2"])
    assert Resampling(a.seed, a.bootstrap, a.permutations) == DEFAULT_RESAMPLING
    report = declared_defaults(ReportSpec)
    assert DEFAULT_RESAMPLING == Resampling(report["seed"], report["bootstrap"], report["permutations"])


def test_run_json_records_the_encoders_the_cpu_and_a_dirty_tree(tmp_path, monkeypatch):
    """What `make readme` stamps and refuses on (pipeline/publish/readme_runs.py)."""
    monkeypatch.setattr(store, "git_dirty", lambda: True)
    monkeypatch.setattr(store, "cpu_model", lambda: "Test CPU 9000")
    work = tmp_path / "work"
    s = scored_run(work, {"x": set()})
    enc = {"wattbot/hier": "all-MiniLM-L6-v2/onnx-fp32-00112233aabbccdd"}
    folder = keep_run(RunState("r1"), work / "reports", [s], tmp_path / "runs", enc)
    record = json.loads((folder / "run.json").read_text())
    assert record["encoders"] == enc and record["cpu"] == "Test CPU 9000" and record["dirty"] is True


def test_the_encoders_are_read_off_the_index_manifests_of_the_scored_datasets(tmp_path, monkeypatch):
    from pipeline.embed.kernels import cpu_model
    from pipeline.workflow.kept import index_encoders

    monkeypatch.chdir(tmp_path)
    index = tmp_path / "results" / "wattbot" / "index"
    index.mkdir(parents=True)
    (index / "hier.sqlite.manifest.json").write_text(json.dumps({"model_id": "all-MiniLM-L6-v2/onnx-qint8-b1-0011"}))
    (index / "bm25.sqlite.manifest.json").write_text(json.dumps({"config_hash": "x"}))  # a lexical index: no encoder
    cfg = {"indexes": {"hier": {"kind": "tree"}, "bm25": {"kind": "bm25"}, "flat": {"kind": "chunks"}}}
    s = ScoredSet("wattbot", "train", "gold.csv", {}, ("score",), "id", {})
    assert index_encoders(cfg, [s, s]) == {"wattbot/hier": "all-MiniLM-L6-v2/onnx-qint8-b1-0011"}  # flat: not built
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: AMD  EPYC 7B13\nflags\t: avx2\n")
    assert cpu_model(tmp_path / "cpuinfo") == "AMD EPYC 7B13"


def test_what_an_encoder_key_computes_in():
    from pipeline.embed.kernels import key_precision

    keys = ["all-MiniLM-L6-v2/onnx-qint8-b1-0011", "all-MiniLM-L6-v2/onnx-fp32-0011", "all-MiniLM-L6-v2/onnx-int8@max512",
            "all-mpnet-base-v2/st-fp32@max512", "text-embedding-3-small/litellm"]
    assert [key_precision(k) for k in keys] == ["int8", "fp32", "fp32", "fp32", "api"]
