"""The LLM planner's retrieval through the DAG (tests/tiny.yaml's documents): rule retrieve_llm runs it
with its model's share of `llm_api` and the execution-only LLM settings, its calls in flight."""
import json

import pytest
import yaml
from dag_runner import snakemake

from pipeline.datasets.paths import REPO

PLAN = '{"queries": ["GShard-600B carbon emissions", "BERT GPU hours"]}'


@pytest.mark.slow  # ingest, three trees, a BM25 index and the retrieval in a scratch folder: ~1-2 min
def test_llm_planner_retrieval_runs_under_its_own_rule_with_its_models_share(tmp_path):
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["retrieval"]["bm25-llmq"] = {"index": "bm25", "top_k": 4, "planner": {
        "kind": "llm", "n": 3, "model": "openai/mock", "params": {"mock_response": PLAN, "mock_delay": 0.05}}}
    cfg["llm"]["per_model"] = {"openai/mock": {"concurrency": 4}}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))
    work = tmp_path / "work"
    work.mkdir()
    target = "results/wattbot/retrieval/bm25-llmq/train.jsonl"
    done = snakemake(work, "-p", target, "results/wattbot/retrieval/bm25/train.jsonl", configfile=config)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    assert "rule retrieve_llm:" in log and "rule retrieve:" in log
    assert "llm_api=4" in log and "--in-flight 4" in log and '"concurrency":4' in log
    rows = [json.loads(line) for line in (work / target).read_text().splitlines()]
    assert rows and all(r["queries"][1:] == ["GShard-600B carbon emissions", "BERT GPU hours"] for r in rows)
