"""What the Snakefile needs to expand the grid: document ids, variant names, rule params.

Kept here (not in the Snakefile) so the DAG file stays declarative and this logic is tested.
"""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import answering_slice, config_hash, index_slice, retrieval_indexes, retrieval_slice  # noqa: F401
from pipeline.datasets.wattbot import document_source, load_metadata

RESULTS = "results/wattbot"


def doc_ids(cfg: dict) -> list[str]:
    """All documents of the metadata, or the configured subset (an unknown id is an error)."""
    known = sorted(load_metadata(Path(cfg["wattbot"]["dir"]) / "metadata.csv")["id"])
    subset = cfg["wattbot"].get("docs")
    if not subset:
        return known
    unknown = sorted(set(subset) - set(known))
    if unknown:
        raise ValueError(f"config key 'wattbot.docs': unknown document id(s) {', '.join(unknown)}")
    return sorted(subset)


def tree_source(cfg: dict, doc: str) -> str:
    wb = cfg["wattbot"]
    pdf_dir = Path(wb["pdf_dir"]) if wb.get("pdf_dir") else None
    return str(document_source(doc, Path(wb["dir"]) / "corpus", pdf_dir))


def split_source(cfg: dict, split: str) -> str:
    return str(Path(cfg["wattbot"]["dir"]) / cfg["wattbot"]["splits"][split])


def as_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def index_params(cfg: dict, index: str) -> str:
    return as_json(index_slice(cfg, index))


def retrieval_params(cfg: dict, variant: str) -> str:
    return as_json(retrieval_slice(cfg, variant))


def answering_params(cfg: dict, variant: str) -> str:
    return as_json(answering_slice(cfg, variant))


def report_params(cfg: dict) -> str:
    return as_json({
        "config_hash": config_hash(cfg),
        "default_variant": cfg["default_variant"],
        "score_split": cfg["wattbot"]["score_split"],
        "variants": {v: answering_slice(cfg, v) for v in sorted(cfg["answering"])},
    })


def uses_llm(cfg: dict, variant: str) -> int:
    return int(cfg["answering"][variant]["backend"] == "llm")
