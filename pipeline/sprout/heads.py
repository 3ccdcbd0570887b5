"""Head weights: one logit per (layer, head), softmax over all L*H jointly (SproutRAG §1.6).

``uniform`` is every logit 0 (1/72 each for MiniLM), what the reference index CLI always used;
trained logits come from the ``sprout_train`` rule (a JSON file with the data they came from).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64).ravel()
    e = np.exp(z - z.max())
    return e / e.sum()


def uniform_logits(layers: int, heads: int) -> np.ndarray:
    return np.zeros((layers, heads), dtype=np.float64)


def load_logits(path: str | Path, layers: int, heads: int) -> np.ndarray:
    """The ``alpha`` of a head-weights JSON written by :func:`pipeline.sprout.train.train_heads`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    alpha = np.asarray(data["alpha"], dtype=np.float64)
    if alpha.shape != (layers, heads):
        raise ValueError(f"{path}: head weights of shape {alpha.shape}, the encoder has {(layers, heads)}")
    return alpha


def mutual_scores(head_values: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """Mutual score of each stored pair: the softmax-weighted sum of its symmetrised per-head values."""
    return (np.asarray(head_values, dtype=np.float64) @ softmax(logits)).astype(np.float64)
