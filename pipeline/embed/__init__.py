"""Sentence embeddings: swappable encoder backends (`make_encoder`) and an on-disk cache."""

from .base import Encoder
from .cache import EmbeddingCache
from .factory import BACKENDS, make_encoder
from .fidelity import encoder_throughput, fidelity

__all__ = ["BACKENDS", "Encoder", "EmbeddingCache", "encoder_throughput", "fidelity", "make_encoder"]
