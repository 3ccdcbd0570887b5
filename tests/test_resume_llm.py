"""Kill-and-resume with LLM calls in flight: SIGKILL the DAG run's whole process group while the
stand-in has many requests in flight, `snakemake --unlock` + `--rerun-incomplete`, and no reply
stored in the cache before the kill is requested again (the stand-in counts requests per key). The
resume continues the killed run's id (logs/run.json), so its spend and cap span both parts."""
import json
import sqlite3

import pytest
import yaml

from dag_runner import snakemake
from pipeline.bench.standin import StandIn, StandInConfig, request_key
from pipeline.datasets.paths import REPO
from test_resume import cached_calls, kill_when, start, unlock

pytestmark = pytest.mark.slow
TARGET = "results/wattbot/answers/standin-llm/test.jsonl"


def test_sigkill_with_calls_in_flight_then_resume_buys_no_stored_reply_again(tmp_path):
    with StandIn(StandInConfig(mean_latency_s=0.5, latency_sigma=0.6, share_5xx=0.01, seed=2, max_seconds=600)) as server:
        cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
        cfg["answering"] = {"dense-x": cfg["answering"]["dense-x"],
                            "standin-llm": {"retrieval": "bm25", "backend": "llm", "model": "openai/standin",
                                            "samples": 3}}
        cfg["llm"].update({"api_base": server.api_base, "concurrency": 32, "timeout_s": 10, "max_retries": 3,
                           "backoff_s": 0.1})
        config = tmp_path / "standin.yaml"
        config.write_text(yaml.safe_dump(cfg))
        work = tmp_path / "run"
        db = work / "data" / "cache" / "llm.sqlite"

        run = start(work, config, TARGET)
        kill_when(run, work, lambda: len(cached_calls(db)) >= 60 and server.stats.in_flight >= 24, timeout=300)
        with sqlite3.connect(db) as con:
            before = [json.loads(r) for (r,) in con.execute("SELECT request FROM calls")]
        assert before and not (work / TARGET).exists()
        killed = json.loads((work / "logs" / "run.json").read_text())
        assert killed["status"] == "running"  # a killed run never reached onsuccess

        unlock(work, config)
        done = snakemake(work, "--rerun-incomplete", TARGET, configfile=config)
        assert done.returncode == 0, done.stderr[-3000:]

    paid_twice = [r for r in before if server.stats.ok_per_key[request_key(r)] != 1]
    assert paid_twice == []  # no reply stored before the kill was bought again
    answers = [json.loads(line) for line in (work / TARGET).read_text().splitlines()]
    assert len(answers) == 282 and not any(a["failure"] for a in answers)
    resumed = json.loads((work / "logs" / "run.json").read_text())
    assert (resumed["id"], resumed["status"], resumed["resumed"]) == (killed["id"], "done", 1)  # the resume continues it
    with sqlite3.connect(db) as con:  # every request, before and after the kill, is that one run's
        assert [r for (r,) in con.execute("SELECT DISTINCT run FROM usage")] == [killed["id"]]
