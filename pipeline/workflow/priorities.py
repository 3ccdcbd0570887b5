"""Snakemake's `priority:` of the rules that set a 2-core run's tail (default 0; results do not depend on
the order). Measured on a fresh machine's default run (docs/architecture.md, "Scheduling"): with one
priority per rule, the retrieval suite's indexes ran before WattBot's trees and indexes, so the LLM
answer job, the run's longest chain, started 14.5 of 22 minutes in. So: the local LLM's runtime build
(long, one core, no inputs) and the SproutRAG attention (long, one core) first; the trees (cheap, they
unlock everything of an answered dataset); then, by the LLM jobs' path, the indexes and retrievals an
LLM answering variant reads on a dataset that is answered (WattBot, corpora) before the others."""

from __future__ import annotations

from pipeline.answer_backends import calls_llm
from pipeline.config import retrieval_indexes
from pipeline.workflow.answering import answer_spec
from pipeline.workflow.datasets import indexed_dataset

PRIORITY = {
    "llm_runtime": 60,
    "sprout_attention": 50,
    "tree": 45,
    "answer": 40,
    "retrieve_llm": 40,
    "retrieve": 30,
    "index": 20,
}
ON_LLM_PATH = 15  # added to an index or retrieval an LLM answering job waits for


def _llm_retrievals(cfg: dict) -> set[str]:
    """The retrieval variants an LLM answering variant reads."""
    out = set()
    for av in cfg["answering"]:
        spec = answer_spec(cfg, av)
        if calls_llm(spec.backend) and spec.retrieval:
            out.add(spec.retrieval)
    return out


def retrieve_priority(cfg: dict, dataset: str, rv: str) -> int:
    answered = indexed_dataset(dataset).answered
    return PRIORITY["retrieve"] + (ON_LLM_PATH if answered and rv in _llm_retrievals(cfg) else 0)


def index_priority(cfg: dict, dataset: str, index: str) -> int:
    feeds = {i for rv in _llm_retrievals(cfg) for i in retrieval_indexes(cfg, rv)}
    answered = indexed_dataset(dataset).answered
    return PRIORITY["index"] + (ON_LLM_PATH if answered and index in feeds else 0)
