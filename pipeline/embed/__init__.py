"""Sentence embeddings: swappable encoder backends (`make_encoder`) and an on-disk cache.

Importing the package registers the built-in backends (one module each, :mod:`pipeline.embed.backends`)."""

from . import api, onnx_minilm, torch_st  # noqa: F401  (each registers its backends)
from .backends import BACKENDS
from .base import Encoder
from .cache import EmbeddingCache
from .factory import make_encoder
from .fidelity import encoder_throughput, fidelity

__all__ = ["BACKENDS", "Encoder", "EmbeddingCache", "encoder_throughput", "fidelity", "make_encoder"]
