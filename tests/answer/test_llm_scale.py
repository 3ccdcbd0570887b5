"""LLM calls at scale against the provider stand-in (real HTTP on 127.0.0.1): concurrency gives
byte-identical results, identical requests in flight are made once (threads and processes),
limits are shared, Retry-After is honoured, non-retryable errors fail the job, a job over
``llm.max_failure_rate`` fails and its rerun makes only the failed calls, the spend cap stops."""
import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

from pipeline.registry.answer_backends import variant_spec
from pipeline.answer.failures import FailureRateExceeded, check_failure_rate
from pipeline.llm.limits import SharedBuckets
from pipeline.llm_models import LLMSpec
from pipeline.llm.gateway import LLMGateway, LLMRequest, SpendCapReached
from pipeline.llm.prices import price_per_token
from pipeline.llm.retries import parse_retry_after
from answering import answer_dicts

from pipeline.llm.pool import FatalLLMError
from pipeline.bench.standin import INVALID_REPLY, request_key

DOCS = ["khan2025", "patterson2021", "strubell2019"]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-standin")  # litellm's openai client wants one


def inputs(n=12):
    questions = pd.DataFrame({"id": [f"q{i}" for i in range(n)],
                              "question": [f"How many units did system {i} use?" for i in range(n)],
                              "answer_unit": ["MWh"] * n})
    hits = [{"node_id": f"{d}:s1:p{j}:t1", "doc_id": d, "context_id": f"{d}:s1:p{j}", "text": f"{d} says {j} MWh.",
             "context": f"{d} says {j} MWh."} for j in range(2) for d in DOCS]
    return questions, [{"id": q, "hits": hits} for q in questions["id"]]


def llm_cfg(server, **kw):
    return {"mode": "live", "api_base": server.api_base, "timeout_s": 5, "max_retries": 6, "backoff_s": 0.01,
            "max_backoff_s": 0.05, **kw}


VARIANT = {"backend": "llm", "model": "openai/standin", "samples": 3, "max_retries": 1, "context_k": 2}


def req(content="q", seed=None):
    return LLMRequest("openai/standin", [{"role": "user", "content": content}], {}, seed=seed)


def test_concurrency_1_and_16_give_byte_identical_records(tmp_path, standin):
    """Random latency (replies arrive out of order), 429s, 5xx, cut-off bodies and abstentions
    (blank-retries): the records are the same at concurrency 1 and 16."""
    server = standin(mean_latency_s=0.02, latency_sigma=1.2, share_429=0.05, retry_after_s=0, share_5xx=0.05,
                     share_malformed=0.03, share_blank=0.3, seed=3)
    questions, retrieval = inputs()
    out = {}
    for c in (1, 16):
        telemetry = []
        records = answer_dicts(retrieval, questions, VARIANT, llm_cfg(server, concurrency=c), tmp_path / f"c{c}",
                               set(DOCS), progress=False, telemetry=telemetry)
        out[c] = json.dumps(records, sort_keys=True)
        assert not any(r["failure"] for r in records)
    assert out[1] == out[16]
    assert server.stats.rate_limited and server.stats.server_errors and server.stats.malformed
    assert any(json.loads(out[1])[i]["call"]["n_calls"] > 3 for i in range(12))  # blank-retries happened


def test_identical_requests_in_flight_are_made_once_within_a_process(tmp_path, standin):
    server = standin(mean_latency_s=0.3, latency_sigma=0.1)
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "concurrency": 16, "timeout_s": 5}))
    results = [None] * 16

    def call(i):
        results[i] = gw.complete(req("same"))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert server.stats.requests == 1 and gw.stats.waited_for_peer == 15
    assert len({r.text for r in results}) == 1 and all(r.ok for r in results)


