"""What a run's LLM calls will cost before it starts: calls x tokens x price, and a wall time.

Printed by the Snakefile before any job (``print_estimate``) and by ``python -m pipeline estimate``.
How the figures are made (an estimate, said so in the printout):

- calls: for each LLM answering variant and each split it answers, questions x samples, from
  one attempt per sample (no blank-retry) up to ``1 + max_retries`` attempts (every attempt
  blank); plus one planner call per question for each retrieval variant with an LLM planner
  (each split some variant reads it for, and the scored split, which the report always reads);
- prompt tokens: the real prompt built for every real question of the split, with its snippets
  filled to ``snippet_chars`` (the prompt's 12000-character cap when unset), attempt a showing
  ``context_k * (a + 1)`` snippets, plus the JSON schema sent as ``response_format``; counted
  as characters / 4 (the usual rule of thumb for English, no tokenizer download needed);
- completion tokens: the variant's ``params.max_tokens`` (an upper bound), else 300 per answer
  and 100 per planner reply (assumed);
- price: litellm's local price map (``litellm.model_cost``); a model it does not list is shown
  as unpriced, never as free (local models cost 0);
- time: calls x 3 s (an assumed hosted latency, the middle of the 2-5 s typical of hosted
  chat models) / ``llm.concurrency`` (1 when unset). Cached replies are neither paid nor waited for:
  the figures are for a cold cache.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from pipeline.answer_backends import calls_llm
from pipeline.config import answer_splits
from pipeline.specs import AnswerSpec, as_answer_spec

CHARS_PER_TOKEN = 4
ANSWER_COMPLETION_TOKENS = 300
PLANNER_COMPLETION_TOKENS = 100
ASSUMED_LATENCY_S = 3.0
CONTEXT_CAP_CHARS = 12000
LOCAL_PREFIXES = ("local/",)


@dataclass
class Line:
    """One variant x split: its calls (no retry .. every retry) and tokens at those two bounds."""

    what: str
    model: str
    split: str
    questions: int
    calls: tuple[int, int]
    prompt_tokens: tuple[int, int]
    completion_tokens: tuple[int, int]
    usd: tuple[float, float] | None = None  # None: the model has no price in litellm's map


@dataclass
class Estimate:
    lines: list[Line] = field(default_factory=list)
    concurrency: int = 1

    def total(self, key: str, i: int) -> float:
        return sum(getattr(line, key)[i] for line in self.lines if getattr(line, key) is not None)

    @property
    def unpriced(self) -> list[str]:
        return sorted({line.model for line in self.lines if line.usd is None})

    def hours(self, i: int) -> float:
        return self.total("calls", i) * ASSUMED_LATENCY_S / self.concurrency / 3600


def tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def price_per_token(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's local price map; (0, 0) for local models."""
    if model.startswith(LOCAL_PREFIXES):
        return 0.0, 0.0
    import litellm

    info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
    if not info or info.get("input_cost_per_token") is None:
        return None
    return float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0.0)


