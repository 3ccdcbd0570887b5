"""What a run's LLM calls will cost before it starts: calls x tokens x price, and a wall time.

Printed by the Snakefile before any job (``print_estimate``) and by ``python -m pipeline estimate``,
so a paid run's spend is decided before it begins. An estimate, and said so in the printout: the
real prompts of the real questions, counted as characters / 4; completion tokens at their bound or
an assumed size; prices from ``llm.prices`` or litellm's map (an unpriced model is never shown as
free); wall time per model from its concurrency and rate limits, for a cold cache. How each figure
is made and the assumed constants: docs/reproduce-kohakurag.md ("The estimate").
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from pipeline.llm.limits import text_tokens
from pipeline.llm.prices import price_per_token
from pipeline.llm.work import LLMWork
from pipeline.llm_models import ModelSpec
from pipeline.provenance import stable_hash
from pipeline.registry.answer_backends import LLMCallsSpec, VariantSpec
from pipeline.registry.answer_backends import get as get_backend

ANSWER_COMPLETION_TOKENS = 300
PLANNER_COMPLETION_TOKENS = 100


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
    usd: tuple[float, float] | None = None  # None: nothing prices the model (llm.prices, litellm's map)
    mocked: bool = False  # params.mock_response: litellm answers, no call leaves
    shared: int = 0  # requests an earlier line sends too (every retry taken): a cache hit, not counted


@dataclass(frozen=True)
class ModelTime:
    """How long one model's calls take: per-call seconds (None: unknown) over its concurrency, or
    its requests/tokens-per-minute limits when they bind first."""

    model: str
    concurrency: int
    per_call_s: float | None
    basis: str  # where per_call_s comes from, for the printout
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def hours(self, calls: float, tokens: float) -> float | None:
        if self.per_call_s is None:
            return None
        s = calls * self.per_call_s / self.concurrency
        if self.requests_per_minute:
            s = max(s, calls / self.requests_per_minute * 60)
        if self.tokens_per_minute:
            s = max(s, tokens / self.tokens_per_minute * 60)
        return s / 3600


@dataclass
class Estimate:
    lines: list[Line] = field(default_factory=list)
    times: dict[str, ModelTime] = field(default_factory=dict)  # model -> its timing
    limit: int | None = None  # a smoke run's: every line counts the first N questions of its split

    def total(self, key: str, i: int) -> float:
        return sum(getattr(line, key)[i] for line in self.lines if getattr(line, key) is not None)

    @property
    def unpriced(self) -> list[str]:
        return sorted({line.model for line in self.lines if line.usd is None})

    def model_hours(self, model: str, i: int) -> float | None:
        lines = [x for x in self.lines if x.model == model]
        calls = sum(x.calls[i] for x in lines)
        return self.times[model].hours(calls, sum(x.prompt_tokens[i] + x.completion_tokens[i] for x in lines))

    def hours(self, i: int) -> float:
        """Every model's hours one after another (models of unknown speed left out: :attr:`untimed`)."""
        return sum(h for m in self.times if (h := self.model_hours(m, i)) is not None)

    @property
    def untimed(self) -> list[str]:
        return sorted(m for m, t in self.times.items() if t.per_call_s is None)


def model_time(model: ModelSpec, lines: list[Line]) -> ModelTime:
    """A model's timing: a mocked model at 0, else as its kind of serving takes a call (hosted models
    at the assumed latency, local models at the measured token speeds of their lines' mean call)."""
    rpm, tpm = model.requests_per_minute, model.tokens_per_minute
    if all(x.mocked for x in lines):
        return ModelTime(model.name, model.concurrency, 0.0, "mocked", rpm, tpm)
    calls = sum(x.calls[0] for x in lines)
    prompt, completion = sum(x.prompt_tokens[0] for x in lines), sum(x.completion_tokens[0] for x in lines)
    per_call, basis = model.kind.per_call_s(model, calls, prompt, completion)
    return ModelTime(model.name, model.concurrency, per_call, basis, rpm, tpm)


def _questions(work: LLMWork, split: str) -> pd.DataFrame:
    """The questions of ``split`` (a WattBot split, or ``<corpus>/questions``: no ``answer_unit``
    column, empty units, as its ingest writes them); a smoke run's first ``limit`` of them, in file order,
    as its jobs ask them (pipeline/datasets/first_n.py)."""
    qs = pd.read_csv(Path(work.questions[split]), dtype=str, keep_default_na=False)
    qs = qs if work.limit is None else qs.head(work.limit)
    return qs if "answer_unit" in qs.columns else qs.assign(answer_unit="")


