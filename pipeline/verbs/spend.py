"""estimate, cost and export-replay: what a grid's LLM calls will spend, did spend, and a pack to replay them."""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.verbs.base import config_args, config_files, config_overrides, verb


def cmd_estimate(a) -> None:
    from pipeline.config import load_config
    from pipeline.estimate import print_estimate
    from pipeline.workflow import llm_work

    if print_estimate(llm_work(load_config(config_files(a), config_overrides(a.set))), stream=sys.stdout) is None:
        print(f"{' '.join(config_files(a))}: no LLM calls in this grid")


def _llm_cache(a) -> Path:
    """The LLM cache a spend verb reads: ``--cache-dir``, else the resolved config's ``cache_dir``."""
    if a.cache_dir:
        return Path(a.cache_dir) / "llm.sqlite"
    from pipeline.config import resolve_config

    raw = resolve_config(config_files(a), config_overrides(a.set))  # only cache_dir: no data, no validation
    return Path(raw.get("cache_dir") or "data/cache") / "llm.sqlite"


def cmd_cost(a) -> None:
    from pipeline.llm.usage import cost_rows, format_cost
    from pipeline.run_ids import resolve_run

    path = _llm_cache(a)
    rows = cost_rows(path, resolve_run(a.run) if a.run else None)
    print(format_cost(rows) if rows else f"{path}: no LLM calls recorded" + (f" for run {a.run}" if a.run else ""))


def cmd_export_replay(a) -> None:
    from dataclasses import asdict

    from pipeline.llm.replay import export_replay
    from pipeline.run_ids import read_state, resolve_run

    run = resolve_run(a.run)
    state = read_state()
    m = export_replay(_llm_cache(a), run, a.out, asdict(state) if state and state.id == run else None)
    print(
        f"{a.out}: {m['replies']} replies of run {run} ({', '.join(f'{k} {v}' for k, v in m['models'].items())}); "
        f"{len(m['requests_without_reply'])} request(s) without a reply; replay with {m['use']}"
    )


def _add_spend_verbs(sub) -> None:
    """cost and export-replay: what a run's LLM calls bought, and a pack to replay them elsewhere."""
    s = verb(
        sub,
        "cost",
        cmd_cost,
        "LLM calls, cached hits, tokens and USD per run, variant and model (from the cache's records)",
    )
    s.add_argument("--run", help="one run: its id, or 'last' (logs/run.json); default: every run")
    s.add_argument("--cache-dir", help="the cache folder (default: cache_dir of --config)")
    config_args(s)
    s = verb(
        sub,
        "export-replay",
        cmd_export_replay,
        "write the cached replies one run used (and only those) as a replay pack",
    )
    s.add_argument("run", help="the run's id, or 'last' (logs/run.json)")
    s.add_argument("out", help="a new folder for the pack (llm.sqlite + manifest.json)")
    s.add_argument("--cache-dir", help="the cache folder (default: cache_dir of --config)")
    config_args(s)


def add_verbs(sub) -> None:
    """estimate, cost and export-replay: what a grid's LLM calls will spend, did spend, and a pack to replay them."""
    s = verb(sub, "estimate", cmd_estimate, "LLM calls, tokens, USD and hours a grid will spend (cold cache)")
    config_args(s)

    _add_spend_verbs(sub)
