"""all-MiniLM-L6-v2's forward pass in plain torch, for the attention pass.

Why not transformers' ``BertModel``: importing transformers costs about 3.5 CPU seconds per process, more
than a suite dataset's whole tokenisation and aggregation, and the sprout jobs need nothing from it but
this forward pass. The ops below are the ones ``BertModel`` runs in eval mode (transformers 5: embeddings
summed word + token type, then + position; per layer Q/K/V linears, attention, output linear, LayerNorm of
the residual sum, GELU feed-forward, LayerNorm; dropout is the identity), in the same order on the same
weights, so the hidden states are bit-for-bit the same; ``tests/sprout/test_sprout_attention.py`` checks
that against the stock model. The pooler is not run (nothing reads it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class BertShape:
    """The config.json keys the forward pass reads."""

    layers: int
    heads: int
    dim: int
    max_positions: int
    eps: float

    @classmethod
    def read(cls, model_dir: Path) -> BertShape:
        c = json.loads((model_dir / "config.json").read_text())
        if c.get("hidden_act") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{model_dir}/config.json: sprout's encoder runs a BERT with gelu and absolute positions")
        return cls(
            c["num_hidden_layers"],
            c["num_attention_heads"],
            c["hidden_size"],
            c["max_position_embeddings"],
            c["layer_norm_eps"],
        )


# attend(q, k, v, mask, scaling) -> the layer's attention output [B, T, H, d], q/k/v as [B, H, T, d]
Attend = Callable[..., "torch.Tensor"]


class MiniLM:
    """The encoder's weights (model.safetensors) and its forward pass up to the last hidden states."""

    def __init__(self, model_dir: Path):
        from safetensors.torch import load_file

        self.shape = BertShape.read(model_dir)
        self.w = load_file(str(model_dir / "model.safetensors"))

    def _linear(self, x, name: str):
        import torch.nn.functional as F

        return F.linear(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def _norm(self, x, name: str):
        import torch.nn.functional as F

        return F.layer_norm(x, (self.shape.dim,), self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.shape.eps)

    def embed(self, ids):
        import torch.nn.functional as F

        w, T = self.w, ids.shape[1]
        positions = w["embeddings.position_embeddings.weight"][:T][None]  # = embedding of arange(T)[None]
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"]) + F.embedding(
            ids.new_zeros(ids.shape), w["embeddings.token_type_embeddings.weight"]
        )
        return self._norm(x + positions, "embeddings.LayerNorm")

    def forward(self, ids, mask, attend: Attend):
        """Last hidden states [B, T, D] of ``ids`` [B, T]; ``mask`` is the attention mask ``attend`` takes."""
        import torch.nn.functional as F

        h = self.embed(ids)
        B, T, _ = h.shape
        s = self.shape
        d = s.dim // s.heads
        for i in range(s.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._linear(h, f"{p}.attention.self.{n}").view(B, T, -1, d).transpose(1, 2)
                for n in ("query", "key", "value")
            )
            out = attend(q, k, v, mask, d**-0.5).reshape(B, T, -1).contiguous()
            a = self._norm(self._linear(out, f"{p}.attention.output.dense") + h, f"{p}.attention.output.LayerNorm")
            up = F.gelu(self._linear(a, f"{p}.intermediate.dense"))
            h = self._norm(self._linear(up, f"{p}.output.dense") + a, f"{p}.output.LayerNorm")
        return h
