"""The model files jobs read: local LLMs' GGUF files, packaged encoders' assembled folders and the
int8/fp32 MiniLM exports, declared as inputs so the rules that build them run first."""

from __future__ import annotations

from pathlib import Path

from pipeline import paths
from pipeline.config import index_embedding, retrieval_indexes
from pipeline.datasets.paths import REPO
from pipeline.embed.backends import get_backend
from pipeline.llm_models import LocalModelSpec
from pipeline.registry.answer_backends import calls_llm
from pipeline.registry.index_kinds import kind_of
from pipeline.specs import EncoderSpec
from pipeline.workflow.answering import answer_spec, uses_llm
from pipeline.workflow.llm_shares import llm_model
from pipeline.workflow.params import as_json
from pipeline.workflow.planner import planner_model, uses_llm_planner

# pins llama-cpp-python's version for the llm_runtime rule's build (the set-up installs from it too)
LOCK_FILE = str(REPO / "requirements.lock")


def _model_files(cfg: dict, model: str | None) -> list[str]:
    """What a job needs for ``model`` (default ``llm.model``): the GGUF file of a model served on this
    machine (its ``llm.local`` entry) and its runtime (the llm_runtime rule builds llama-cpp-python during
    the run); nothing for hosted models."""
    spec = llm_model(cfg, model or (cfg.get("llm") or {}).get("model") or "")
    return [spec.server.gguf, paths.LLM_RUNTIME] if spec.server else []


def answer_models(cfg: dict, variant: str) -> list[str]:
    spec = answer_spec(cfg, variant)
    return _model_files(cfg, spec.model) if calls_llm(spec.backend) else []


def retrieval_models(cfg: dict, variant: str) -> list[str]:
    """Model files a retrieval job reads: a local LLM planner's GGUF, an index's packaged encoder."""
    planner = cfg["retrieval"][variant].get("planner") or {}
    llm = _model_files(cfg, planner.get("model")) if uses_llm_planner(cfg, variant) else []
    return llm + [m for n in retrieval_indexes(cfg, variant) for m in encoder_model_inputs(cfg, n)]


def encoder_model_inputs(cfg: dict, index: str) -> list[str]:
    """The files a DAG rule builds for an index's encoder backend (the int8/fp32 MiniLM exports of an
    ``onnx-qint8`` index: rule encoder_qint8), else the assembled folder of its packaged encoder (rule
    encoder_model), if it has either."""
    built = built_model_files(cfg, index)
    if built:
        return built
    model = (cfg.get("embedding_models") or {}).get(cfg["indexes"][index].get("embedding")) or {}
    return [model["model"]] if model.get("package") else []


def built_model_files(cfg: dict, index: str) -> list[str]:
    """What a rule builds before an index's encoder can load: its backend's ``built_files`` (pipeline.embed.backends)."""
    if not kind_of(cfg["indexes"][index]).embeds:
        return []
    embedding = index_embedding(cfg, index)
    built = get_backend(embedding["backend"]).built_files
    return built(EncoderSpec.from_dict(embedding)) if built else []


def qint8_model_folders(cfg: dict) -> list[str]:
    """Folders the encoder_qint8 rule must build: those of every dense index whose backend builds files there."""
    return sorted({str(Path(f).parent) for n in cfg["indexes"] for f in built_model_files(cfg, n)})


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


def called_local_models(cfg: dict) -> list[LocalModelSpec]:
    """The ``llm.local`` models a job of the grid calls (an LLM answering variant's, an LLM query planner's),
    by name: a model only declared (config.yaml's Qwen2.5-Coder entries, #48) is neither built nor installed."""
    default = (cfg.get("llm") or {}).get("model")
    models = [answer_spec(cfg, v).resolved_model(default) for v in sorted(cfg["answering"]) if uses_llm(cfg, v)]
    models += [planner_model(cfg, v) for v in sorted(cfg["retrieval"]) if uses_llm_planner(cfg, v)]
    servers = {s.name: s for m in models if m and (s := llm_model(cfg, m).server) is not None}
    return [servers[n] for n in sorted(servers)]
