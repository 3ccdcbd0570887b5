"""`make bench-llm`: LLM answering at the scale of a real reproduction, through the provider stand-in.

The 282 WattBot test questions, a 5-sample ensemble with 1 blank-retry, at concurrency 32
against :mod:`pipeline.bench.standin` (a separate process, so its threads do not share the
client's interpreter lock) with lognormal latency (mean 1 s, chosen to keep the benchmark short;
hosted models take 2-5 s, which only scales the wall time), 5% 429s with ``Retry-After``,
1% 5xx, 0.5% stalled requests (10 s client timeout) and 0.5% cut-off JSON bodies. Prints calls,
wall time, the ideal time (distinct calls × mean latency / concurrency, or distinct calls / rate
limit if that is higher), their ratio, retries,
429s honoured, calls lost, and the time of the rerun from the cache, against the targets; writes
them to ``reports/bench/llm.json`` (:func:`pipeline.publish.bench_doc.render_llm_bench` makes the README's generated block).

Retrieval is not what this measures: every question is shown the same three real document
titles as context snippets (the stand-in's answers cite the first), so the run needs no index.
One row times the LLM query planner over the same questions at the same concurrency (its calls
only: the searches after it take no model).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.answer.failures import unanswered_ids
from pipeline.answer.run import AnswerJob, answer_split
from pipeline.bench.standin import StandInConfig
from pipeline.config import load_config
from pipeline.datasets.wattbot import load_metadata
from pipeline.llm.gateway import LLMGateway, LLMRequest
from pipeline.llm_models import LLMSpec
from pipeline.publish.bench_doc import render_llm_bench, render_llm_local, save_bench
from pipeline.registry.answer_backends import variant_spec
from pipeline.specs import PlannerSpec
from pipeline.workflow import split_source

STANDIN = {
    "mean_latency_s": 1.0,
    "latency_sigma": 0.5,
    "share_429": 0.05,
    "retry_after_s": 1.0,
    "share_5xx": 0.01,
    "share_stall": 0.005,
    "stall_s": 30.0,
    "share_malformed": 0.005,
    "share_blank": 0.2,
    "seed": 13,
    "max_requests": 20000,
    "max_seconds": 900,
}
CLIENT = {"mode": "live", "timeout_s": 10, "max_retries": 6, "backoff_s": 0.5, "max_backoff_s": 10, "concurrency": 32}
VARIANT: dict[str, Any] = {
    "backend": "llm",
    "model": "openai/standin",
    "samples": 5,
    "max_retries": 1,
    "context_k": 2,
    "vote": {"mode": "answer_priority"},
}
TARGETS = {"ratio": 1.3, "rerun_s": 10.0, "calls_lost": 0}


def start_standin(standin: StandInConfig, work: Path) -> tuple[subprocess.Popen, str]:
    """The stand-in as its own process; waits until it listens and returns it with its api_base."""
    port_file = work / "standin.port"
    params = json.dumps(asdict(standin))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "standin", "--port-file", str(port_file), "--params", params],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"stand-in did not start: {proc.stderr.read().decode()[-500:] if proc.stderr else ''}")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port_file.read_text().strip()}/v1"


def standin_stats(api_base: str) -> dict:
    with urllib.request.urlopen(f"{api_base}/stats", timeout=10) as resp:
        return json.loads(resp.read())


def bench_inputs(
    questions_csv: str | Path, wattbot_dir: str | Path, n_questions: int | None = None
) -> tuple[pd.DataFrame, list[dict], set[str]]:
    """The test questions, a fixed three-snippet context per question, the known document ids."""
    questions = pd.read_csv(questions_csv, dtype=str, keep_default_na=False)
    if n_questions:
        questions = questions.head(n_questions)
    meta = load_metadata(Path(wattbot_dir) / "metadata.csv").astype(str)
    docs = meta.head(3)
    hits = [
        {"node_id": f"{d.id}:title", "doc_id": d.id, "text": d.title, "context": d.title, "context_id": f"{d.id}:title"}
        for d in docs.itertuples(index=False)
    ]
    return questions, [{"id": q, "hits": hits} for q in questions["id"]], set(meta["id"])


def run_llm_bench(
    config_path: str | Sequence[str] = "config.yaml",
    reports_dir: str | Path = "reports",
    n_questions: int | None = None,
    standin: dict | None = None,
    client: dict | None = None,
) -> dict:
    cfg = load_config(config_path)
    standin, client = {**STANDIN, **(standin or {})}, {**CLIENT, **(client or {})}
    questions, retrieval, known = bench_inputs(split_source(cfg, "test"), cfg["wattbot"]["dir"], n_questions)
    os.environ.setdefault("OPENAI_API_KEY", "sk-standin-no-real-key")  # litellm's openai client wants one
    with tempfile.TemporaryDirectory() as tmp:
        proc, api_base = start_standin(StandInConfig(**standin), Path(tmp))
        try:
            llm = LLMSpec.from_dict({**client, "api_base": api_base})
            spec = variant_spec("", VARIANT)
            with LLMGateway(Path(tmp) / "llm.sqlite", llm) as gw:
                t0 = time.perf_counter()  # litellm initialises lazily on its first call (seconds): not throughput
                gw.complete(LLMRequest(VARIANT["model"], [{"role": "user", "content": "warm-up"}]))
                warmup = time.perf_counter() - t0
                before = standin_stats(api_base)["requests"]
                t0 = time.perf_counter()
                first = answer_split(retrieval, questions, spec, AnswerJob(gw.settings, tmp, known, False, gateway=gw))
                wall = time.perf_counter() - t0
                stats, distinct = asdict(gw.stats), len(gw.cache) - 1
            served = standin_stats(api_base)
            total, served["requests"] = served["requests"], served["requests"] - before
            with LLMGateway(Path(tmp) / "llm.sqlite", llm) as gw:
                t0 = time.perf_counter()
                again = answer_split(retrieval, questions, spec, AnswerJob(gw.settings, tmp, known, False, gateway=gw))
                rerun = time.perf_counter() - t0
            rerun_calls = standin_stats(api_base)["requests"] - total
            planner = planner_wall(questions, llm, tmp)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    ideal = distinct * standin["mean_latency_s"] / client["concurrency"]
    limits = [r for r in (client.get("requests_per_minute"), standin.get("requests_per_minute")) if r]
    if limits:  # a rate limit can bind before the concurrency does
        ideal = max(ideal, distinct / (min(limits) / 60))
    out = {
        "questions": len(questions),
        "samples": VARIANT["samples"],
        "blank_retries": VARIANT["max_retries"],
        "concurrency": client["concurrency"],
        "standin": standin,
        "client": client,
        "calls": served["requests"],
        "distinct_calls": distinct,
        "wall_s": round(wall, 1),
        "warmup_s": round(warmup, 1),
        "ideal_s": round(ideal, 1),
        "ratio": round(wall / ideal, 3),
        "retries": stats["retries"],
        "rate_limited": served["rate_limited"],
        "retry_after_honoured": stats["retry_after_honoured"],
        "server_errors": served["server_errors"],
        "stalled": served["stalled"],
        "malformed": served["malformed"],
        "calls_lost": len(unanswered_ids(first)),
        "rerun_s": round(rerun, 2),
        "rerun_calls": rerun_calls,
        "rerun_identical": json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True),
        "planner_wall_s": round(planner, 1),
        "planner_ideal_s": round(len(questions) * standin["mean_latency_s"] / client["concurrency"], 1),
        "targets": TARGETS,
        "cpus": os.cpu_count(),
    }
    path = save_bench(out, Path(reports_dir), "llm", {"config": config_path, "variant": VARIANT})
    print(render_llm_bench(Path(reports_dir)))
    print(f"(written to {path})")
    return out


def planner_wall(questions: pd.DataFrame, llm: LLMSpec, cache_dir: str) -> float:
    """Seconds the LLM query planner takes to plan every question (4 queries: 3 asked of the model),
    its calls concurrent as a retrieval job makes them (pipeline/retrieve/planner.py)."""
    from pipeline.retrieve.planner import LLMPlanner

    with LLMGateway(Path(cache_dir) / "planner" / "llm.sqlite", llm) as gw:
        planner = LLMPlanner(gw, PlannerSpec.from_dict({"kind": "llm", "model": VARIANT["model"], "n": 4}))
        t0 = time.perf_counter()
        planner.plan_all(list(questions["question"]), list(questions["answer_unit"]), progress=False)
        return time.perf_counter() - t0


def run_local_servers_bench(
    config_path: str | Sequence[str] = "config.yaml",
    reports_dir: str | Path = "reports",
    calls: int = 4,
    model: str = "gemma3-270m",
) -> dict:
    """Does a second llama-cpp-python server process raise local throughput (0.3.x has no parallel
    slots)? ``calls`` short generations one after another on one server, then spread over two
    servers by two threads; figures to ``reports/bench/llm_local.json``."""
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    from pipeline.llm.local_server import LocalServer, assemble_model

    spec = LLMSpec.from_dict(load_config(config_path)["llm"]).local[model]
    spec = replace(spec, gguf=str(assemble_model(spec)))
    prompts = [f"Name three uses of energy number {i}. Answer in one sentence." for i in range(calls)]

    def ask(server: LocalServer, prompt: str) -> None:
        body = json.dumps(
            {
                "model": model,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": 32,
                "temperature": 0,
                "seed": 0,
            }
        ).encode()
        req = urllib.request.Request(
            f"{server.api_base}/chat/completions", body, {**server.headers, "Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=600) as resp:
            resp.read()

    with tempfile.TemporaryDirectory() as tmp:
        servers = [LocalServer(spec, Path(tmp) / f"server{i}.log").start() for i in range(2)]
        try:
            for s in servers:
                ask(s, "warm up")
            t0 = time.perf_counter()
            for p in prompts:
                ask(servers[0], p)
            one = time.perf_counter() - t0
            t0 = time.perf_counter()
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(lambda ip: ask(servers[ip[0] % 2], ip[1]), enumerate(prompts)))
            two = time.perf_counter() - t0
        finally:
            for s in servers:
                s.stop()
    out = {
        "calls": calls,
        "max_tokens": 32,
        "n_threads": spec.n_threads,
        "cpus": os.cpu_count(),
        "load_avg_1min": round(os.getloadavg()[0], 1),
        "one_server_s": round(one, 1),
        "two_servers_s": round(two, 1),
        "speedup": round(one / two, 2),
    }
    save_bench(out, Path(reports_dir), "llm_local", {"config": config_path, "model": model, "calls": calls})
    print(render_llm_local(Path(reports_dir)))
    return out
