"""The LLM bench's local-model rows (#48 item 2) and the train-fold choice (#48 item 4), without a server:
llama.cpp's timing lines read from a server log, the rows shipped as the estimate's local speeds and the
estimate pricing a local model by its own row, and the choice's folds and rule on given scores."""
import json

import pandas as pd
import pytest

from pipeline.bench.llm_choice import Candidate, best, choose, folds
from pipeline.bench.llm_models import perf_totals
from pipeline.llm import speeds
from pipeline.llm.serving import LOCAL_PROMPT_TOK_S, local_speed
from pipeline.llm_models import LLMSpec

LOG = """INFO:     127.0.0.1:42640 - "POST /v1/chat/completions HTTP/1.1" 200 OK
llama_perf_context_print:        load time =    5701.48 ms
llama_perf_context_print: prompt eval time =    5701.41 ms /   392 tokens (   14.54 ms per token,    68.75 tokens per second)
llama_perf_context_print:        eval time =    6819.82 ms /    82 runs   (   83.17 ms per token,    12.02 tokens per second)
llama_perf_context_print:       total time =   12607.47 ms /   474 tokens
"""


def test_the_server_logs_timings_are_summed_after_the_offset(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("old " + LOG)
    offset = len("old ") + len(LOG)  # the warm-up's lines before it do not count
    log.write_text("old " + LOG + LOG + LOG)
    t = perf_totals([log], [offset])
    assert t == {"prompt_ms": 2 * 5701.41, "prompt_tokens": 784, "eval_ms": 2 * 6819.82, "eval_tokens": 164}


BENCH = {"cpu": "Test CPU", "cpus": 2, "measured": "2026-12-06", "rows": [
    {"model": "qwen", "threads": 1, "servers": 1, "prompt_tok_s": 40.0, "gen_tok_s": 10.0, "s_per_question": 30.0,
     "cpu_s_per_question": 29.0, "load_avg_before": 0.1, "load_avg_after": 1.0},
    {"model": "qwen", "threads": 2, "servers": 1, "prompt_tok_s": 70.0, "gen_tok_s": 16.0, "s_per_question": 18.0,
     "cpu_s_per_question": 35.0, "load_avg_before": 1.0, "load_avg_after": 2.0}]}


def test_shipped_rows_price_a_local_model_by_its_own_setting(tmp_path, monkeypatch):
    path = speeds.ship(BENCH, tmp_path / "speeds.json")
    assert json.loads(path.read_text())["qwen"]["t2-s1"]["load_avg"] == 2.0
    monkeypatch.setattr(speeds, "SHIPPED", path)
    llm = LLMSpec.from_dict({"local": {
        "qwen": {"package": "p{n}", "parts": 2, "gguf": "q.gguf", "n_threads": 2},
        "other": {"package": "o", "gguf": "o.gguf", "n_threads": 1}}})
    per_call, basis = local_speed(llm.resolve("local/qwen"), 2, 1400, 200)  # 700 prompt, 100 output tokens a call
    assert per_call == pytest.approx(700 / 70 + 100 / 16) and "70/16 tok/s" in basis and "Test CPU, load 2" in basis
    per_call, basis = local_speed(llm.resolve("local/other"), 1, 311, 53)  # no row: Gemma's constants
    assert per_call == pytest.approx(311 / LOCAL_PROMPT_TOK_S + 1) and "Gemma 3 270M" in basis
    assert speeds.speed_of("qwen", 1, 2, path)["prompt_tok_s"] == 40.0  # nearest: the same threads


def test_folds_are_seeded_and_balanced():
    ids = [f"q{i:03d}" for i in range(41)]
    f = folds(ids, 3, 0)
    assert f == folds(list(reversed(ids)), 3, 0)  # the order given does not matter
    assert sorted(pd.Series(f).value_counts()) == [13, 14, 14]


def test_the_choice_is_made_without_the_held_out_fold():
    ids = ["a", "b", "c", "d"]
    fold_of = {"a": 0, "b": 0, "c": 1, "d": 1}
    scores = {"k2": pd.Series([1.0, 1.0, 0.0, 0.0], index=ids), "k5": pd.Series([0.0, 0.0, 0.9, 0.9], index=ids)}
    out = choose(scores, {"k2": 100.0, "k5": 300.0}, fold_of)
    # fold 0 held out: chosen on c, d -> k5, which scores 0 on a, b; fold 1: chosen on a, b -> k2, 0 on c, d
    assert [(p["chosen"], p["held_out_score"]) for p in out["folds"]] == [("k5", 0.0), ("k2", 0.0)]
    assert out["chosen"] == "k2" and out["held_out_score"] == 0.0
    assert best({"x": 0.5, "y": 0.5}, {"x": 900.0, "y": 100.0}) == "y"  # a tie goes to fewer prompt tokens


def test_a_retry_candidate_asks_its_deeper_attempt_as_the_wider_candidate():
    r1, wide = Candidate(2, 400, 1).variant("local/m"), Candidate(4, 400).variant("local/m")
    assert r1["max_retries"] == 1 and {**r1, "max_retries": 0, "context_k": 4} == wide


@pytest.mark.local_llm
def test_a_row_is_measured_on_a_real_server(tmp_path, wattbot_dir):
    """Gemma 3 270M (in the set-up) answers two train questions through the project's prompt at 1 thread, 1
    server and at 1 thread, 2 servers: every figure of a row comes out of the run (tokens from the replies,
    rates from llama.cpp's own timing lines, CPU from /proc), and the table renders them."""
    from pipeline.bench.llm_models import Rows, run_local_models_bench
    from pipeline.datasets.paths import REPO
    from pipeline.io import atomic_write_jsonl
    from pipeline.publish.bench_doc import llm_models_table

    train = pd.read_csv(wattbot_dir / "train_QA.csv", dtype=str).head(2)
    text = "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e, the paper reports in its table."
    hits = [{"node_id": "n1", "doc_id": "patterson2021", "text": text, "context": text, "context_id": "n1"}]
    atomic_write_jsonl(tmp_path / "r.jsonl", [{"id": q, "hits": hits} for q in train["id"]])
    rows = Rows(questions=2, settings=((1, 1), (1, 2)), work=str(tmp_path / "logs"))
    figures = run_local_models_bench(REPO / "config.yaml", ["gemma3-270m"], tmp_path / "r.jsonl", rows)
    assert [(r["threads"], r["servers"], r["questions"]) for r in figures["rows"]] == [(1, 1, 2), (1, 2, 2)]
    for r in figures["rows"]:
        assert r["prompt_tok_s"] > 0 and r["gen_tok_s"] > 0 and r["cpu_s_per_question"] > 0
        assert r["prompt_tokens_per_question"] > 100 and r["s_per_question"] > 0
    assert "| gemma3-270m | 1 | 2 |" in llm_models_table(figures)


@pytest.mark.local_llm
def test_a_server_started_in_a_batchs_worker_thread_outlives_it(tmp_path):
    """A local server started by a call inside a worker pool still serves after that pool's thread ends (it was
    SIGKILLed with the thread: PR_SET_PDEATHSIG follows the forking thread; pipeline/llm/bound_child.py), so a
    gateway running many batches (the choice run) keeps its server."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    import pipeline.register_builtins  # noqa: F401  (the local kind of serving)
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO
    from pipeline.llm.gateway import LLMGateway

    llm = LLMSpec.from_dict(load_config(REPO / "config.yaml")["llm"])
    with LLMGateway(tmp_path / "a.sqlite", llm) as gw:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(gw.open, "local/gemma3-270m").result()
        time.sleep(2)
        server = gw.connections["local/gemma3-270m"].servers[0]
        assert server.proc.poll() is None, f"killed with its thread (exit {server.proc.returncode})"
        server.wait_ready()  # and it answers
