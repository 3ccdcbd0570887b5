"""`make_encoder`: the encoder a config asks for (the backends import :mod:`pipeline.embed.base`,
this module imports them, lazily: a backend's heavy dependencies load only when it is chosen)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.cores import job_threads
from pipeline.specs import EMBED_BACKENDS as BACKENDS  # the config schema's list
from pipeline.specs import EncoderSpec

from .base import MINILM_MAX_TOKENS, Encoder, WordPieceEncoder


def make_encoder(spec: EncoderSpec | Mapping[str, Any], lazy: bool = False) -> Encoder:
    """The encoder ``spec`` names (a plain mapping, as tests and benches write one, is parsed to its
    :class:`~pipeline.specs.EncoderSpec` first: the schema's defaults, an unknown key an error).

    ``lazy``: a MiniLM backend (onnx-int8, onnx-qint8, torch) loads its tokenizer and model at its first
    encode, not here (a query searcher whose queries are all cached never loads them); the other
    backends ignore it (the sentence-transformers one names its cache key from the loaded model)."""
    if not isinstance(spec, EncoderSpec):
        spec = EncoderSpec.from_dict(spec)
    threads = job_threads(spec.threads)  # at most the Snakemake job's threads
    enc = _backend(spec, threads, lazy)
    if spec.max_batch_tokens and isinstance(enc, WordPieceEncoder):
        enc.max_batch_tokens = int(spec.max_batch_tokens)  # speed only: vectors do not depend on it
    if spec.model_id:
        enc.model_id = str(spec.model_id)
    return enc


def _backend(spec: EncoderSpec, threads: int, lazy: bool = False) -> Encoder:
    # MiniLM backends: no max_tokens means MiniLM's own limit; sentence-transformers: the model's max_seq_length
    minilm_tokens = spec.max_tokens or MINILM_MAX_TOKENS
    model, batch_size = spec.model, spec.batch_size
    if spec.backend == "onnx-int8":
        from .onnx_minilm import OnnxMiniLM

        return OnnxMiniLM(model_file=model, batch_size=batch_size, max_tokens=minilm_tokens, threads=threads, lazy=lazy)
    if spec.backend == "onnx-qint8":
        from .onnx_minilm import QInt8MiniLM

        return QInt8MiniLM(
            model_dir=model,
            precision=spec.precision,
            batch_size=batch_size,
            max_tokens=minilm_tokens,
            threads=threads,
            lazy=lazy,
        )
    if spec.backend == "torch":
        from .torch_st import TorchMiniLM

        return TorchMiniLM(model_dir=model, batch_size=batch_size, max_tokens=minilm_tokens, threads=threads, lazy=lazy)
    if spec.backend == "sentence-transformers":
        from .torch_st import SentenceTransformerEncoder

        return SentenceTransformerEncoder(
            model=model, batch_size=batch_size, max_tokens=spec.max_tokens, threads=threads
        )
    if spec.backend == "litellm":
        from .api import LiteLLMEncoder

        if not model:
            raise ValueError('embed backend "litellm" needs a model, e.g. "text-embedding-3-small"')
        return LiteLLMEncoder(model=model, batch_size=batch_size, dim=spec.dim)
    raise ValueError(f"unknown embed backend {spec.backend!r} (key 'backend'); allowed: {', '.join(BACKENDS)}")
