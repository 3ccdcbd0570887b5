"""Local models' measured token speeds, shipped with the code: what the estimate prices a local call by.

Why: a 1.5B model reads prompts several times slower than Gemma 3 270M, so one pair of constants for
every local model would under-price the ones that read (#48 item 2). The LLM bench's local-model rows
(``python -m pipeline bench --llm-models``, :mod:`pipeline.bench.llm_models`) are written here with
``--ship``: per model and (threads per server, servers), prompt and generated tokens/s, the CPU and the
load average they were measured at. A model or setting without a row falls back to the nearest row of
the model (same threads, else any), then to the constants of pipeline/llm/serving.py.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

SHIPPED = Path(__file__).with_name("local_speeds.json")


def setting(threads: int, servers: int) -> str:
    return f"t{threads}-s{servers}"


def speeds_from_bench(bench: dict) -> dict:
    """The shipped file's content from a bench's figures: model -> setting -> speeds and where measured."""
    out: dict[str, dict] = {}
    for r in bench["rows"]:
        if r.get("prompt_tok_s") and r.get("gen_tok_s"):
            out.setdefault(r["model"], {})[setting(r["threads"], r["servers"])] = {
                "prompt_tok_s": r["prompt_tok_s"],
                "gen_tok_s": r["gen_tok_s"],
                "s_per_question": r["s_per_question"],
                "cpu_s_per_question": r["cpu_s_per_question"],
                "load_avg": max(r["load_avg_before"], r["load_avg_after"]),
                "cpu": bench["cpu"],
                "cpus": bench["cpus"],
                "measured": bench["measured"],
            }
    return out


def ship(bench: dict, path: Path | None = None) -> Path:
    """Merge a bench's rows into the shipped file (rows of models it did not measure stay)."""
    from pipeline.io import atomic_write_json

    path = path or SHIPPED
    current = json.loads(path.read_text()) if path.exists() else {}
    for model, rows in speeds_from_bench(bench).items():
        current[model] = {**current.get(model, {}), **rows}
    atomic_write_json(path, dict(sorted(current.items())))
    load_speeds.cache_clear()
    return path


@cache
def load_speeds(path: Path = SHIPPED) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def speed_of(model: str, threads: int, servers: int, path: Path | None = None) -> dict | None:
    """The measured row of ``llm.local`` model ``model`` nearest this setting (default file: the shipped
    one); None when it has none."""
    rows = load_speeds(path or SHIPPED).get(model) or {}
    if not rows:
        return None
    key = setting(threads, servers)
    same_threads = sorted(k for k in rows if k.startswith(f"t{threads}-"))
    return rows.get(key) or (rows[same_threads[0]] if same_threads else rows[sorted(rows)[0]])