CHILD = """
import sys, json
from pipeline.llm.gateway import LLMGateway, LLMRequest
from pipeline.llm_models import LLMSpec
from concurrent.futures import ThreadPoolExecutor
gw = LLMGateway(sys.argv[1], LLMSpec.from_dict({"api_base": sys.argv[2], "concurrency": 8, "timeout_s": 10}))
reqs = [LLMRequest("openai/standin", [{"role": "user", "content": f"shared {i}"}], {}) for i in range(8)]
with ThreadPoolExecutor(8) as pool:
    texts = list(pool.map(lambda r: gw.complete(r).text, reqs))
print(json.dumps(texts))
"""


@pytest.mark.slow  # two fresh interpreters importing litellm: ~20 s on 2 busy cores
def test_identical_requests_in_flight_are_made_once_across_processes(tmp_path, standin):
    """Two jobs (llm-cf and llm-cf-r1 share their first calls) run at once: each request is paid once."""
    server = standin(mean_latency_s=1.0, latency_sigma=0.1)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "llm.sqlite"), server.api_base],
                              stdout=subprocess.PIPE, env=env, text=True) for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert outs[0] == outs[1]
    assert server.stats.requests == 8 and set(server.stats.per_key.values()) == {1}


def test_a_lease_left_by_a_dead_process_is_taken_over(tmp_path):
    gw = LLMGateway(tmp_path / "llm.sqlite")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    owner = f"{gw.owner.rpartition(':')[0]}:{dead.stdout.strip()}"
    with sqlite3.connect(tmp_path / "llm.sqlite") as db:
        db.execute("INSERT INTO leases VALUES ('k', ?, ?)", (owner, time.time() + 3600))
    assert gw.cache.claim("k", gw.owner, 60) == "mine"
    assert gw.cache.claim("k", "otherhost:1", 60) == "busy"  # another host's lease holds until it expires


def test_token_bucket_is_shared_between_connections(tmp_path):
    a, b = SharedBuckets(tmp_path / "l.sqlite"), SharedBuckets(tmp_path / "l.sqlite")  # two "processes"
    assert a.take("rpm:m", 100, 600) == 0  # a full bucket: 10 s of 600/min
    t0 = time.perf_counter()
    waited = b.take("rpm:m", 5, 600)      # the other one waits for the refill (10/s)
    assert waited > 0.3 and time.perf_counter() - t0 > 0.3


def test_requests_per_minute_holds_across_threads(tmp_path, standin):
    server = standin(mean_latency_s=0.01)
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "concurrency": 8, **{"requests_per_minute": 60}}))  # 1/s, a bucket of 10
    t0 = time.perf_counter()
    threads = [threading.Thread(target=gw.complete, args=(req(f"r{i}"),)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert server.stats.requests == 12 and time.perf_counter() - t0 > 1.5 and gw.stats.limit_wait_s > 0


def test_retry_after_is_parsed_in_seconds_and_as_a_date():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:05 GMT", now=1445412480.0) == pytest.approx(5.0)
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None


@pytest.mark.parametrize("as_date", [False, True])
def test_429_retry_after_is_honoured_before_backoff(tmp_path, standin, as_date):
    server = standin(share_429=0.5, retry_after_s=1, retry_after_date=as_date, mean_latency_s=0.01, seed=3)
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "backoff_s": 60, "max_retries": 8}))
    t0 = time.perf_counter()
    for i in range(4):
        assert gw.complete(req(f"r{i}")).ok
    assert server.stats.rate_limited >= 1 and gw.stats.rate_limited == server.stats.rate_limited
    if not as_date:
        assert gw.stats.retry_after_honoured == server.stats.rate_limited
    assert time.perf_counter() - t0 < 1.5 * server.stats.rate_limited + 10  # no 30-60 s backoff was used
    # (the 10 s: litellm's first call in a process initialises lazily, 5 s on a busy 2-core machine)


@pytest.mark.parametrize("status,kind", [(401, "AuthenticationError"), (404, "NotFoundError"),
                                         (400, "BadRequestError")])
def test_auth_unknown_model_and_bad_request_fail_the_job_unretried(tmp_path, standin, status, kind):
    server = standin(status_always=status)
    questions, retrieval = inputs(3)
    with pytest.raises(FatalLLMError, match=kind):
        answer_dicts(retrieval, questions, {**VARIANT, "samples": 1}, llm_cfg(server, concurrency=1), tmp_path,
                     set(DOCS), progress=False)
    assert server.stats.requests == 1  # not retried, and nothing else was sent after it


