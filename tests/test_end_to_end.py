"""The whole DAG through Snakemake on a tiny real grid (tests/tiny.yaml), in a scratch folder."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.datasets.paths import REPO, data_root

pytestmark = pytest.mark.slow


def snakemake(workdir: Path, *args: str, configfile: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(configfile), "--config", f"data_root={data_root()}", "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)


def planned_jobs(out: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run: rule -> count."""
    table = out.split("Job stats:")[1] if "Job stats:" in out else ""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M) if m.group(1) != "total"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("e2e")
    config = REPO / "tests" / "tiny.yaml"
    done = snakemake(work, configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]
    return work, config


def test_outputs_follow_the_contract(run, wattbot_dir):
    work, _ = run
    board = pd.read_csv(work / "reports/wattbot/leaderboard.csv")
    assert set(board["variant"]) == {"dense-x", "bm25-x", "mock-llm", "mock-llm-n3"}
    llm = board.set_index("variant").loc["mock-llm"]
    assert llm["llm_calls"] == 41 and llm["failures"] == 0 and llm["value"] < 0.2  # "4.3" everywhere
    n3 = board.set_index("variant").loc["mock-llm-n3"]  # train only: 3 samples per question, voted
    assert n3["llm_calls"] == 123 and n3["failures"] == 0
    assert not (work / "results/wattbot/answers/mock-llm-n3/test.csv").exists()
    assert board["score"].between(0, 1).all() and (board["n"] == 41).all()
    test_q = pd.read_csv(wattbot_dir / "test_Q.csv")
    sub = pd.read_csv(work / "reports/wattbot/submission.csv")
    assert list(sub.columns) == list(test_q.columns) and list(sub["id"]) == list(test_q["id"])
    assert (work / "reports/wattbot/submissions/bm25-x.csv").exists()
    assert "![score by variant]" in (work / "reports/index.md").read_text()
    rows = pd.read_json(work / "results/wattbot/retrieval/hier-dense/train.jsonl", lines=True)
    assert len(rows) == 41 and {"node_id", "doc_id", "level", "score", "text"} <= set(rows["hits"][0][0])
    assert (work / "results/wattbot/retrieval/hier-dense/train.jsonl.manifest.json").exists()


def test_retrieval_suite_reports_ie(run):
    work, _ = run
    metrics = pd.read_csv(work / "reports/retrieval/metrics.csv")
    assert set(metrics["variant"]) == {"hier-dense", "bm25"} and set(metrics["k"]) == {1, 3}
    assert (metrics["dataset"] == "hotpotqa").all() and (metrics["queries"] == 10).all()
    assert ((metrics["ie"] - metrics["recall"] * metrics["precision"]).abs() <= 1).all()
    assert metrics["hit"].max() > 0.5  # real retrieval on real HotpotQA paragraphs finds gold
    assert (work / "reports/retrieval/hotpotqa.png").exists()
    assert "## hotpotqa" in (work / "reports/retrieval/index.md").read_text()


def test_rerun_does_nothing_and_a_changed_variant_reruns_its_branch(run, tmp_path):
    work, config = run
    again = snakemake(work, "-n", configfile=config)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    cfg = yaml.safe_load(config.read_text())
    cfg["answering"]["bm25-x"]["extractive"] = {"min_support": 0.5}
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(cfg))
    plan = snakemake(work, "-n", configfile=changed)
    jobs = planned_jobs(plan.stdout + plan.stderr)
    assert jobs == {"answer": 2, "evaluate": 1, "report": 1, "all": 1}, plan.stdout[-3000:]
    assert "output: results/wattbot/answers/bm25-x" in plan.stdout
    assert "output: results/wattbot/answers/dense-x" not in plan.stdout


def test_same_config_same_bytes(run, tmp_path):
    """A second cold run in another folder writes byte-identical results and reports (provenance and
    run telemetry live in separate *.manifest.json / *.telemetry.jsonl files)."""
    first, config = run
    second = tmp_path / "again"
    done = snakemake(second, configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]

    def files(root: Path) -> dict[str, bytes]:
        out = {}
        for sub in ("results", "reports"):
            for p in sorted((root / sub).rglob("*")):
                if p.is_file() and not p.name.endswith((".manifest.json", ".telemetry.jsonl")):
                    out[str(p.relative_to(root))] = p.read_bytes()
        return out

    a, b = files(first), files(second)
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []
