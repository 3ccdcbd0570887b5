"""The registry of embedding backends: what ``embedding.backend`` (and an ``embedding_models`` entry's
``backend``) may name.

An :class:`EmbedBackend` says, in one place, what the rest of the pipeline needs to know about a
backend: how to make its encoder from an :class:`~pipeline.specs.EncoderSpec` (the encoder names its
own cache key, ``model_id``: model + backend + precision), which keys of ``embedding`` only it takes,
whether it needs a ``model``, and which model files a DAG rule builds for it first (and how to build
them where no DAG runs: the benches). Nothing else switches on a backend's name.

The built-in backends register one module each (``onnx_minilm``, ``torch_st``, ``api``), imported by
this package's ``__init__``, so importing :mod:`pipeline.embed` registers them; their heavy
dependencies load only when an encoder is made. A backend outside the package is a plugin: an entry point
in group ``wattbench.embed_backends`` naming its module (pipeline/registry/base.py; a test's toy backend:
tests/embed/toy_encoder.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.registry.base import Registry
from pipeline.specs import EncoderSpec

from .base import Encoder

GROUP = "wattbench.embed_backends"  # the entry-point group of backends kept outside the package (plugins)


@dataclass(frozen=True)
class EncoderRun:
    """How one job runs its encoder (never in a cache key): CPU threads, and ``lazy``: load the model at
    the first encode, not when made (a query searcher whose queries are all cached never loads it)."""

    threads: int
    lazy: bool = False


@dataclass(frozen=True)
class EmbedBackend:
    """One embedding backend. ``make`` builds its encoder; a backend that cannot load lazily ignores ``lazy``."""

    name: str
    make: Callable[[EncoderSpec, EncoderRun], Encoder]
    keys: frozenset[str] = frozenset()  # `embedding` keys only it takes (precision, dim): others refuse them
    model_example: str | None = None  # `model` is required: an example of one, for the error
    # The files its encoder reads that DAG rules build into the `model` folder first (rules encoder_qint8*;
    # the jobs declare them as inputs), and the builder for what runs outside the DAG (the benches).
    built_files: Callable[[EncoderSpec], list[str]] | None = None
    build_files: Callable[[EncoderSpec], Path] | None = None


BACKENDS: Registry[EmbedBackend] = Registry("embed backend", GROUP)
register = BACKENDS.register
unregister = BACKENDS.unregister
get_backend = BACKENDS.get
backend_names = BACKENDS.names


def own_keys() -> frozenset[str]:
    """The keys of ``embedding`` that belong to one backend or another (their ``keys``)."""
    return frozenset(k for b in BACKENDS.entries() for k in b.keys)