def _questions(cfg: dict, split: str) -> pd.DataFrame:
    path = Path(cfg["wattbot"]["dir"]) / cfg["wattbot"]["splits"][split]
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _filler_hits(n: int, chars: int) -> list[dict]:
    body = ("lorem ipsum " * (chars // 12 + 1))[:chars]
    return [{"node_id": f"n{i}", "doc_id": f"doc{i % 30}", "text": body, "context": body} for i in range(n)]


def answer_prompt_tokens(v: AnswerSpec | dict, model: str, question: str, unit: str, attempt: int) -> int:
    """Tokens of the prompt (and schema) variant ``v`` sends for this question at ``attempt``."""
    s = as_answer_spec(v)
    return _prompt_tokens(s.prompt, s.context_k, s.snippet_chars, s.structured, model, question, unit, attempt)


@cache  # runs that differ only by model or seed share their prompts
def _prompt_tokens(
    prompt: str,
    context_k: int | None,
    snippet_chars: int | None,
    structured: bool,
    model: str,
    question: str,
    unit: str,
    attempt: int,
) -> int:
    from pipeline.answer.llm_answer import answer_schema, build_messages, response_format

    chars = snippet_chars or CONTEXT_CAP_CHARS
    k = context_k * (attempt + 1) if context_k else CONTEXT_CAP_CHARS // chars + 1
    messages = build_messages(prompt, question, unit, _filler_hits(k, chars), snippet_chars)
    schema = json.dumps(response_format(model, answer_schema([]))) if structured else ""
    return sum(tokens(m["content"]) for m in messages) + tokens(schema)


def _usd(model: str, prompt: int, completion: int) -> float | None:
    price = price_per_token(model)
    return None if price is None else prompt * price[0] + completion * price[1]


def answer_line(cfg: dict, name: str, split: str) -> Line:
    v = AnswerSpec.from_dict(name, cfg["answering"][name])
    model = v.resolved_model(cfg["llm"].get("model"))
    if model is None:
        raise ValueError(f"answering variant {name!r} names no model and llm.model is not set")
    qs = _questions(cfg, split)
    samples, retries = v.samples, v.max_retries
    completion = int(v.params.get("max_tokens") or ANSWER_COMPLETION_TOKENS)
    per_attempt = [
        sum(answer_prompt_tokens(v, model, q.question, q.answer_unit, a) for q in qs.itertuples())
        for a in range(retries + 1)
    ]
    lo_p, hi_p = samples * per_attempt[0], samples * sum(per_attempt)
    calls = (len(qs) * samples, len(qs) * samples * (retries + 1))
    comp = (calls[0] * completion, calls[1] * completion)
    lo, hi = _usd(model, lo_p, comp[0]), _usd(model, hi_p, comp[1])
    return Line(
        f"answer {name}",
        model,
        split,
        len(qs),
        calls,
        (lo_p, hi_p),
        comp,
        None if lo is None or hi is None else (lo, hi),
    )  # one model: both priced or neither


def planner_lines(cfg: dict) -> list[Line]:
    from pipeline.retrieve.planner import LLMPlanner

    out = []
    for rv, r in sorted(cfg["retrieval"].items()):
        planner = r.get("planner") or {}
        if planner.get("kind") != "llm" or planner.get("n", 1) < 2:
            continue
        splits = {cfg["wattbot"]["score_split"]}
        for av, a in cfg["answering"].items():
            if a.get("retrieval") == rv and a["backend"] != "ensemble":
                splits |= set(answer_splits(cfg, av))
        model = planner.get("model") or cfg["llm"]["model"]
        p = LLMPlanner(None, model, planner["n"], planner.get("params"))
        for split in sorted(splits):
            qs = _questions(cfg, split)
            prompt = sum(tokens(p.messages(q.question, q.answer_unit)[0]["content"]) for q in qs.itertuples())
            completion = int((planner.get("params") or {}).get("max_tokens") or PLANNER_COMPLETION_TOKENS) * len(qs)
            usd = _usd(model, prompt, completion)
            out.append(
                Line(
                    f"planner {rv}",
                    model,
                    split,
                    len(qs),
                    (len(qs), len(qs)),
                    (prompt, prompt),
                    (completion, completion),
                    None if usd is None else (usd, usd),
                )
            )
    return out


def estimate(cfg: dict) -> Estimate:
    """The estimate for a validated config (see the module docstring for how)."""
    lines = planner_lines(cfg)
    for name in sorted(cfg["answering"]):
        if calls_llm(cfg["answering"][name]["backend"]):
            lines += [answer_line(cfg, name, split) for split in answer_splits(cfg, name)]
    return Estimate(lines, int(cfg["llm"].get("concurrency") or 1))


def _range(lo: float, hi: float, fmt: str = "{:,.0f}") -> str:
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def format_estimate(est: Estimate) -> str:
    rows = [f"{'LLM work':34} {'model':28} {'split':6} {'calls':>13} {'prompt tok':>21} {'output tok':>19} {'USD':>15}"]
    for x in est.lines:
        usd = "unpriced" if x.usd is None else _range(*x.usd, fmt="{:,.2f}")
        rows.append(
            f"{x.what[:34]:34} {x.model[:28]:28} {x.split:6} {_range(*x.calls):>13} "
            f"{_range(*x.prompt_tokens):>21} {_range(*x.completion_tokens):>19} {usd:>15}"
        )
    usd = _range(est.total("usd", 0), est.total("usd", 1), fmt="{:,.2f}")
    rows.append(
        f"total: {_range(est.total('calls', 0), est.total('calls', 1))} calls, about USD {usd}"
        + (f" plus unpriced {', '.join(est.unpriced)}" if est.unpriced else "")
        + f"; about {_range(est.hours(0), est.hours(1), fmt='{:.1f}')} h at {ASSUMED_LATENCY_S:g} s per call "
        f"and concurrency {est.concurrency}"
    )
    rows.append(
        "(a cold-cache estimate: ranges go from no blank-retry to every retry; tokens = characters/4 of "
        "the real prompts; prices from litellm's local map; see pipeline/estimate.py)"
    )
    return "\n".join(rows)


def print_estimate(cfg: dict, stream=None) -> Estimate | None:
    """Print the estimate before a run (to stderr, so dry-run output stays parseable); nothing
    when the grid makes no LLM call."""
    est = estimate(cfg)
    if est.lines:
        replay = (
            "\n(llm.mode is replay: every reply comes from the cache, nothing is paid)"
            if cfg["llm"].get("mode") == "replay"
            else ""
        )
        print(format_estimate(est) + replay, file=stream or sys.stderr)
    return est if est.lines else None
