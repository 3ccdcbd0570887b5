"""The LLM query planner at scale against the provider stand-in (real HTTP on 127.0.0.1): its calls
run concurrently under the model's concurrency, plans and failures come back in question order,
the retrieval file is byte-identical at any concurrency, and an error no retry can fix stops the job."""
import json
import time

import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.llm_models import LLMSpec
from pipeline.llm.gateway import LLMGateway
from pipeline.llm.pool import FatalLLMError
from pipeline.retrieve.planner import LLMPlanner
from pipeline.specs import PlannerSpec

MODEL = "openai/standin"
PLANNER = PlannerSpec.from_dict({"kind": "llm", "model": MODEL, "n": 3})  # an LLM planner asking for 2 extra queries


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin")  # litellm's openai client wants one


@pytest.fixture(scope="module")
def bm25_index(tmp_path_factory, three_trees):
    """A BM25 index over the three real documents (no encoder: the planner's queries are what is tested)."""
    from pipeline.index_structures.bm25 import build_bm25_index
    from pipeline.index_structures.store import IndexWriter

    root = tmp_path_factory.mktemp("bm25")
    w = IndexWriter(root / "bm25.sqlite", None, {"model_id": "bm25", "levels": ["sentence", "paragraph"]})
    build_bm25_index(three_trees, ["sentence", "paragraph"], w)
    w.close()
    return root


def questions(n):
    return [f"How much energy did system {i} use in 2023?" for i in range(n)], ["MWh"] * n


def gateway(tmp_path, server, concurrency, **kw):
    return LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "timeout_s": 5, "backoff_s": 0.01, "max_backoff_s": 0.05, "concurrency": concurrency, **{"max_retries": 6, **kw}}))


def test_planner_calls_run_concurrently(tmp_path, standin):
    """16 questions at ~0.5 s a reply: one at a time takes 16 x 0.5 s; 16 in flight, about one reply's time."""
    server = standin(mean_latency_s=0.5, latency_sigma=0.05)
    planner = LLMPlanner(gateway(tmp_path, server, 16), PLANNER)
    planner.plan("warm-up?")  # litellm initialises lazily on its first call (seconds on a busy machine)
    texts, units = questions(16)
    t0 = time.perf_counter()
    plans = planner.plan_all(texts, units, progress=False)
    wall = time.perf_counter() - t0
    assert [p[0] for p in plans] == texts and all(len(p) == 3 for p in plans) and planner.failures == []
    assert server.stats.requests == 17 and wall < 16 * 0.4 / 2  # sequential would take >= 6.4 s


def test_plans_and_failures_are_in_question_order_at_any_concurrency(tmp_path, standin):
    """Random latency (replies out of order), 429s, 5xx, replies that are not the JSON asked for (retried
    until they are) and a planner that writes no query for some questions (its failures, recorded)."""
    server = standin(mean_latency_s=0.02, latency_sigma=1.2, share_429=0.05, retry_after_s=0, share_5xx=0.05,
                     share_invalid=0.2, share_blank=0.3, seed=7)
    texts, units = questions(24)
    out = {}
    for c in (1, 8):
        planner = LLMPlanner(gateway(tmp_path / f"c{c}", server, c), PLANNER)
        out[c] = (planner.plan_all(texts, units, progress=False), planner.failures)
    assert out[1] == out[8]
    assert server.stats.invalid and server.stats.rate_limited and server.stats.server_errors
    failed = [q for q, _ in out[1][1]]
    assert 0 < len(failed) < 24 and failed == sorted(failed, key=texts.index)
    assert all(reason == "no new queries" for _, reason in out[1][1])


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_fatal_error_stops_the_planner(tmp_path, standin, concurrency):
    server = standin(status_always=401)
    planner = LLMPlanner(gateway(tmp_path, server, concurrency), PLANNER)
    with pytest.raises(FatalLLMError, match="planner model openai/standin: AuthenticationError"):
        planner.plan_all(*questions(12), progress=False)
    assert server.stats.requests <= concurrency  # not retried; no call started after it


def test_retrieval_file_is_byte_identical_at_concurrency_1_and_8(bm25_index, tmp_path, standin):
    """The retrieve verb as the rule runs it (--llm-exec, --in-flight): the same bytes at 1 and 8 in flight."""
    server = standin(mean_latency_s=0.02, latency_sigma=1.2, share_429=0.05, retry_after_s=0, share_5xx=0.05,
                     share_invalid=0.2, seed=11)
    texts, units = questions(16)
    texts[:2] = ["What were the net CO2e emissions from training the GShard-600B model?",
                 "How many GPU hours were used to train BERT?"]
    qfile = tmp_path / "questions.csv"
    pd.DataFrame({"id": [f"q{i}" for i in range(16)], "question": texts, "answer_unit": units}).to_csv(qfile,
                                                                                                    index=False)
    params = {"name": "bm25-llmq", "indexes": {"bm25": {"kind": "bm25", "levels": ["sentence", "paragraph"]}},
              "embedding": None,
              "retrieval": {"index": "bm25", "top_k": 4, "levels": ["sentence", "paragraph"], "expand": "paragraph",
                            "planner": {"kind": "llm", "n": 3, "model": MODEL}},
              "llm": {"mode": "live", "api_base": server.api_base, "timeout_s": 5, "max_retries": 6,
                      "backoff_s": 0.01, "max_backoff_s": 0.05}}
    files = {}
    for c in (1, 8):
        out = tmp_path / f"c{c}" / "retrieval.jsonl"
        assert main(["retrieve", "--index-dir", str(bm25_index), "--questions", str(qfile),
                     "--params", json.dumps(params), "--llm-exec", json.dumps({"concurrency": 16}),
                     "--in-flight", str(c), "--cache-dir", str(tmp_path / f"c{c}"), "--out", str(out)]) == 0
        files[c] = out.read_bytes()
    assert files[1] == files[8]
    rows = [json.loads(line) for line in files[1].splitlines()]
    assert [r["id"] for r in rows] == [f"q{i}" for i in range(16)]
    assert all(len(r["queries"]) == 3 and r["queries"][1].startswith("stand-in query") for r in rows)
    assert server.stats.invalid and server.stats.server_errors
