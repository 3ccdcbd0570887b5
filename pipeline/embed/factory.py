"""`make_encoder`: the encoder a config asks for, made by its registered backend
(:mod:`pipeline.embed.backends`; a backend's heavy dependencies load only when it is chosen)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline.config_schema import declared_defaults
from pipeline.cores import job_threads
from pipeline.specs import EncoderSpec

from .backends import BACKENDS, EmbedBackend, EncoderRun, get_backend, own_keys
from .base import Encoder, WordPieceEncoder


def _parsed(spec: EncoderSpec | Mapping[str, Any]) -> EncoderSpec:
    return spec if isinstance(spec, EncoderSpec) else EncoderSpec.from_dict(spec)


def make_encoder(spec: EncoderSpec | Mapping[str, Any], lazy: bool = False) -> Encoder:
    """The encoder ``spec`` names (a plain mapping, as tests and benches write one, is parsed to its
    :class:`~pipeline.specs.EncoderSpec` first: its declared defaults, an unknown key an error).

    ``lazy``: a MiniLM backend (onnx-int8, onnx-qint8, torch) loads its tokenizer and model at its first
    encode, not here (a query searcher whose queries are all cached never loads them); the other
    backends ignore it (the sentence-transformers one names its cache key from the loaded model)."""
    spec = _parsed(spec)
    enc = backend_of(spec).make(spec, EncoderRun(job_threads(spec.threads), lazy))  # at most the job's threads
    if spec.max_batch_tokens and isinstance(enc, WordPieceEncoder):
        enc.max_batch_tokens = int(spec.max_batch_tokens)  # speed only: vectors do not depend on it
    if spec.model_id:
        enc.model_id = str(spec.model_id)
    return enc


def backend_of(spec: EncoderSpec) -> EmbedBackend:
    """The registered backend ``spec`` names, once it is checked to take what ``spec`` sets."""
    try:
        backend = get_backend(spec.backend)
    except KeyError:
        raise ValueError(
            f"unknown embed backend {spec.backend!r} (key 'backend'); allowed: {', '.join(BACKENDS.names())}"
        ) from None
    if backend.model_example and not spec.model:
        raise ValueError(f'embed backend "{backend.name}" needs a model, e.g. "{backend.model_example}"')
    defaults = declared_defaults(EncoderSpec)  # the keys EncoderSpec declares, with their defaults
    for key in sorted(own_keys() - backend.keys):
        if getattr(spec, key) != defaults.get(key):
            raise ValueError(f"embedding.{key}: backend {backend.name!r} does not take it")
    return backend


def ensure_model_files(spec: EncoderSpec | Mapping[str, Any]) -> Path | None:
    """Build the model files a DAG rule builds for ``spec``'s backend where they are missing (its
    ``build_files``; the folder, None for a backend without any): for what runs outside the DAG (the
    benches)."""
    spec = _parsed(spec)
    build = backend_of(spec).build_files
    return build(spec) if build else None
