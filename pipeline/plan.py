"""The LLM plan of a real run and its spend gate: printed at ``onstart``, before the first job.

A dry run (``snakemake -n``) prints the estimate (:mod:`pipeline.estimate`) and nothing else. A
real run prints, before any job starts, the resolved LLM work: every variant's model, the
endpoint its calls go to, whether it is priced and by what, calls and USD ranges (the estimate's
table), where a hosted model sees the corpus's text (answering calls send retrieved snippets of
the documents; planner calls send the questions only), the endpoint checks (:func:`endpoint_status_lines`)
and the run id (:mod:`pipeline.run_ids`). Then the gate: a run whose priced upper bound is above 0
starts only with a spend cap (``llm.max_cost_usd``) or an explicit confirmation
(``llm.confirm_spend: true``, or ``WATTBENCH_CONFIRM_SPEND=1`` in the environment). Replay mode
pays nothing and always passes.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from pipeline.config import ConfigError
from pipeline.estimate import Estimate, _range, estimate, format_estimate, print_estimate
from pipeline.llm.preflight import dry_run_checks
from pipeline.llm.prices import price_source
from pipeline.llm.work import LLMWork
from pipeline.llm_models import LLMSpec
from pipeline.run_ids import begin_run, read_state, superseded

CONFIRM_ENV = "WATTBENCH_CONFIRM_SPEND"


@dataclass
class RunWork:
    """The LLM work of one Snakemake invocation: the grid's while the Snakefile is parsed, then the part
    its jobs will do (:meth:`dag_built`), which the checks, the estimate and the plan cover. Why: a run
    asked for one corpus's files, or resumed, is checked and priced for what it will call."""

    work: LLMWork  # the grid's, until the DAG is built (before onstart)
    est: Estimate | None = None  # the estimate printed then (None: no LLM line)

    def dag_built(self, work: LLMWork, dry_run: bool, stream=None) -> None:
        """Once the DAG is built (on ``-n`` too, where ``onstart`` is skipped): the work of the jobs that
        will run; a dry run's checks, as warnings; the estimate, printed (to stderr, before the jobs)."""
        self.work = work
        if dry_run:
            dry_run_checks(work)
        self.est = print_estimate(work, stream)


@dataclass(frozen=True)
class Route:
    """Where one variant's calls go and what they carry."""

    what: str  # "answer <variant>" / "planner <retrieval variant>"
    model: str
    endpoint: str
    price: str  # llm.prices | litellm map | local (free) | UNPRICED
    sends: str  # what leaves this machine, and to whom


def routes(llm: LLMSpec, est: Estimate) -> list[Route]:
    """One row per variant and model of the estimate: where its model's kind of serving sends the calls
    (:mod:`pipeline.llm.serving`), what prices them, and what leaves this machine."""
    out, seen = [], set()
    for x in est.lines:
        if (x.what, x.model) in seen:
            continue
        seen.add((x.what, x.model))
        model = llm.resolve(x.model)
        endpoint = model.kind.where(model)
        carried = "questions + document snippets" if x.what.startswith("answer") else "questions only"
        sends = model.serving.sends.format(carried=carried, endpoint=endpoint)
        if x.mocked and not model.serving.cache_only:
            sends = "nothing (mocked)"
        out.append(Route(x.what, x.model, endpoint, price_source(model), sends))
    return out


def format_routes(rows: list[Route]) -> str:
    lines = [f"{'LLM work':34} {'model':28} {'endpoint':38} {'price':12} document text leaves as"]
    lines += [f"{r.what[:34]:34} {r.model[:28]:28} {r.endpoint[:38]:38} {r.price:12} {r.sends}" for r in rows]
    return "\n".join(lines)


def endpoint_status_lines(work: LLMWork) -> list[str]:
    """The endpoint checks (does each ``api_base`` answer, which model ids it serves): one line per
    endpoint, printed in the plan (pipeline/llm/endpoints.py; a bad one has already stopped a real run
    in ``onstart``'s preflight)."""
    from pipeline.llm.endpoints import probe

    return [status.line() for status in probe(work)]


def priced_upper_bound(est: Estimate) -> float:
    """USD of every priced line at every retry (what the cap would count; unpriced lines add nothing)."""
    return sum(x.usd[1] for x in est.lines if x.usd is not None)


def spend_gate(llm: LLMSpec, est: Estimate, environ: dict | None = None) -> str:
    """Why this run may spend (one line), or :class:`ConfigError` when its priced upper bound is
    above 0 without a cap or a confirmation."""
    env = os.environ if environ is None else environ
    if llm.cache_only:
        return f"spend: none (llm.mode is {llm.mode}: every reply comes from the cache)"
    hi = priced_upper_bound(est)
    usd = _range(sum(x.usd[0] for x in est.lines if x.usd is not None), hi, fmt="{:,.2f}")
    if hi <= 0:
        return f"spend: priced estimate USD {usd}"
    if llm.max_cost_usd is not None:
        return f"spend: priced estimate USD {usd}; this run stops at llm.max_cost_usd = {llm.max_cost_usd} USD"
    if llm.confirm_spend:
        return f"spend: priced estimate USD {usd}, confirmed by llm.confirm_spend (no cap)"
    if env.get(CONFIRM_ENV) == "1":
        return f"spend: priced estimate USD {usd}, confirmed by {CONFIRM_ENV}=1 (no cap)"
    raise ConfigError(
        f"spend gate: this run may spend up to USD {hi:,.2f} (priced estimate USD {usd}, cold cache); set a cap "
        f"(llm.max_cost_usd) or confirm it (llm.confirm_spend: true, or {CONFIRM_ENV}=1) and run again"
    )


def print_plan(
    work: LLMWork,
    est: Estimate | None = None,
    stream=None,
    with_estimate: bool = True,
    endpoint_lines: list[str] | None = None,
) -> str:
    """Print the plan (without the run id); the gate's line, or :class:`ConfigError` from the gate.
    ``with_estimate=False``: the estimate's table was printed already (once the DAG was built: :class:`RunWork`).
    ``endpoint_lines``: the endpoint checks preflight already made (each endpoint is probed once)."""
    out = stream or sys.stderr
    est = est if est is not None else estimate(work)
    print(f"LLM plan of this run (llm.mode {work.llm.mode}):", file=out)
    if with_estimate:
        print(format_estimate(est), file=out)
    print(format_routes(routes(work.llm, est)), file=out)
    for line in endpoint_status_lines(work) if endpoint_lines is None else endpoint_lines:
        print(line, file=out)
    gate = spend_gate(work.llm, est)
    print(gate, file=out)
    return gate


def start_run(
    work: LLMWork,
    config_files: list[str] | None = None,
    stream=None,
    endpoint_lines: list[str] | None = None,
    est: Estimate | None = None,
    config_hash: str = "",
) -> str:
    """``onstart`` of a real run: the plan and the gate (when the grid calls an LLM; the estimate's
    table was printed once the DAG was built), then the run id (continued when the last run here did not finish and
    ran the same resolved config, whose hash is ``config_hash``; else a line says why it is new)."""
    out = stream or sys.stderr
    est = est if est is not None else estimate(work)  # the one printed once the DAG was built, if any
    if est.lines:
        print_plan(work, est, out, with_estimate=False, endpoint_lines=endpoint_lines)
    previous = read_state()
    state = begin_run(config_files=config_files, config_hash=config_hash)
    if note := superseded(previous, state):
        print(note, file=out)
    how = "new" if not state.resumed else f"continued, resume {state.resumed}"
    print(f"run id: {state.id} ({how}; logs/run.json; `python -m pipeline cost --run {state.id}`)", file=out)
    return state.id
