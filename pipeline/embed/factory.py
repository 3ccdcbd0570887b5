"""`make_encoder`: the encoder a config asks for (the backends import :mod:`pipeline.embed.base`,
this module imports them, lazily: a backend's heavy dependencies load only when it is chosen)."""

from __future__ import annotations

from typing import Any

from pipeline.cores import job_threads
from pipeline.specs import EMBED_BACKENDS as BACKENDS  # the config schema's list

from .base import MINILM_MAX_TOKENS, Encoder, WordPieceEncoder


def make_encoder(cfg: dict[str, Any]) -> Encoder:
    """Build an encoder from a config dict: {"backend", "model", "batch_size", "max_tokens", "threads"}.

    Optional keys: "precision" (onnx-qint8: auto | int8 | fp32; auto = int8 only where the CPU
    has VNNI/AMX int8 dot products); "model_id" overrides the derived cache key (e.g. to name a local fine-tuned
    model); "max_batch_tokens" caps padded tokens per MiniLM forward pass; "dim" for litellm.
    """
    backend = cfg.get("backend", "onnx-int8")
    batch_size = int(cfg.get("batch_size", 64))
    max_tokens = int(cfg.get("max_tokens", MINILM_MAX_TOKENS))
    threads = job_threads(int(cfg.get("threads", 2)))  # at most the Snakemake job's threads
    model = cfg.get("model")
    enc: Encoder
    if backend == "onnx-int8":
        from .onnx_minilm import OnnxMiniLM

        enc = OnnxMiniLM(model_file=model, batch_size=batch_size, max_tokens=max_tokens, threads=threads)
    elif backend == "onnx-qint8":
        from .onnx_minilm import QInt8MiniLM

        enc = QInt8MiniLM(
            model_dir=model,
            precision=cfg.get("precision", "auto"),
            batch_size=batch_size,
            max_tokens=max_tokens,
            threads=threads,
        )
    elif backend == "torch":
        from .torch_st import TorchMiniLM

        enc = TorchMiniLM(model_dir=model, batch_size=batch_size, max_tokens=max_tokens, threads=threads)
    elif backend == "sentence-transformers":
        from .torch_st import SentenceTransformerEncoder

        # No max_tokens given → keep the model's own max_seq_length (not every model is MiniLM).
        st_max = cfg.get("max_tokens")
        enc = SentenceTransformerEncoder(model=model, batch_size=batch_size, max_tokens=st_max, threads=threads)
    elif backend == "litellm":
        from .api import LiteLLMEncoder

        if not model:
            raise ValueError('embed backend "litellm" needs cfg["model"], e.g. "text-embedding-3-small"')
        enc = LiteLLMEncoder(model=model, batch_size=batch_size, dim=cfg.get("dim"))
    else:
        raise ValueError(f"unknown embed backend {backend!r} (key 'backend'); allowed: {', '.join(BACKENDS)}")
    if cfg.get("max_batch_tokens") and isinstance(enc, WordPieceEncoder):
        enc.max_batch_tokens = int(cfg["max_batch_tokens"])  # speed only: vectors do not depend on it
    if cfg.get("model_id"):
        enc.model_id = str(cfg["model_id"])
    return enc
