"""Bench helpers: how fast is an encoder, and how close are two encoders' vectors."""

from __future__ import annotations

import time

import numpy as np

from .base import Encoder


def encoder_throughput(encoder: Encoder, texts: list[str]) -> float:
    """Warm sentences/s: one batch is encoded first (untimed) to pay for lazy init and allocator warm-up."""
    if not texts:
        raise ValueError("encoder_throughput needs at least one text")
    encoder.encode(texts[: getattr(encoder, "batch_size", 64)])
    t0 = time.perf_counter()
    encoder.encode(texts)
    return len(texts) / (time.perf_counter() - t0)


def fidelity(enc_a: Encoder, enc_b: Encoder, texts: list[str]) -> dict[str, float]:
    """Per-text cosine between two encoders of the same model (e.g. int8 vs fp32); vectors are unit-norm."""
    a, b = enc_a.encode(texts), enc_b.encode(texts)
    if a.shape != b.shape:
        raise ValueError(f"encoders disagree on shape: {enc_a.model_id} {a.shape} vs {enc_b.model_id} {b.shape}")
    cos = np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))
    return {
        "mean_cosine": float(cos.mean()),
        "min_cosine": float(cos.min()),
        "p01_cosine": float(np.percentile(cos, 1)),
        "n": len(texts),
    }
