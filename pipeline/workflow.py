"""What the Snakefile needs to expand the grid: document ids, variant names, rule params.

Kept here (not in the Snakefile) so the DAG file stays declarative and this logic is tested.
"""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import answer_splits, answering_slice, config_hash, local_models, index_slice, retrieval_indexes, retrieval_slice  # noqa: F401
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


def with_hash(params: dict) -> str:
    """Params plus the hash of exactly what they contain: a report reruns (and its hash changes)
    only when something it shows changed, not when an unrelated part of the config did."""
    return as_json({**params, "config_hash": config_hash(params)})


def report_params(cfg: dict) -> str:
    return with_hash({
        "default_variant": cfg["default_variant"],
        "score_split": cfg["wattbot"]["score_split"],
        "variants": {v: answering_slice(cfg, v) for v in sorted(cfg["answering"])},
    })


def uses_llm(cfg: dict, variant: str) -> int:
    return int(cfg["answering"][variant]["backend"] == "llm")


# --- LLM variants: which splits they answer, which local model files they need ---

def answer_targets(cfg: dict, split: str) -> list[str]:
    """Answer CSVs of ``split`` for every variant that answers it (LLM variants may be train-only)."""
    return [f"{RESULTS}/answers/{v}/{split}.csv" for v in sorted(cfg["answering"]) if split in answer_splits(cfg, v)]


def answer_models(cfg: dict, variant: str) -> list[str]:
    a = cfg["answering"][variant]
    return [m["gguf"] for m in local_models(cfg, a.get("model")).values()] if a["backend"] == "llm" else []


def retrieval_models(cfg: dict, variant: str) -> list[str]:
    planner = cfg["retrieval"][variant].get("planner") or {}
    return [m["gguf"] for m in local_models(cfg, planner.get("model")).values()] if planner.get("kind") == "llm" else []


def uses_llm_planner(cfg: dict, variant: str) -> int:
    return int((cfg["retrieval"][variant].get("planner") or {}).get("kind") == "llm")


def local_model_for_file(cfg: dict, path: str) -> str:
    """The ``llm.local`` config (as JSON) whose ``gguf`` is ``path``."""
    for name, m in sorted(((cfg.get("llm") or {}).get("local") or {}).items()):
        if m["gguf"] == path:
            return as_json({**m, "name": name})
    raise ValueError(f"no llm.local model has gguf '{path}'")


# --- which trees and questions a dataset's index and retrieval rules read ---

def suite_datasets(cfg: dict) -> list[str]:
    return sorted((cfg.get("benchmarks") or {}).get("datasets", {}))


def suite_variants(cfg: dict) -> list[str]:
    return list((cfg.get("benchmarks") or {}).get("retrieval", []))


def trees_input(cfg: dict, dataset: str) -> list[str]:
    if dataset == "wattbot":
        return [f"{RESULTS}/trees/{d}.json" for d in doc_ids(cfg)]
    return [f"results/{dataset}/export/trees"]


def trees_arg(cfg: dict, dataset: str) -> str:
    """What ``python -m pipeline index --trees`` takes: a comma list of files, or a folder."""
    return ",".join(trees_input(cfg, dataset))


def questions_path(dataset: str, split: str) -> str:
    return f"{RESULTS}/ingest/{split}.csv" if dataset == "wattbot" else f"results/{dataset}/export/{split}.csv"


def suite_targets(cfg: dict) -> list[str]:
    return ["reports/retrieval/metrics.csv"] if suite_datasets(cfg) and suite_variants(cfg) else []


def suite_export_params(cfg: dict, dataset: str) -> str:
    b = cfg["benchmarks"]
    return as_json({"dataset": dataset, "root": b["root"], "subset": b["datasets"][dataset] or {}})


def suite_report_params(cfg: dict) -> str:
    b = cfg.get("benchmarks") or {}
    return with_hash({"ks": b.get("ks", [1, 3, 5]), "datasets": b.get("datasets", {}),
                      "variants": {v: retrieval_slice(cfg, v) for v in suite_variants(cfg)}})
