"""Which ONNX Runtime kernels this CPU gets, by family: what an int8 cache key and an encoder-path stamp
name. ORT (its MLAS library) picks its GEMM kernels from CPUID when it loads; no setting overrides it, so
the same model file can give different vectors on two machines.

- int8 (``MatMulInteger``): VNNI (``vpdpbusd``) and AMX (``tdpbusd``) sum u8·s8 products into int32
  exactly, so they give the same integers and share the family ``vnni``. Without them, x86 multiplies
  with ``vpmaddubsw``, whose int16 pair sums saturate (2·255·127 > 32767): ``avx512`` (AVX-512BW) and
  ``avx2`` then give other vectors. The family is in the int8 cache key. The reduce-range file (weights
  in -64..64) cannot saturate there, which is why ``precision: auto`` runs it on those CPUs
  (:func:`auto_precision`, docs/encoder.md).
- fp32: the SGEMM and softmax kernels differ by vector width (``avx512``, ``avx2``, ``avx``, ``sse``;
  Arm ``neon``), which can move the last bits of a vector. That family is recorded (manifests, stamps)
  but not keyed: last-bit differences reach a result through every uncached computation too (query
  vectors, scores) on whichever machine runs the job, so a key would not make a mixed-machine run
  reproducible, and it would retire every fp32 vector already cached (docs/encoder.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

#: cpuinfo flags of the int8 dot-product instructions that make MatMulInteger faster than fp32 GEMM
#: (x86 VNNI/AMX; Arm's SDOT "asimddp" and I8MM "i8mm", which onnxruntime's int8 kernels use too)
VNNI_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm")
_X86_EXACT_INT8 = ("avx512_vnni", "avx_vnni", "amx_int8")


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str]:
    """The CPU feature flags Linux reports (empty where there is no /proc/cpuinfo)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return set()
    return {
        f
        for line in text.splitlines()
        if line.split(":")[0].strip() in ("flags", "Features")
        for f in line.split(":", 1)[1].split()
    }


def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU's model name (Linux's "model name"; the machine type elsewhere): which encoder file
    ``precision: auto`` picks, and so the vectors, depend on it (a kept run records it)."""
    import platform

    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        if line.split(":")[0].strip() in ("model name", "Model"):
            return " ".join(line.split(":", 1)[1].split())
    return platform.processor() or platform.machine() or "unknown"


def key_precision(model_id: str) -> str:
    """What an encoder cache key computes in: "int8" for the file-built int8 MiniLMs (``…/onnx-qint8-b1-…``,
    ``…/onnx-qint8rr-b1-…``, their keys naming the int8 family), "api" for a hosted one (``…/litellm``),
    "fp32" for the others (the packaged ``onnx-int8`` file is fp32 inside: embed/quantize.py)."""
    return "int8" if "/onnx-qint8" in model_id else "api" if model_id.endswith("/litellm") else "fp32"


def has_int8_dot(flags: set[str]) -> bool:
    return any(f in flags for f in VNNI_FLAGS)


def auto_precision(flags: set[str]) -> str:
    """What ``precision: auto`` runs on a CPU (issue 34 item 2): ``int8`` where int8 dot products sum
    the int8 file exactly and fast (VNNI/AMX, Arm SDOT/I8MM); ``int8-rr`` on x86 with AVX2 but no VNNI
    (AVX-512BW without VNNI included), whose ``vpmaddubsw`` would saturate on the int8 file's pair sums
    but not on the reduce-range file's (2·255·64 < 32767); the fp32 export elsewhere."""
    if has_int8_dot(flags):
        return "int8"
    return "int8-rr" if "avx2" in flags and not _arm(flags) else "fp32"


def _arm(flags: set[str]) -> bool:
    return "asimd" in flags or "neon" in flags


def int8_family(flags: set[str]) -> str:
    """The int8 GEMM family: ``vnni`` (VNNI or AMX, exact), ``avx512`` / ``avx2`` (saturating pair sums),
    ``sse``; Arm ``dotprod`` (SDOT/I8MM) or ``neon``; ``unknown`` without flags."""
    if any(f in flags for f in _X86_EXACT_INT8):
        return "vnni"
    if _arm(flags):
        return "dotprod" if has_int8_dot(flags) else "neon"
    if "avx512bw" in flags:
        return "avx512"
    if "avx2" in flags:
        return "avx2"
    return "sse" if "sse2" in flags else "unknown"


def fp32_family(flags: set[str]) -> str:
    """The fp32 GEMM family: ``avx512`` (AVX-512F), ``avx2`` (with FMA), ``avx``, ``sse``; Arm ``neon``."""
    if _arm(flags):
        return "neon"
    for family, needs in (("avx512", {"avx512f"}), ("avx2", {"avx2", "fma"}), ("avx", {"avx"}), ("sse", {"sse2"})):
        if needs <= flags:
            return family
    return "unknown"


@dataclass(frozen=True)
class EncoderPath:
    """What an encoder computes in and on which kernels: ``int8 (vnni)``, ``int8-rr (avx2)``, ``fp32 (avx2)``."""

    precision: str  # "int8", "int8-rr" (reduce-range weights) or "fp32" (the packaged "int8" file is fp32)
    kernels: str  # the family of :func:`int8_family` or :func:`fp32_family`

    @property
    def label(self) -> str:
        return f"{self.precision} ({self.kernels})"

    def as_dict(self) -> dict[str, str]:
        return {**asdict(self), "label": self.label}


def encoder_path(encoder: object, flags: set[str] | None = None) -> EncoderPath:
    """The path ``encoder`` runs on this CPU (``flags``: its cpuinfo flags; read here when None). An
    encoder says its precision in ``precision``: ``int8`` or ``int8-rr`` (the onnx-qint8 int8 files), ``api``
    (a provider computes it: ``api (remote)``), else fp32 (the packaged "int8" file included)."""
    flags = cpu_flags() if flags is None else flags
    precision = str(getattr(encoder, "precision", "fp32"))
    family = {"int8": int8_family, "int8-rr": int8_family, "fp32": fp32_family}.get(precision)
    return EncoderPath(precision, family(flags) if family else "remote")
