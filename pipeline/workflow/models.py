"""The model files jobs read: local LLMs' GGUF files, packaged encoders' assembled folders and the
int8/fp32 MiniLM exports, declared as inputs so the rules that build them run first."""

from __future__ import annotations

from pathlib import Path

from pipeline import layout as L
from pipeline.answer_backends import calls_llm
from pipeline.config import index_embedding, retrieval_indexes
from pipeline.datasets.paths import REPO
from pipeline.index_kinds import kind_of
from pipeline.workflow.answering import answer_spec
from pipeline.workflow.llm_shares import llm_model
from pipeline.workflow.params import as_json
from pipeline.workflow.planner import uses_llm_planner

# pins llama-cpp-python's version for the llm_runtime rule's build (the set-up installs from it too)
LOCK_FILE = str(REPO / "requirements.lock")


def _model_files(cfg: dict, model: str | None) -> list[str]:
    """What a job needs for ``model`` (default ``llm.model``): the GGUF file of a model served on this
    machine (its ``llm.local`` entry) and its runtime (the llm_runtime rule builds llama-cpp-python during
    the run); nothing for hosted models."""
    spec = llm_model(cfg, model or (cfg.get("llm") or {}).get("model") or "")
    return [spec.server.gguf, L.LLM_RUNTIME] if spec.server else []


def answer_models(cfg: dict, variant: str) -> list[str]:
    spec = answer_spec(cfg, variant)
    return _model_files(cfg, spec.model) if calls_llm(spec.backend) else []


def retrieval_models(cfg: dict, variant: str) -> list[str]:
    """Model files a retrieval job reads: a local LLM planner's GGUF, an index's packaged encoder."""
    planner = cfg["retrieval"][variant].get("planner") or {}
    llm = _model_files(cfg, planner.get("model")) if uses_llm_planner(cfg, variant) else []
    return llm + [m for n in retrieval_indexes(cfg, variant) for m in encoder_model_inputs(cfg, n)]


def encoder_model_inputs(cfg: dict, index: str) -> list[str]:
    """The assembled folder of an index's packaged encoder (rule embedding_model), or the file-built
    int8/fp32 MiniLM exports (rule minilm_qint8) of an ``onnx-qint8`` index, if it has either."""
    name = cfg["indexes"][index].get("embedding")
    model = (cfg.get("embedding_models") or {}).get(name) or {}
    if kind_of(cfg["indexes"][index]).embeds and index_embedding(cfg, index).get("backend") == "onnx-qint8":
        return qint8_model_files(index_embedding(cfg, index).get("model"))
    return [model["model"]] if model.get("package") else []


def qint8_model_files(folder: str | None) -> list[str]:
    """Both files the minilm_qint8 rule writes into ``folder`` (default data/models/minilm-onnx)."""
    from pipeline.embed.quantize import FP32_FILE, QINT8_DIR, QINT8_FILE

    return [f"{folder or QINT8_DIR}/{FP32_FILE}", f"{folder or QINT8_DIR}/{QINT8_FILE}"]


def qint8_model_folders(cfg: dict) -> list[str]:
    """Folders the minilm_qint8 rule must build: those of every ``onnx-qint8`` dense index."""
    return sorted(
        {str(Path(f).parent) for n in cfg["indexes"] for f in encoder_model_inputs(cfg, n) if f.endswith(".onnx")}
    )


def packaged_encoders(cfg: dict) -> dict[str, str]:
    """Assembled folder -> PyPI package prefix, for every embedding model an index uses."""
    used = {idx.get("embedding") for idx in cfg["indexes"].values()}
    return {
        m["model"]: m["package"]
        for n, m in sorted((cfg.get("embedding_models") or {}).items())
        if n in used and m.get("package")
    }


def local_model_for_file(cfg: dict, path: str) -> str:
    """The ``llm.local`` config (as JSON) whose ``gguf`` is ``path``."""
    for name, m in sorted(((cfg.get("llm") or {}).get("local") or {}).items()):
        if m["gguf"] == path:
            return as_json({**m, "name": name})
    raise ValueError(f"no llm.local model has gguf '{path}'")