def answer_prompt_tokens(spec: VariantSpec, model: str, question: str, unit: str, attempt: int) -> int:
    """Tokens of the prompt variant ``spec`` sends for this question at ``attempt``: its backend's own
    count (``prompt_tokens`` of its registry entry), so a new backend is priced by its own prompts."""
    return get_backend(spec.backend).prompt_tokens_fn()(spec, model, question, unit, attempt)


def _usd(model: ModelSpec, prompt: int, completion: int) -> float | None:
    price = price_per_token(model)
    return None if price is None else prompt * price[0] + completion * price[1]


# Keys of a variant that never reach its request: a call is the same request as another variant's when the
# rest of the spec, the model, the question, the attempt and the sample's seed are the same.
NOT_IN_REQUEST = frozenset({"name", "samples", "vote", "max_retries", "splits"})


def request_shape(v: LLMCallsSpec, model: str) -> str:
    """The hash of what a variant's requests share (pipeline/answer/llm_answer.py answer_once): the model, its
    spec's keys that reach the call and its params, the seed aside (:func:`request_identity` adds each sample's)."""
    params = {k: x for k, x in v.params.items() if k != "seed"}
    shape = {k: x for k, x in dataclasses.asdict(v).items() if k not in NOT_IN_REQUEST and k != "params"}
    return stable_hash({"model": model, "spec": shape, "params": params})


def request_identity(v: LLMCallsSpec, shape: str, where: tuple, question: int, sample: int, attempt: int) -> tuple:
    """What makes one call's request: the variant's ``shape`` (:func:`request_shape`, hashed once a line: the
    model and the spec), the question (``where``: its split and sample cap), the attempt, the sample and its seed
    (``params.seed + sample`` for a sampled variant). Two variants that share one, as a one-sample control
    and the first of its ensemble's samples, or a blank-retry variant's first attempt and its plain twin,
    send one request: the cache answers the second, so the estimate counts it once."""
    seed = v.params.get("seed")
    if v.samples > 1:
        seed = (seed or 0) + sample
    return (shape, where, question, attempt, sample, seed)


def answer_line(work: LLMWork, name: str, split: str, seen: set[tuple] | None = None) -> Line:
    """An LLM-calling variant's calls on one split: questions x samples, no retry .. every retry; a request
    an earlier line sends too (in ``seen``, which this line's requests join) is counted as ``shared``."""
    v = work.answering[name]
    if not isinstance(v, LLMCallsSpec):
        raise ValueError(
            f"answering variant {name!r}: backend {v.backend} calls an LLM but its spec is no LLMCallsSpec"
        )
    model = v.resolved_model(work.llm.model)
    if model is None:
        raise ValueError(f"answering variant {name!r} names no model and llm.model is not set")
    qs = _questions(work, split)
    cap = work.question_caps.get((name, split))
    if cap:  # a power-sized sample: at most its largest cap (priced by the split's first questions' prompts)
        qs = qs.head(cap)
    seen = set() if seen is None else seen
    completion = int(v.params.get("max_tokens") or ANSWER_COMPLETION_TOKENS)
    calls, prompt, shared = [0, 0], [0, 0], 0
    shape = request_shape(v, model)
    for i, q in enumerate(qs.itertuples()):
        for a in range(v.max_retries + 1):
            tokens = answer_prompt_tokens(v, model, q.question, q.answer_unit, a)
            for sample in range(v.samples):
                identity = request_identity(v, shape, (split, cap), i, sample, a)
                if identity in seen:
                    shared += 1
                    continue
                seen.add(identity)
                for bound in (0, 1) if a == 0 else (1,):
                    calls[bound] += 1
                    prompt[bound] += tokens
    comp = (calls[0] * completion, calls[1] * completion)
    spec = work.llm.resolve(model)
    lo, hi = _usd(spec, prompt[0], comp[0]), _usd(spec, prompt[1], comp[1])
    usd = None if lo is None or hi is None else (lo, hi)  # one model: both priced or neither
    mocked = "mock_response" in v.params
    return Line(
        f"answer {name}", model, split, len(qs), (calls[0], calls[1]), (prompt[0], prompt[1]), comp, usd, mocked, shared
    )


