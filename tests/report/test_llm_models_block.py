"""docs/llm.md's ``llm-models`` block: the LLM bench's local-model rows (reports/bench/llm_models.json, written by
`make bench-llm-models`) rendered with the CPU, the requests and the load they were measured at."""
from pipeline.publish.bench_doc import save_bench
from pipeline.publish.readme import BEGIN, END, fill

ROW = {"model": "qwen2.5-coder-1.5b", "threads": 2, "servers": 1, "questions": 8, "prompt_tok_s": 61.2,
       "gen_tok_s": 9.8, "s_per_question": 14.1, "cpu_s_per_question": 27.9, "prompt_tokens_per_question": 402.5,
       "completion_tokens_per_question": 70.1, "load_avg_before": 0.12, "load_avg_after": 1.9}
FIGURES = {"cpu": "Intel(R) Xeon(R) Processor", "cpus": 2, "split": "train", "context_k": 2, "snippet_chars": 400,
           "params": {"temperature": 0, "max_tokens": 160}, "measured": "2026-12-07", "rows": [ROW]}


def test_the_llm_models_block_renders_each_row_with_where_it_was_measured(tmp_path):
    reports = tmp_path / "reports"
    save_bench(FIGURES, reports, "llm_models", {"models": ["qwen2.5-coder-1.5b"]})
    text = f"a\n{BEGIN.format('llm-models')}\nold\n{END.format('llm-models')}\nb\n"
    out = fill(text, reports)
    assert "from `reports/bench/llm_models.json` (commit `" in out and "\nold\n" not in out
    assert "Intel(R) Xeon(R) Processor, 2 CPUs, 2026-12-07: the first 8 train questions, context_k 2 x 400" in out
    assert "| qwen2.5-coder-1.5b | 2 | 1 | 61.2 | 9.8 | 14.1 | 27.9 | 402.5 | 70.1 | 0.12, 1.9 |" in out
    assert fill(out, reports) == out