def test_job_over_max_failure_rate_fails_and_rerun_makes_only_the_failed_calls(tmp_path, standin):
    questions, retrieval = inputs(10)
    variant = {**VARIANT, "samples": 1, "max_retries": 0}
    flaky = standin(share_5xx=0.4, seed=5)
    cfg = llm_cfg(flaky, max_retries=0, concurrency=4)
    first = answer_dicts(retrieval, questions, variant, cfg, tmp_path, set(DOCS), progress=False)
    with pytest.raises(FailureRateExceeded, match=r"got no reply .* rerun to make only the failed calls"):
        check_failure_rate(first, LLMSpec.from_dict(cfg).resolve(variant["model"]))
    failed = {r["id"] for r in first if r["failure"]}
    assert 0 < len(failed) < 10
    lenient = check_failure_rate(first, LLMSpec.from_dict({**cfg, "max_failure_rate": 1.0}).resolve(variant["model"]))  # partial results kept
    assert set(lenient) == failed

    before = flaky.stats.requests  # the same endpoint (the cache key names it), its faults gone
    flaky.cfg = dataclasses.replace(flaky.cfg, share_5xx=0.0)
    again = answer_dicts(retrieval, questions, variant, llm_cfg(flaky, max_retries=0, concurrency=4), tmp_path,
                         set(DOCS), progress=False)
    assert check_failure_rate(again, LLMSpec.from_dict(cfg).resolve(variant["model"])) == []
    assert flaky.stats.requests - before == len(failed)  # only the failed calls went out again
    assert [r for r in again if r["id"] not in failed] == [r for r in first if r["id"] not in failed]


def test_spend_cap_stops_cleanly_and_keeps_the_cache(tmp_path, standin):
    server = standin()
    model = "openai/gpt-4o-mini"  # priced in litellm's local cost map
    inp, out = price_per_token(LLMSpec.from_dict({}).resolve(model))
    cap = 1 / 3 * inp + 512 * out  # the most one call with a 1-character prompt can cost: one fits, not two
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "max_cost_usd": cap}))
    first = gw.complete(LLMRequest(model, [{"role": "user", "content": "a"}], {}))
    assert first.ok and first.cost_usd > 0
    with pytest.raises(SpendCapReached, match="max_cost_usd"):
        gw.complete(LLMRequest(model, [{"role": "user", "content": "b"}], {}))
    assert server.stats.requests == 1 and len(gw.cache) == 1
    assert gw.complete(LLMRequest(model, [{"role": "user", "content": "a"}], {})).cached  # cached replies still served


def test_per_model_dropped_params_never_reach_the_provider(tmp_path, standin):
    server = standin()
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, **{"drop_params": {"openai/standin": ["seed"]}}}))
    assert gw.complete(req("s", seed=7)).ok
    assert list(server.stats.per_key) == [request_key({"messages": [{"role": "user", "content": "s"}], "seed": None})]


