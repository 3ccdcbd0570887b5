"""LLM faults against a fake OpenAI-compatible server on 127.0.0.1: 429, 5xx, timeouts,
malformed JSON and empty replies are retried with backoff, then recorded per question as a
failure with its reason; replay fails fast on a miss; the cache is append-only."""
import json
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from pipeline.llm_models import LLMSpec
from pipeline.llm.gateway import CacheMiss, LLMGateway, LLMRequest, LLMResult
from pipeline.llm.replies import json_problem
from pipeline.answer.llm_answer import reply_problem
from answering import answer_dicts

GOOD = json.dumps({"explanation": "The paper says 4.3.", "answer": "4.3 tCO2e", "answer_value": "4.3",
                   "ref_id": ["patterson2021"], "is_blank": False})


class FakeOpenAI:
    """Plays a script of replies, one per request: ("ok", text) | (status, None) | ("sleep", s)."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                kind, arg = fake.script.pop(0) if fake.script else ("ok", GOOD)
                if kind == "sleep":
                    time.sleep(arg)
                    kind, arg = "ok", GOOD
                if kind == "ok":
                    data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                                       "choices": [{"index": 0, "finish_reason": "stop",
                                                    "message": {"role": "assistant", "content": arg}}],
                                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
                    self.send_response(200)
                else:
                    data = json.dumps({"error": {"message": f"fake {kind}", "type": "server_error", "code": kind}})
                    self.send_response(kind)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.api_base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    servers = []

    def make(script):
        servers.append(FakeOpenAI(script))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def gateway(tmp_path, server, **kw):
    return LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "backoff_s": 0.01, **{"max_retries": 2, "timeout_s": 5, **kw}}))


def req(content="q"):
    return LLMRequest("openai/fake", [{"role": "user", "content": content}], {"api_key": "x"})


@pytest.mark.parametrize("fault", [429, 500, 503])
def test_http_faults_are_retried_then_succeed(tmp_path, fake, fault):
    server = fake([(fault, None), (fault, None), ("ok", GOOD)])
    result = gateway(tmp_path, server).complete(req(), validate=json_problem)
    assert result.ok and result.text == GOOD and result.attempts == 3 and len(server.requests) == 3


def test_persistent_5xx_is_a_failure_with_reason_and_not_cached(tmp_path, fake):
    server = fake([(500, None)] * 3)
    gw = gateway(tmp_path, server)
    result = gw.complete(req())
    assert not result.ok and "InternalServerError" in result.error and len(server.requests) == 3
    assert gw.cache.get(gw.key(req())) is None  # a transport failure: the rerun tries again


def test_timeout_is_retried(tmp_path, fake):
    server = fake([("sleep", 3), ("ok", GOOD)])
    result = gateway(tmp_path, server, timeout_s=1).complete(req())
    assert result.ok and result.attempts == 2


def test_malformed_and_empty_replies_are_retried(tmp_path, fake):
    server = fake([("ok", "Sure! The answer is 4.3"), ("ok", ""), ("ok", GOOD)])
    result = gateway(tmp_path, server).complete(req(), validate=json_problem)
    assert result.ok and result.attempts == 3


def test_malformed_after_the_limit_is_recorded_with_the_words(tmp_path, fake):
    server = fake([("ok", "no json here")] * 3)
    gw = gateway(tmp_path, server)
    result = gw.complete(req(), validate=json_problem)
    assert not result.ok and "no JSON object" in result.error and result.text == "no json here"
    assert gw.cache.get(gw.key(req())).text == "no json here"  # what the model said is kept for replay


def test_failures_are_recorded_per_question_never_dropped(tmp_path, fake):
    server = fake([(500, None)] * 2 + [("ok", "garbage")] * 2)
    questions = pd.DataFrame({"id": ["q1", "q2"], "question": ["What is x?", "What is y?"],
                              "answer_unit": ["tCO2e", "tCO2e"]})
    hits = [{"node_id": "patterson2021:s1:p1:t1", "doc_id": "patterson2021", "text": "x is 4.3 tCO2e.",
             "context": "x is 4.3 tCO2e.", "context_id": "patterson2021:s1:p1"}]
    retrieval = [{"id": q, "hits": hits} for q in ("q1", "q2")]
    llm = {"mode": "live", "max_retries": 1, "timeout_s": 5, "api_base": server.api_base, "backoff_s": 0.01}
    variant = {"backend": "llm", "model": "openai/fake", "params": {"api_key": "x"}, "structured": False}
    out = answer_dicts(retrieval, questions, variant, llm, tmp_path, {"patterson2021"}, progress=False)
    assert [r["id"] for r in out] == ["q1", "q2"]
    assert out[0]["failure"].startswith("InternalServerError") and out[0]["is_blank"]
    assert "no JSON object" in out[1]["failure"] and out[1]["is_blank"]
    # the failed question is retried on a rerun (not cached); the malformed one replays from the cache
    server.script = [("ok", GOOD)]
    again = answer_dicts(retrieval, questions, variant, llm, tmp_path, {"patterson2021"}, progress=False)
    assert not again[0]["failure"] and again[0]["answer_value"] == "4.3"
    assert again[1]["failure"] == out[1]["failure"]


VIOLATION = json.dumps({"explanation": "e", "answer": "4.3", "answer_value": {"value": 4.3}, "ref_id": 5})


def test_replies_that_parse_but_break_the_schema_are_retried_like_malformed_ones(tmp_path, fake):
    assert json_problem(VIOLATION) is None and "schema violation" in reply_problem(VIOLATION)
    server = fake([("ok", VIOLATION), ("ok", GOOD)])
    result = gateway(tmp_path, server).complete(req(), validate=reply_problem)
    assert result.ok and result.text == GOOD and result.attempts == 2


def test_schema_violation_after_the_limit_is_a_recorded_failure(tmp_path, fake):
    server = fake([("ok", VIOLATION)] * 2)
    questions = pd.DataFrame({"id": ["q1"], "question": ["What is x?"], "answer_unit": ["tCO2e"]})
    hits = [{"node_id": "patterson2021:s1:p1:t1", "doc_id": "patterson2021", "text": "x is 4.3 tCO2e.",
             "context": "x is 4.3 tCO2e.", "context_id": "patterson2021:s1:p1"}]
    llm = {"mode": "live", "max_retries": 1, "timeout_s": 5, "api_base": server.api_base, "backoff_s": 0.01}
    variant = {"backend": "llm", "model": "openai/fake", "params": {"api_key": "x"}, "structured": False}
    out = answer_dicts([{"id": "q1", "hits": hits}], questions, variant, llm, tmp_path, {"patterson2021"},
                       progress=False)
    assert "schema violation at " in out[0]["failure"] and out[0]["is_blank"]
    assert len(server.requests) == 2  # the first call and its one retry
    assert out[0]["call"]["raw"] == VIOLATION  # the model's words are kept, as for malformed JSON


@pytest.mark.parametrize("text", [
    GOOD,
    # the tiny grid's mock reply (no is_blank), free-form numbers, a range, one ref as a string, a blank
    '{"explanation": "mock", "answer": "4.3", "answer_value": "4.3", "ref_id": ["patterson2021"]}',
    '{"answer_value": 4.3, "ref_id": "patterson2021"}',
    '{"answer_value": [80, 90], "ref_id": ["a"], "is_blank": false}',
    '{"explanation": "none", "answer": "is_blank", "answer_value": "is_blank", "ref_id": [], "is_blank": true}',
])
def test_replies_the_answer_reader_accepts_pass_the_schema(text):
    assert reply_problem(text) is None


def test_replay_fails_fast_on_any_miss(tmp_path, fake):
    server = fake([])
    gateway(tmp_path, server).complete(req("seen"))
    replay = gateway(tmp_path, server, mode="replay")
    assert replay.complete(req("seen")).cached
    n = len(server.requests)
    with pytest.raises(CacheMiss, match="llm replay: no cached response"):
        replay.complete(req("unseen"))
    assert len(server.requests) == n  # no call was made


def test_cache_is_append_only_and_crash_safe(tmp_path):
    gw = LLMGateway(tmp_path / "llm.sqlite")
    gw.cache.put("k", req(), LLMResult("first", True))
    gw.cache.put("k", req(), LLMResult("second", True))  # never overwrites a stored response
    assert gw.cache.get("k").text == "first" and len(gw.cache) == 1
    db = sqlite3.connect(tmp_path / "llm.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # committed on return: another connection sees the row at once (nothing waits for a close)
    assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 1


def test_malformed_retries_are_capped_per_model(tmp_path, fake):
    """`llm.per_model.<model>.malformed_retries`: a model that repeats its malformed words gets fewer
    retries of them than of transport failures (max_retries), which keep theirs."""
    def capped(server):
        return LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "backoff_s": 0.01, "max_retries": 3, "timeout_s": 5, **{"per_model": {"openai/fake": {"malformed_retries": 1}}}}))

    server = fake([("ok", "no json here")] * 5)
    gw = capped(server)
    result = gw.complete(req(), validate=json_problem)
    assert not result.ok and result.attempts == 2 and len(server.requests) == 2
    assert gw.cache.get(gw.key(req())).text == "no json here"
    server = fake([(500, None), (500, None), ("ok", "no json"), ("ok", GOOD)])
    result = capped(server).complete(req("other"), validate=json_problem)  # 2 transport retries, 1 malformed
    assert result.ok and result.attempts == 4
