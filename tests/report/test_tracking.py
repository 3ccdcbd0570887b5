"""Experiment tracking (pipeline/tracking.py): one MLflow run per answering and retrieval variant,
read back with MLflow's own client after the tiny DAG; and the name and value mapping it rests on."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.config import ConfigError, load_config
from pipeline.datasets.paths import REPO, data_root
from pipeline import tracking
from pipeline.workflow.report_settings import track_settings, tracking_of
from pipeline.report.telemetry.time_table import JobTime

NO_MLFLOW = "the mlflow extra is not installed (make test installs it: pip install -e '.[mlflow]')"


# --- fast: names, values, config ---


def test_metric_names_are_ones_mlflow_accepts():
    assert tracking.metric_key("doc_recall@5") == "doc_recall_at_5"
    assert tracking.metric_key("ndcg@10") == "ndcg_at_10"
    assert tracking.metric_key("time.answer.train.wall_s") == "time.answer.train.wall_s"
    assert tracking.metric_key("a:b(c)") == "a_b_c_"


def test_flatten_gives_dotted_keys_and_json_values():
    flat = tracking.flatten({"answering": {"backend": "llm", "params": {"t": 0.2}}, "levels": ["s", "p"], "e": None, "k": 8})
    assert flat == {
        "answering.backend": "llm",
        "answering.params.t": "0.2",
        "levels": '["s", "p"]',
        "e": "null",
        "k": "8",
    }
    long = tracking.flatten({"prompt": "x" * 10_000})["prompt"]
    assert len(long) <= tracking.MAX_PARAM and long.endswith("[cut by wattbench]")


def test_numbers_keep_only_finite_numbers():
    row = {"score": 0.31, "n": 41, "backend": "bm25", "na": float("nan"), "ok": True, "doc_hit@1": 0.25}
    assert tracking.numbers(row, "x.") == {"x.score": 0.31, "x.n": 41.0, "x.doc_hit_at_1": 0.25}


def test_intervals_bracket_the_mean_and_skip_missing_values():
    table = pd.DataFrame({"recall@1": [0, 1, 1, 0, 1, 1], "quote": [1, np.nan, 0, np.nan, 1, 1]})
    m = tracking.with_intervals(table, "wattbot.", 500, 0)
    assert set(m) == {f"wattbot.{c}{s}" for c in ("recall_at_1", "quote") for s in ("", "_lo", "_hi")}
    assert m["wattbot.recall_at_1"] == round(4 / 6, 4) and m["wattbot.quote"] == 0.75  # NaN rows left out
    assert m["wattbot.recall_at_1_lo"] <= m["wattbot.recall_at_1"] <= m["wattbot.recall_at_1_hi"]


def test_job_times_count_for_the_variant_their_path_names():
    jobs = [
        JobTime("answer", "wattbot/answer/bm25-x/train", 2.0, 1.5, 100),
        JobTime("answer", "wattbot/answer/bm25-x/test", 3.0, 2.5, 100),
        JobTime("evaluate", "wattbot/evaluate/bm25-x", 1.0, 0.5, 100),
        JobTime("retrieve", "hotpotqa/retrieve/bm25/queries", 4.0, 3.0, 100),
        JobTime("figures", "figures", 9.0, 9.0, 100),
    ]
    answering = tracking.job_times(jobs, "answering")
    assert set(answering) == {"bm25-x"}
    assert answering["bm25-x"]["time.answer.train.wall_s"] == 2.0
    assert answering["bm25-x"]["time.evaluate.cpu_s"] == 0.5
    assert answering["bm25-x"]["time.wall_s"] == 6.0 and answering["bm25-x"]["time.cpu_s"] == 4.5
    assert tracking.job_times(jobs, "retrieval") == {
        "bm25": {
            "time.wall_s": 4.0,
            "time.cpu_s": 3.0,
            "time.retrieve.hotpotqa.queries.wall_s": 4.0,
            "time.retrieve.hotpotqa.queries.cpu_s": 3.0,
        }
    }


def test_tracking_block_is_in_the_schema_with_its_default(tmp_path):
    cfg = load_config([REPO / "tests" / "tiny.yaml"], {"tracking": {"mlflow": "sqlite:///runs/m.db"}})
    t = tracking_of(cfg)
    assert t == tracking.Tracking("sqlite:///runs/m.db", "wattbench", None)
    assert t.artifact_root().endswith("/runs/mlartifacts")
    assert tracking_of(load_config([REPO / "tests" / "tiny.yaml"])) is None  # absent: nothing logged
    with pytest.raises(ConfigError, match="tracking"):
        load_config([REPO / "tests" / "tiny.yaml"], {"tracking": {"mlflow": "sqlite:///m.db", "uri": "x"}})


def test_what_tracking_reads_of_the_config_is_parsed_once():
    cfg = load_config([REPO / "tests" / "tiny.yaml"], {"report": {"bootstrap": 500}, "cache_dir": "elsewhere"})
    s = track_settings(cfg)
    assert s.tracking is None and s.answering == tuple(sorted(cfg["answering"])) and s.retrieval[0] in cfg["retrieval"]
    assert (s.score_split, s.bootstrap, s.seed, s.cache_dir) == (cfg["wattbot"]["score_split"], 500, 0, "elsewhere")
    assert s.suite_datasets == tuple(sorted((cfg.get("suite") or {}).get("datasets") or {})) != ()


def test_tracking_is_execution_only():
    """Adding a tracking block reruns nothing: every hashed slice and cache key of the default grid is the same."""
    from test_shipped_configs import pins_now

    assert pins_now("config.yaml", {"tracking": {"mlflow": "sqlite:///mlruns.db"}}) == pins_now("config.yaml")


def test_a_missing_mlflow_is_one_line_naming_the_key_and_the_extra(monkeypatch):
    monkeypatch.setattr(tracking.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"'tracking\.mlflow'.*pip install -e \"\.\[mlflow\]\""):
        tracking.require_mlflow(tracking_of({"tracking": {"mlflow": "sqlite:///m.db"}}))
    assert tracking.require_mlflow(tracking_of({})) is None  # no tracking: mlflow is not needed


def test_after_a_run_a_tracking_failure_is_a_warning_and_make_run_defers_it(monkeypatch, capsys):
    from pipeline.report.summary import LATER

    def unreachable(*args):
        raise ConnectionError("tracking server down")

    monkeypatch.setattr(tracking, "track", unreachable)
    tiny = load_config([REPO / "tests" / "tiny.yaml"], {"tracking": {"mlflow": "http://127.0.0.1:9"}})
    cfg = track_settings(tiny)
    tracking.after_run(cfg)  # the run's results are made: no raise
    err = capsys.readouterr().err
    assert "warning: MLflow tracking failed (ConnectionError: tracking server down)" in err
    assert "python -m pipeline track" in err
    monkeypatch.setenv(LATER, "1")  # make run / make resume: their own track step logs after the time table
    tracking.after_run(cfg)
    assert capsys.readouterr().err == ""


def test_track_without_a_tracking_block_logs_nothing(capsys):
    from pipeline.cli import main

    tiny = str(REPO / "tests" / "tiny.yaml")
    assert main(["track", "--config", tiny, "--if-configured"]) == 0
    assert capsys.readouterr().out == ""  # make run's step: silent without tracking
    assert main(["track", "--config", tiny]) == 0
    assert "no tracking configured" in capsys.readouterr().out


# --- slow: the tiny DAG logs its runs; MLflow's client reads them back ---


@pytest.mark.slow
@pytest.mark.data
def test_the_tiny_dag_logs_one_mlflow_run_per_variant(tmp_path):
    pytest.importorskip("mlflow", reason=NO_MLFLOW)
    from mlflow.tracking import MlflowClient

    from dag_runner import environment, result_files, snakemake

    store = tmp_path / "store" / "mlruns.db"
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["tracking"] = {"mlflow": f"sqlite:///{store}", "experiment": "tiny"}
    config = tmp_path / "tiny-tracked.yaml"
    config.write_text(yaml.safe_dump(cfg))
    work = tmp_path / "work"
    done = snakemake(work, configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "MLflow: run" in done.stdout + done.stderr

    client = MlflowClient(tracking_uri=cfg["tracking"]["mlflow"])
    exp = client.get_experiment_by_name("tiny")
    runs = client.search_runs([exp.experiment_id])
    by = {(r.data.tags["wattbench.kind"], r.data.tags["wattbench.variant"]): r for r in runs}
    assert sorted(by) == sorted(
        [("answering", v) for v in cfg["answering"]] + [("retrieval", v) for v in cfg["retrieval"]]
    )
    run_id = json.loads((work / "logs/run.json").read_text())["id"]
    assert {r.data.tags["wattbench.run_id"] for r in runs} == {run_id}

    board = pd.read_csv(work / "reports/wattbot/leaderboard.csv").set_index("variant")
    llm = by[("answering", "mock-llm")].data
    assert llm.params["answering.model"] == "openai/mock" and llm.params["upstream.retrieval.top_k"] == "8"
    assert llm.params["config_hash"] and llm.params["git_commit"] and llm.params["splits"] == "test,train"
    for key in ("score", "score_lo", "score_hi"):
        assert llm.metrics[key] == pytest.approx(board.loc["mock-llm", key])
    assert llm.metrics["cost.train.llm_calls"] == 41 and llm.metrics["cost.test.llm_calls"] == 282
    assert llm.metrics["spend.calls"] >= 41 and llm.metrics["time.answer.train.wall_s"] > 0

    bm25 = by[("retrieval", "bm25")].data
    assert bm25.params["retrieval.index"] == "bm25" and bm25.params["ran_on"] == "hotpotqa,wattbot"
    for m in ("wattbot.doc_recall_at_5", "hotpotqa.ndcg_at_10"):
        assert bm25.metrics[f"{m}_lo"] <= bm25.metrics[m] <= bm25.metrics[f"{m}_hi"]
    assert bm25.metrics["time.retrieve.hotpotqa.queries.wall_s"] > 0
    for r in runs:
        assert sorted(a.path for a in client.list_artifacts(r.info.run_id)) == ["figures", "index.html"]
        assert "figures/leaderboard-ci.png" in [a.path for a in client.list_artifacts(r.info.run_id, "figures")]

    # logging the run again replaces its MLflow runs (no duplicates) and leaves results/ and reports/ as they were
    before = result_files(work)
    again = subprocess.run(
        [sys.executable, "-m", "pipeline", "track", "--config", str(config), "--set", f"data_root={data_root()}"],
        cwd=work, capture_output=True, text=True, env=environment({"PYTHONPATH": str(REPO)}), timeout=600,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(client.search_runs([exp.experiment_id])) == len(runs)
    assert result_files(work) == before
    assert not (work / "mlruns").exists() and (store.parent / "mlartifacts").is_dir()
