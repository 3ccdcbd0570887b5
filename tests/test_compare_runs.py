"""Two real runs of the tiny grid (tests/tiny.yaml), the second with one setting changed that moves scores,
kept under runs/ and compared (issue 35, item 2): two run ids, two folders, and each paired difference is the
difference of the two leaderboards' scores on the shared questions."""
import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from dag_runner import environment, snakemake
from pipeline.datasets.paths import REPO

pytestmark = pytest.mark.slow


def kept_runs(work):
    """run id -> run.json of every run kept under work/runs/ (runs/latest, a link to one, aside)."""
    runs = (p for p in (work / "runs").glob("*/run.json") if not p.parent.is_symlink())
    return {p.parent.name: json.loads(p.read_text()) for p in runs}


def test_two_runs_are_kept_apart_and_compared(tiny_run, tmp_path):
    first, config = tiny_run
    work = tmp_path / "work"
    shutil.copytree(first, work, symlinks=True)  # the session's run stays as other tests read it
    (run_a,) = kept_runs(work)
    board_a = pd.read_csv(work / "reports/wattbot/leaderboard.csv").set_index("variant")

    cfg = yaml.safe_load(config.read_text())
    cfg["retrieval"]["bm25"]["top_k"] = 2  # fewer passages: bm25-x answers and the suite's bm25 IE@3 move
    changed = tmp_path / "top2.yaml"
    changed.write_text(yaml.safe_dump(cfg))
    done = snakemake(work, configfile=changed)
    assert done.returncode == 0, done.stderr[-3000:]

    kept = kept_runs(work)
    (run_b,) = set(kept) - {run_a}
    assert (work / "runs" / "latest").resolve().name == run_b
    assert [s["dataset"] + "/" + s["split"] for s in kept[run_b]["scored"]] == ["wattbot/train", "hotpotqa/queries"]
    assert kept[run_b]["config_files"][-1].endswith("top2.yaml") and kept[run_b]["commit"] == kept[run_a]["commit"]

    board_b = pd.read_csv(work / "reports/wattbot/leaderboard.csv").set_index("variant")
    out = subprocess.run([sys.executable, "-m", "pipeline", "compare", run_a, run_b], cwd=work, capture_output=True,
                         text=True, env=environment({"PYTHONPATH": str(REPO)}))
    assert out.returncode == 0, out.stderr[-2000:]
    table = pd.read_csv(work / "runs" / f"compare-{run_a}-{run_b}.csv")
    wattbot = table[table["dataset"] == "wattbot"].set_index("variant")
    assert sorted(wattbot.index) == sorted(board_a.index) and (wattbot["n"] == 41).all()
    for v in wattbot.index:  # the leaderboard rounds to 4 places
        assert wattbot.loc[v, "diff"] == pytest.approx(board_b.loc[v, "score"] - board_a.loc[v, "score"], abs=1.5e-4)
    assert wattbot.loc["bm25-x", "diff"] != 0 and wattbot.loc["dense-x", "diff"] == 0
    suite = table[(table["dataset"] == "hotpotqa") & (table["metric"] == "ie@3")].set_index("variant")
    assert suite.loc["bm25", "diff"] != 0 and suite.loc["hier-dense", "diff"] == 0
    assert f"{run_a} (control, A) -> {run_b} (treatment, B)" in out.stdout

    # make run's last step keeps the run again, with what its own steps added to reports/
    summary = subprocess.run([sys.executable, "-m", "pipeline", "summary", "--keep", "--config", str(changed)],
                             cwd=work, capture_output=True, text=True, env=environment({"PYTHONPATH": str(REPO)}))
    assert summary.returncode == 0, summary.stderr[-2000:]
    assert f"Kept: runs/{run_b}/" in summary.stdout
    assert (work / "runs" / run_b / "reports/summary.json").read_bytes() == (work / "reports/summary.json").read_bytes()
