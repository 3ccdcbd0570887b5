"""Slices: the part of a validated config that shapes one output (a rule's ``params:``, its manifest and
cache keys). What only says how a job runs (threads, LLM concurrency and limits) stays out of them."""

from __future__ import annotations

from pipeline.config_schema import ConfigTree
from pipeline.llm_models import serving_kind
from pipeline.provenance import stable_hash
from pipeline.registry import answer_backends
from pipeline.registry.index_kinds import kind_of
from pipeline.specs import PlannerSpec, SproutSpec


def index_embedding(cfg: ConfigTree, index: str) -> dict:
    """The encoder of a dense index: the global ``embedding``, or its ``embedding_models`` entry over
    it. An index with its own encoder has its own vectors and cache keys; the default indexes' slices
    (and so their hashes and cached vectors) are unchanged."""
    name = cfg["indexes"][index].get("embedding")
    if not name:
        return cfg["embedding"]
    return {**cfg["embedding"], **{k: v for k, v in cfg["embedding_models"][name].items() if k != "package"}}


# How many threads a job uses says how it runs, not what it computes: ``threads`` stays out of the hashed
# slices (a changed thread count reruns nothing). Under Snakemake a job takes the threads it was granted
# (the rule's ``threads:``, from these same config keys; pipeline/cores.py).
EXECUTION_ONLY_THREADS = frozenset({"threads"})


def hashed_embedding(cfg: ConfigTree, index: str) -> dict:
    """:func:`index_embedding` as the slices carry it: without the execution-only ``threads``."""
    return {k: v for k, v in index_embedding(cfg, index).items() if k not in EXECUTION_ONLY_THREADS}


def index_slice(cfg: ConfigTree, index: str) -> dict:
    idx = cfg["indexes"][index]
    kind = kind_of(idx)
    return {
        "index": idx,
        "name": index,
        **({"embedding": hashed_embedding(cfg, index)} if kind.embeds else {}),
        **(kind.extra_slice(SproutSpec.from_dict(cfg["sprout"])) if kind.extra_slice else {}),
    }


def sprout_attention_slice(cfg: ConfigTree) -> dict:
    """The attention pass's keys of ``sprout`` (its ``threads`` are execution-only, as the encoders')."""
    return SproutSpec.from_dict(cfg["sprout"]).attention.hashed()


def retrieval_indexes(cfg: ConfigTree, variant: str) -> list[str]:
    r = cfg["retrieval"][variant]
    return [r["index"]] + ([r["hybrid"]["index"]] if r.get("hybrid") else [])


# LLM settings that say how a run executes, not what it computes: they stay out of the slices (and
# hashes) that decide what reruns. The answer rule passes them apart (``--llm-exec``, see
# ``llm_execution``): a changed concurrency or rate limit reruns nothing.
EXECUTION_ONLY = {
    "envvars",
    "concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "per_model",
    "max_failure_rate",
    "max_cost_usd",
    "cache_journal",
    "malformed_retries",
    "prices",
    "confirm_spend",
}


def llm_execution(cfg: ConfigTree) -> dict:
    """The execution-only LLM settings (and the cache mode) an answering job needs; the LLM cache's
    journal is the top-level ``cache_journal`` unless ``llm.cache_journal`` sets its own."""
    llm = cfg.get("llm") or {}
    out = {k: v for k, v in llm.items() if k in (EXECUTION_ONLY - {"envvars"}) | {"mode"}}
    if cfg.get("cache_journal") and "cache_journal" not in out:
        out["cache_journal"] = cfg["cache_journal"]
    return out


def model_endpoint_slice(cfg: ConfigTree, model: str | None) -> dict:
    """The hashed part of ``llm.per_model.<model>``: its ``api_base`` (a new endpoint reruns the jobs
    that call the model; its key variable, timeout and limits do not). Empty when none is set, so the
    slices of models without one are those of before."""
    llm = cfg.get("llm") or {}
    base = ((llm.get("per_model") or {}).get(model or llm.get("model") or "") or {}).get("api_base")
    return {"per_model": {model or llm.get("model"): {"api_base": base}}} if base else {}


def retrieval_slice(cfg: ConfigTree, variant: str) -> dict:
    indexes = {n: cfg["indexes"][n] for n in retrieval_indexes(cfg, variant)}
    dense = [n for n, idx in indexes.items() if kind_of(idx).embeds]
    out = {
        "retrieval": cfg["retrieval"][variant],
        "name": variant,
        "indexes": indexes,
        "embedding": hashed_embedding(cfg, dense[0]) if dense else None,
    }
    planner = cfg["retrieval"][variant].get("planner") or {}
    if PlannerSpec.from_dict(planner).calls_llm:
        out["llm"] = llm_slice(cfg, planner.get("model"), EXECUTION_ONLY)
    return out


def llm_slice(cfg: ConfigTree, model: str | None, leave_out: set[str]) -> dict:
    """The hashed ``llm`` keys of a job calling ``model`` (default ``llm.model``): of ``llm.local`` only the
    entry that serves it (``{}`` for a hosted model), so a local model added to the config reruns no job that
    does not call it (#48; a grid of one local model, or of none, keeps its slices), and its ``per_model``
    endpoint (:func:`model_endpoint_slice`)."""
    llm = cfg["llm"]
    out = {k: v for k, v in llm.items() if k not in leave_out}
    name = model or llm.get("model") or ""
    local = serving_kind(name).local_name(name)
    if "local" in out:
        out["local"] = {n: m for n, m in out["local"].items() if n == local}
    out.update(model_endpoint_slice(cfg, model))
    return out


def answering_slice(cfg: ConfigTree, variant: str) -> dict:
    a = cfg["answering"][variant]
    out = {"answering": a, "name": variant, "upstream": retrieval_slice(cfg, a["retrieval"])}
    if answer_backends.calls_llm(a["backend"]):
        out["llm"] = llm_slice(cfg, a.get("model"), EXECUTION_ONLY | {"mode"})
    return out


# The version of what the variant slices hold: an index's, a retrieval variant's and an answering variant's
# params carry it (pipeline/workflow/params.py), so a change that moves the hashes of unchanged configs is one
# deliberate step: bump it, re-pin tests/fixtures/config_pins.json (its test fails on any moved hash until
# then) and say which outputs rerun. 2: every declared default is written into the resolved config (before,
# the `x-default:` keys of the schema were read by the specs alone, so a changed default reran nothing).
PARAMS_VERSION = 2


def versioned(slice_: dict) -> dict:
    """A variant slice as its rule's params carry it: with :data:`PARAMS_VERSION`."""
    return {**slice_, "params_version": PARAMS_VERSION}


# Sections that change how the work is cut into jobs, never a result: out of the run's config hash (the one
# every report header shows, and what a resumed run must match), as they are out of every rule's params.
EXECUTION_SECTIONS = ("shards",)


def config_hash(cfg: ConfigTree) -> str:
    return stable_hash({k: v for k, v in cfg.items() if k not in EXECUTION_SECTIONS})
