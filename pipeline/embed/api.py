"""Embedding APIs through litellm (OpenAI, Cohere, Voyage, ...): not callable offline."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.specs import EncoderSpec

from .backends import EmbedBackend, EncoderRun, register
from .base import l2_normalise, minilm_path

if TYPE_CHECKING:
    from tokenizers import Tokenizer


def _rows(resp: Any) -> list[list[float]]:
    """Pull the vectors out of a litellm EmbeddingResponse (items may be dicts or objects), in input order."""
    data = resp["data"] if isinstance(resp, dict) else resp.data
    get = lambda d, k: d[k] if isinstance(d, dict) else getattr(d, k)  # noqa: E731
    data = sorted(data, key=lambda d: get(d, "index"))
    return [get(d, "embedding") for d in data]


class LiteLLMEncoder:
    precision = "api"  # computed by the provider: no local kernels (pipeline/embed/kernels.py)

    def __init__(self, model: str, batch_size: int = 64, dim: int | None = None):
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else import fetches a price list
        import litellm  # noqa: F401  (fail early if missing)

        self.model = model
        self.batch_size = batch_size
        self.model_id = f"{model}/litellm"
        self._dim = int(dim) if dim else None
        self._tok: Tokenizer | None = None

    @property
    def dim(self) -> int:
        """Unknown until the API answers once; probe only if nobody passed cfg["dim"]."""
        if self._dim is None:
            self.encode(["dimension probe"])
        return self._dim  # type: ignore[return-value]

    def encode(self, texts: list[str]) -> np.ndarray:
        import litellm

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            rows += _rows(litellm.embedding(model=self.model, input=list(texts[start : start + self.batch_size])))
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        out = l2_normalise(np.asarray(rows, dtype=np.float32))  # not every provider normalises
        self._dim = out.shape[1]
        return out

    def count_tokens(self, texts: list[str]) -> list[int]:
        """MiniLM word pieces as a local, deterministic proxy: API tokenisers are remote or unknown."""
        if self._tok is None:
            from tokenizers import Tokenizer

            self._tok = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
            self._tok.no_truncation()
            self._tok.no_padding()
        return [len(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]


def _litellm(spec: EncoderSpec, run: EncoderRun) -> LiteLLMEncoder:
    """``spec.model`` is set (the backend's ``model_example``); threads and ``lazy`` mean nothing to an API."""
    return LiteLLMEncoder(str(spec.model), spec.batch_size, spec.dim)


register(EmbedBackend("litellm", _litellm, keys=frozenset({"dim"}), model_example="text-embedding-3-small"))
