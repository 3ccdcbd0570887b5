"""fp32 torch backends: the reference MiniLM (via transformers) and any sentence-transformers model."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from pipeline.specs import EncoderSpec

from .backends import EmbedBackend, EncoderRun, register
from .base import MINILM_MAX_TOKENS, MINILM_NAME, WordPieceEncoder, _suffix, l2_normalise, minilm_path


def _offline() -> None:
    """Offline by default (set before transformers loads); an online user can still export
    HF_HUB_OFFLINE=0 to fetch hub names."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class TorchMiniLM(WordPieceEncoder):
    """The fp32 reference: same tokeniser and pooling as the ONNX backend, only the model differs."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        batch_size: int = 64,
        max_tokens: int = MINILM_MAX_TOKENS,
        threads: int = 2,
        lazy: bool = False,
    ):
        _offline()
        self.model_dir = Path(model_dir) if model_dir else minilm_path()
        super().__init__(self.model_dir / "tokenizer.json", batch_size, max_tokens)
        self.threads = threads
        # the model's width from its config, without loading torch (a lazy encoder may never load it)
        self.dim = int(json.loads((self.model_dir / "config.json").read_text())["hidden_size"])
        self.model_id = f"{MINILM_NAME}/torch-fp32{_suffix(max_tokens)}"
        if not lazy:
            self.load()

    def _load_model(self) -> None:
        import torch
        from transformers import AutoModel

        torch.set_num_threads(self.threads)  # process-wide: torch has no per-model thread pool
        self._torch = torch
        self._model = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True).eval()

    def _forward(self, ids: np.ndarray, mask: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        t = self._torch
        with t.inference_mode():
            out = self._model(
                input_ids=t.from_numpy(ids), attention_mask=t.from_numpy(mask), token_type_ids=t.from_numpy(type_ids)
            )
        return out.last_hidden_state.float().numpy()


def _local_model_id(path: Path) -> str:
    """Name a local model by folder name + a hash of its weights, so a retrained model never hits old cache rows."""
    h = hashlib.sha256()
    for f in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return f"{path.name}-{h.hexdigest()[:8]}"


class SentenceTransformerEncoder:
    """Any sentence-transformers model by hub name or local path (default: the packaged MiniLM)."""

    def __init__(
        self,
        model: str | Path | None = None,
        batch_size: int = 64,
        max_tokens: int | None = MINILM_MAX_TOKENS,
        threads: int = 2,
    ):
        _offline()
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        local = Path(model) if model else minilm_path()
        if local.is_dir():
            self._model = SentenceTransformer(str(local), device="cpu", local_files_only=True)
            name = MINILM_NAME if local.resolve() == minilm_path().resolve() else _local_model_id(local)
        else:
            self._model = SentenceTransformer(str(model), device="cpu")
            name = str(model)
        if max_tokens:
            self._model.max_seq_length = max_tokens
        self.batch_size = batch_size
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)  # sentence-transformers types it Optional; a loaded model knows it
        self.model_id = f"{name}/st-fp32@max{self._model.max_seq_length}"

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # ST already sorts by length internally and restores order.
        vecs = self._model.encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return l2_normalise(vecs)

    def count_tokens(self, texts: list[str]) -> list[int]:
        tok = self._model.tokenizer
        return [len(ids) for ids in tok(list(texts), add_special_tokens=False, truncation=False)["input_ids"]]


def _torch(spec: EncoderSpec, run: EncoderRun) -> TorchMiniLM:
    tokens = spec.max_tokens or MINILM_MAX_TOKENS  # no max_tokens: MiniLM's own limit
    return TorchMiniLM(spec.model, spec.batch_size, tokens, run.threads, lazy=run.lazy)


def _sentence_transformers(spec: EncoderSpec, run: EncoderRun) -> SentenceTransformerEncoder:
    """Loaded when made, whatever ``run.lazy``: its cache key names the loaded model's max_seq_length."""
    return SentenceTransformerEncoder(spec.model, spec.batch_size, spec.max_tokens, run.threads)


register(EmbedBackend("torch", _torch))
register(EmbedBackend("sentence-transformers", _sentence_transformers))