def test_nfs_mode_uses_a_rollback_journal_and_a_lock_file(tmp_path, standin):
    server = standin()
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "cache_journal": "nfs"}))
    assert gw.complete(req()).ok and gw.complete(req()).cached
    assert sqlite3.connect(tmp_path / "llm.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert (tmp_path / "llm.sqlite.lock").exists()


def test_answer_command_over_the_failure_rate_exits_nonzero_without_outputs_then_reruns_only_failed(
        tmp_path, standin, capsys):
    """What Snakemake runs: `python -m pipeline answer` exits non-zero with one line and writes no
    output (so the next run redoes the job); the rerun sends only the calls that failed."""
    from pipeline.cli import main
    from pipeline.io import atomic_write_jsonl

    questions, retrieval = inputs(10)
    questions.to_csv(tmp_path / "q.csv", index=False)
    pd.DataFrame({"id": DOCS, "url": [f"https://x/{d}" for d in DOCS]}).to_csv(tmp_path / "meta.csv", index=False)
    atomic_write_jsonl(tmp_path / "retrieval.jsonl", retrieval)

    def run(server):
        params = {"answering": {**VARIANT, "samples": 1, "max_retries": 0},
                  "llm": {"api_base": server.api_base, "max_retries": 0, "timeout_s": 5}}
        return main(["answer", "--retrieval", str(tmp_path / "retrieval.jsonl"), "--questions", str(tmp_path / "q.csv"),
                     "--metadata", str(tmp_path / "meta.csv"), "--params", json.dumps(params),
                     "--llm-exec", json.dumps({"concurrency": 4}), "--in-flight", "4",
                     "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "a.jsonl"),
                     "--out-csv", str(tmp_path / "a.csv")])

    flaky = standin(share_5xx=0.4, seed=5)
    assert run(flaky) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]  # not the progress bar
    assert len(err) == 1 and "got no reply from openai/standin" in err[0] and "max_failure_rate 0" in err[0]
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "a.csv").exists()
    failed = flaky.stats.requests - flaky.stats.ok
    before = flaky.stats.requests  # the same endpoint (the cache key names it), its faults gone
    flaky.cfg = dataclasses.replace(flaky.cfg, share_5xx=0.0)
    assert run(flaky) == 0 and (tmp_path / "a.jsonl").exists()
    assert flaky.stats.requests - before == failed  # the replies stored before the failure were not bought again


@pytest.fixture
def pauses(monkeypatch):
    """The backoff pauses the gateway asks for (computed as always, not slept: the test stays short)."""
    from pipeline.llm import retries

    asked, real = [], retries.backoff_s
    monkeypatch.setattr(retries, "backoff_s", lambda *a: asked.append(real(*a)) or 0.0)
    return asked


def test_a_malformed_reply_is_asked_again_at_once_not_after_a_backoff(tmp_path, standin):
    """Replies that are not the JSON asked for (a well-formed 200) are the model's words, not overload:
    retried without the rate-limit backoff. With a 30 s backoff, 4 tries of each of 4 questions at
    concurrency 4 take a few hundred ms, where the old 30-60-120 s backoff would have taken minutes."""
    from pipeline.answer.llm_answer import reply_problem

    server = standin(share_invalid=1.0, mean_latency_s=0.02)
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "backoff_s": 30, "max_retries": 3, "concurrency": 4, "timeout_s": 5}))
    gw.complete(req("warm-up"))  # litellm's lazy first-call initialisation is not what is timed
    t0 = time.perf_counter()
    threads = [threading.Thread(target=gw.complete, args=(req(f"m{i}"),), kwargs={"validate": reply_problem})
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.perf_counter() - t0 < 10
    assert gw.cache.get(gw.key(req("m0"))).text == INVALID_REPLY  # the model's words are kept, for replay
    assert server.stats.invalid == 4 * 4 + 1 and gw.stats.retries == 4 * 3  # (+1: the warm-up, not validated)


@pytest.mark.parametrize("fault", [{"share_5xx": 1.0}, {"share_429": 1.0, "retry_after_s": 2}, {"share_invalid": 1.0}])
def test_only_overload_and_transport_faults_back_off(tmp_path, standin, pauses, fault):
    """429 (after its Retry-After) and 5xx wait before the next try; a malformed reply does not."""
    from pipeline.answer.llm_answer import reply_problem

    server = standin(mean_latency_s=0.01, **fault)
    gw = LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"api_base": server.api_base, "backoff_s": 30, "max_retries": 3, "timeout_s": 5}))
    result = gw.complete(req("f"), validate=reply_problem)
    assert not result.ok and server.stats.requests == 4
    if "share_invalid" in fault:
        assert pauses == [] and result.text  # the model's words are kept
    elif "share_429" in fault:
        assert len(pauses) == 3 and all(2 <= p <= 2.3 for p in pauses)  # the provider's Retry-After
    else:
        assert len(pauses) == 3 and all(15 <= p <= 30 * 2**i for i, p in enumerate(pauses))  # exponential
