"""A real int8 all-MiniLM-L6-v2, built once and offline by the ``encoder_qint8`` DAG rule.

The packaged "int8" ONNX file computes in fp32 (its MatMuls are not quantized). Here the packaged
fp32 weights are exported to ONNX with torch, then ``quantize_dynamic`` turns every MatMul into an
int8 MatMulInteger with per-channel weight scales (per-tensor scales lose too much: cosine ~0.95).
Both files are kept: the fp32 export is the fast path on CPUs without int8 dot-product instructions
and without AVX2. On AVX2 without VNNI the reduce-range file runs (``encoder_qint8_rr`` rule, built only
where an index's encoder runs it: :func:`build_int8_variant`).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .base import minilm_path
from .kernels import auto_precision, cpu_flags

QINT8_DIR = "data/models/minilm-onnx"  # where the encoder_qint8 rule writes (backend onnx-qint8's default)
FP32_FILE = "minilm-fp32.onnx"
QINT8_FILE = "minilm-qint8.onnx"
RR_FILE = "minilm-qint8-rr.onnx"  # reduce_range (weights in -64..64): int8 for AVX2 CPUs without VNNI
#: ``precision`` -> the file it runs (``auto`` resolves to one of them on each CPU: kernels.auto_precision)
MODEL_FILES = {"int8": QINT8_FILE, "int8-rr": RR_FILE, "fp32": FP32_FILE}


def file_sha256(path: str | Path) -> str:
    """Content hash of a model file: the part of the cache key that changes when the weights do."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def resolve_precision(precision: str, flags: set[str] | None = None) -> str:
    """``precision`` with ``auto`` resolved for the CPU with ``flags`` (read here when None): ``int8`` on
    VNNI/AMX, ``int8-rr`` on AVX2 without VNNI, ``fp32`` elsewhere (kernels.auto_precision)."""
    if precision not in ("auto", *MODEL_FILES):
        raise ValueError(f"embedding precision must be auto, {', '.join(MODEL_FILES)}, not {precision!r}")
    if precision != "auto":
        return precision
    return auto_precision(cpu_flags() if flags is None else flags)


def choose_model_file(model_dir: str | Path, flags: set[str] | None = None) -> Path:
    """The file ``precision: auto`` runs on the CPU with ``flags``: :func:`resolve_precision`."""
    return Path(model_dir) / MODEL_FILES[resolve_precision("auto", flags)]


def _atomic(target: Path, write) -> None:
    """Write through a temp file in the same folder, then rename: a killed job leaves no half model."""
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".onnx", delete=False) as tmp:
        tmp_path = Path(tmp.name)
    try:
        write(tmp_path)
        tmp_path.chmod(0o644)
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def export_fp32(model_dir: Path, target: Path) -> None:
    """torch.onnx.export of the transformer (last_hidden_state), dynamic batch and sequence axes."""
    import torch
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()

    class Hidden(torch.nn.Module):
        """Positional inputs → last_hidden_state (the transformers signature varies between versions)."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, return_dict=True
            ).last_hidden_state

    model = Hidden().eval()
    ids = torch.ones((2, 16), dtype=torch.int64)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "seq"} for n in names} | {"last_hidden_state": {0: "batch", 1: "seq"}}

    def write(path: Path) -> None:
        with torch.no_grad():
            torch.onnx.export(
                model,
                (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                str(path),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
                do_constant_folding=True,
            )

    _atomic(target, write)


#: quantize_dynamic settings per int8 variant. "s8" is the built file (:data:`QINT8_FILE`): exact on VNNI,
#: but AVX2's u8·s8 instruction (vpmaddubsw) saturates its int16 pair sums. Two variants for CPUs without
#: VNNI (docs/encoder.md): "rr" (reduce_range: symmetric weights in -64..64, so a pair sum is at most
#: 2·255·64 = 32640 < 32767 and no kernel saturates; :data:`RR_FILE`, what ``auto`` runs on AVX2) and
#: "u8u8" (u8 weights: AVX2 multiplies in int16, exact, at half vpmaddubsw's rate; the bench measures it).
INT8_VARIANTS: dict[str, dict] = {"s8": {}, "rr": {"reduce_range": True}, "u8u8": {"weight_type": "QUInt8"}}
#: the int8 variants built as model files, by file name (the others are the bench's alone)
BUILT_VARIANTS = {QINT8_FILE: "s8", RR_FILE: "rr"}


def quantize_int8(fp32: Path, target: Path, variant: str = "s8") -> None:
    """Dynamic int8: weights per output channel, activations quantized per batch at run time."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    settings = {"weight_type": "QInt8", **INT8_VARIANTS[variant]}
    weights = QuantType[settings.pop("weight_type")]
    _atomic(
        target,
        lambda path: quantize_dynamic(
            str(fp32), str(path), weight_type=weights, per_channel=True, op_types_to_quantize=["MatMul"], **settings
        ),
    )


def build_int8_variant(out_dir: str | Path, name: str, model_dir: str | Path | None = None) -> Path:
    """Quantize the int8 file ``name`` (:data:`BUILT_VARIANTS`) from the fp32 export in ``out_dir``,
    exporting it first where missing. The s8 file is rule encoder_qint8's (beside the export), the rr file
    rule encoder_qint8_rr's: only grids whose encoder runs it build it, so the others' DAG is unchanged."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fp32 = out / FP32_FILE
    if not fp32.exists():
        export_fp32(Path(model_dir) if model_dir else minilm_path(), fp32)
    quantize_int8(fp32, out / name, BUILT_VARIANTS[name])
    return out


def int8_files(precision: str) -> list[str]:
    """The built int8 files an ``onnx-qint8`` encoder of ``precision`` needs beside the fp32 export: the
    int8 file always (rule encoder_qint8 writes it with the export), the reduce-range file only where the
    encoder runs it on this CPU (rule encoder_qint8_rr): a VNNI CPU neither plans nor builds it."""
    return [QINT8_FILE, *([RR_FILE] if resolve_precision(precision) == "int8-rr" else [])]


def ensure_qint8_model(model: str | None, precision: str) -> Path:
    """The folder of an ``onnx-qint8`` encoder's model files (its ``model:`` or :data:`QINT8_DIR`), the
    ones it needs (:func:`int8_files`) built first when missing: for what runs outside the DAG (``make
    bench``), where the encoder_qint8 rules have not built them."""
    folder = Path(model or QINT8_DIR)
    for name in int8_files(precision):
        if not (folder / name).exists():
            build_int8_variant(folder, name)
    return folder
