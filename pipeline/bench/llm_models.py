"""The LLM bench's rows for local models (#48 item 2): what a question costs at 1 and 2 threads and servers.

Why: which grid can afford which local model is decided from these figures, and the estimate prices a
local model's calls by them (:mod:`pipeline.llm.speeds`). A row is one (model, threads per server, servers)
setting answering the same real requests: the first N train questions through the project's own prompt
(context-first, ``context_k`` snippets of ``snippet_chars`` from the hier-convex retrieval records), the
answer schema as a grammar, greedy decoding, ``max_tokens`` as config.yaml's LLM variants. Per row: prompt
and generated tokens/s (llama.cpp's own timings, from the server log), seconds a question (wall time of
the batch / questions: with 2 servers, two questions in flight), CPU-s a question (the server processes'
user+system time, /proc), and the load average around it. Figures only mean something on idle cores:
``make bench-llm-models`` runs it alone, and the rows record the load average around each.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from pipeline.answer.llm_answer import answer_schema, build_messages, response_format, select_snippets
from pipeline.config import load_config
from pipeline.io import read_jsonl
from pipeline.llm.local_server import LocalServer, assemble_model, start_all
from pipeline.llm_models import LLMSpec, LocalModelSpec
from pipeline.workflow.wattbot import split_source

SETTINGS = ((1, 1), (2, 1), (1, 2))  # (threads per server, servers): what fits 2 cores
PARAMS = {"temperature": 0, "max_tokens": 160}  # config.yaml's LLM variants'
PERF = re.compile(
    r"(prompt eval|\s{7}eval) time =\s+([\d.]+) ms /\s+(\d+) (?:tokens|runs)"
)  # llama.cpp's llama_perf_context_print lines


@dataclass(frozen=True)
class Request:
    """One question's request body (without ``model``) as the answer path sends it."""

    id: str
    body: dict


def requests_of(
    questions: pd.DataFrame, retrieval: list[dict], model: str, context_k: int, snippet_chars: int
) -> list[Request]:
    hits = {r["id"]: r["hits"] for r in retrieval}
    out = []
    for q in questions.itertuples(index=False):
        shown = select_snippets(hits[q.id], context_k)
        schema = answer_schema(sorted({h["doc_id"] for h in shown}))
        body = {
            "messages": build_messages("context_first", q.question, q.answer_unit, shown, snippet_chars),
            "response_format": response_format(model, schema),
            **PARAMS,
        }
        out.append(Request(q.id, body))
    return out


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def perf_totals(logs: Sequence[Path], offsets: Sequence[int]) -> dict[str, float]:
    """Prompt and generated tokens and llama.cpp's milliseconds for them, summed over the log lines
    written after ``offsets`` (each log's size before the batch)."""
    t = {"prompt_ms": 0.0, "prompt_tokens": 0.0, "eval_ms": 0.0, "eval_tokens": 0.0}
    for log, offset in zip(logs, offsets, strict=True):
        with open(log, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
        for kind, ms, n in PERF.findall(text):
            key = "prompt" if kind == "prompt eval" else "eval"
            t[f"{key}_ms"] += float(ms)
            t[f"{key}_tokens"] += int(n)
    return t


def post(server: LocalServer, body: dict) -> dict:
    req = urllib.request.Request(
        f"{server.api_base}/chat/completions",
        json.dumps({"model": server.name, **body}).encode(),
        {**server.headers, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=3600) as resp:
        return json.loads(resp.read())


def measure(spec: LocalModelSpec, threads: int, servers: int, requests: list[Request], work: Path) -> dict:
    """One row: ``servers`` servers of ``threads`` threads answer every request, ``servers`` in flight."""
    local = replace(spec, n_threads=threads)
    pool = start_all([LocalServer(local, work / f"{spec.name}-t{threads}-s{servers}-{i}.log") for i in range(servers)])
    try:
        for s in pool:
            post(s, requests[0].body)  # warm: the model's pages in memory, the grammar's first compile
        logs = [s.log_path for s in pool]
        offsets = [p.stat().st_size for p in logs]
        cpu0 = sum(cpu_s(s.proc.pid) for s in pool if s.proc)
        load0, t0 = os.getloadavg()[0], time.perf_counter()
        with ThreadPoolExecutor(servers) as ex:
            replies = list(ex.map(lambda ir: post(pool[ir[0] % servers], ir[1].body), enumerate(requests)))
        wall = time.perf_counter() - t0
        cpu = sum(cpu_s(s.proc.pid) for s in pool if s.proc) - cpu0
        load1 = os.getloadavg()[0]
        time.sleep(0.5)  # the server prints its timings after the reply
        perf = perf_totals(logs, offsets)
    finally:
        for s in pool:
            s.stop()
    n = len(requests)
    return {
        "model": spec.name,
        "threads": threads,
        "servers": servers,
        "questions": n,
        "prompt_tokens_per_question": round(sum(r["usage"]["prompt_tokens"] for r in replies) / n, 1),
        "completion_tokens_per_question": round(sum(r["usage"]["completion_tokens"] for r in replies) / n, 1),
        "prompt_tok_s": round(perf["prompt_tokens"] / perf["prompt_ms"] * 1000, 1) if perf["prompt_ms"] else None,
        "gen_tok_s": round(perf["eval_tokens"] / perf["eval_ms"] * 1000, 1) if perf["eval_ms"] else None,
        "s_per_question": round(wall / n, 2),
        "cpu_s_per_question": round(cpu / n, 2),
        "load_avg_before": round(load0, 2),
        "load_avg_after": round(load1, 2),
    }


def cpu_name() -> str:
    """The CPU's model name (/proc/cpuinfo), else the platform's word for it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@dataclass(frozen=True)
class Rows:
    """Which rows: the requests (questions, snippets shown, their characters) and the settings timed."""

    questions: int = 8
    context_k: int = 2  # config.yaml's llm-cf
    snippet_chars: int = 400
    settings: Sequence[tuple[int, int]] = SETTINGS
    work: str = "data/cache/bench-llm-models"  # the servers' logs (their timings are read from them)


def run_local_models_bench(
    config_path: str | Sequence[str], models: Sequence[str], retrieval: str | Path, rows_of: Rows = Rows()
) -> dict:
    """Every (threads, servers) row of every ``llm.local`` model named, on the same requests."""
    questions, context_k, snippet_chars, settings, work = (
        rows_of.questions,
        rows_of.context_k,
        rows_of.snippet_chars,
        rows_of.settings,
        rows_of.work,
    )
    cfg = load_config(config_path)
    llm = LLMSpec.from_dict(cfg["llm"])
    qs = pd.read_csv(split_source(cfg, "train"), dtype=str, keep_default_na=False).head(questions)
    records = read_jsonl(retrieval)
    Path(work).mkdir(parents=True, exist_ok=True)
    rows = []
    for name in models:
        spec = llm.local[name]
        spec = replace(spec, gguf=str(assemble_model(spec)))
        reqs = requests_of(qs, records, f"local/{name}", context_k, snippet_chars)
        for threads, servers in settings:
            rows.append(measure(spec, threads, servers, reqs, Path(work)))
            print(json.dumps(rows[-1]), flush=True)
    return {
        "cpu": cpu_name(),
        "cpus": os.cpu_count(),
        "split": "train",
        "context_k": context_k,
        "snippet_chars": snippet_chars,
        "params": PARAMS,
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "rows": rows,
    }