def planner_line(work: LLMWork, rv: str, split: str) -> Line:
    """An LLM query planner's calls on one split: one per question (it asks for its ``n - 1`` queries at once)."""
    from pipeline.retrieve.planner import LLMPlanner

    planner = work.planners[rv]
    model = planner.model or work.llm.model or ""
    p = LLMPlanner(None, replace(planner, model=model))
    qs = _questions(work, split)
    prompt = sum(text_tokens(p.messages(q.question, q.answer_unit)[0]["content"]) for q in qs.itertuples())
    completion = int((planner.params or {}).get("max_tokens") or PLANNER_COMPLETION_TOKENS) * len(qs)
    usd = _usd(work.llm.resolve(model), prompt, completion)
    return Line(
        f"planner {rv}",
        model,
        split,
        len(qs),
        (len(qs), len(qs)),
        (prompt, prompt),
        (completion, completion),
        None if usd is None else (usd, usd),
        "mock_response" in (planner.params or {}),
    )


def estimate(work: LLMWork) -> Estimate:
    """The estimate of a run's LLM work (see the module docstring for how): WattBot's planner and
    answering calls (none in a corpora-only run, WattBot's folder missing), then each corpus's LLM
    answering variants on its questions (an LLM query planner's calls on a corpus are not counted);
    which variant answers which split is the workflow's (:func:`pipeline.workflow.llm_shares.llm_work`)."""
    lines = [planner_line(work, rv, split) for rv, split in work.plans]
    seen: set[tuple] = set()  # the requests of the lines so far: one request is one call, whichever variant sends it
    lines += [answer_line(work, name, split, seen) for name, split in work.answers]
    models = sorted({x.model for x in lines})
    times = {m: model_time(work.llm.resolve(m), [x for x in lines if x.model == m]) for m in models}
    return Estimate(lines, times, work.limit)


def _range(lo: float, hi: float, fmt: str = "{:,.0f}") -> str:
    a, b = fmt.format(lo), fmt.format(hi)
    return a if a == b else f"{a}-{b}"


def format_estimate(est: Estimate) -> str:
    rows = [f"{'LLM work':34} {'model':28} {'split':6} {'calls':>13} {'prompt tok':>21} {'output tok':>19} {'USD':>15}"]
    for x in est.lines:
        usd = "unpriced" if x.usd is None else _range(*x.usd, fmt="{:,.2f}")
        rows.append(
            f"{x.what[:34]:34} {x.model[:28]:28} {x.split:6} {_range(*x.calls):>13} "
            f"{_range(*x.prompt_tokens):>21} {_range(*x.completion_tokens):>19} {usd:>15}"
        )
    usd = _range(est.total("usd", 0), est.total("usd", 1), fmt="{:,.2f}")
    shared = sum(x.shared for x in est.lines)
    rows.append(
        f"total: {_range(est.total('calls', 0), est.total('calls', 1))} calls, about USD {usd}"
        + (f" plus unpriced {', '.join(est.unpriced)}" if est.unpriced else "")
        + f"; about {_range(est.hours(0), est.hours(1), fmt='{:.1f}')} h"
        + (f" plus unknown for {', '.join(est.untimed)}" if est.untimed else "")
        + (f"; {shared:,} more are requests another line sends too (a cache hit: not counted)" if shared else "")
    )
    rows += [_time_row(est, t) for t in est.times.values()]
    rows.append(
        "(a cold-cache estimate: ranges go from no blank-retry to every retry; tokens = characters/4 of "
        "the real prompts; prices from llm.prices, else litellm's local map; models one after another; "
        "see pipeline/estimate.py)"
    )
    if est.limit:
        rows.append(f"(a smoke run, limit {est.limit}: the first {est.limit} questions of each split)")
    return "\n".join(rows)


def _time_row(est: Estimate, t: ModelTime) -> str:
    lo, hi = est.model_hours(t.model, 0), est.model_hours(t.model, 1)
    hours = "unknown" if lo is None or hi is None else f"{_range(lo, hi, fmt='{:.2f}')} h"
    limits = "".join(
        f", {v:g} {unit}" for v, unit in ((t.requests_per_minute, "req/min"), (t.tokens_per_minute, "tok/min")) if v
    )
    return f"  time {t.model}: {hours} ({t.basis}, concurrency {t.concurrency}{limits})"


def print_estimate(work: LLMWork, stream=None) -> Estimate | None:
    """Print the estimate before a run (to stderr, so dry-run output stays parseable); nothing
    when the grid makes no LLM call."""
    est = estimate(work)
    if est.lines:
        llm = work.llm
        replay = (
            f"\n(llm.mode is {llm.mode}: every reply comes from the cache, nothing is paid)" if llm.cache_only else ""
        )
        print(format_estimate(est) + replay, file=stream or sys.stderr)
    return est if est.lines else None
