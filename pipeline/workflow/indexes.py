"""What an index job reads: its dataset's trees, a dense index's encoder files, and its kind's extra inputs."""

from __future__ import annotations

from pipeline import paths
from pipeline.registry.index_kinds import kind_of
from pipeline.workflow.datasets import tree_files
from pipeline.workflow.models import encoder_model_inputs


def _extra(cfg: dict, dataset: str, index: str, heads: str | None) -> dict[str, str]:
    """The kind's extra inputs; ``heads`` replaces the trained head weights (a cross-fitted fold's file)."""
    kind = kind_of(cfg["indexes"][index])
    extra = kind.extra_inputs(kind.parse(index, cfg["indexes"][index]), dataset)
    return {n: heads if heads and p == paths.SPROUT_HEAD_WEIGHTS else p for n, p in extra.items()}


def index_inputs(cfg: dict, dataset: str, index: str, heads: str | None = None) -> list[str]:
    """The trees, a dense index's packaged encoder files, and the kind's extra inputs (a sprout
    index: the attention file and, with trained heads, the head weights, or ``heads`` instead)."""
    kind = kind_of(cfg["indexes"][index])
    models = encoder_model_inputs(cfg, index) if kind.embeds else []
    return tree_files(cfg, dataset) + models + list(_extra(cfg, dataset, index, heads).values())


def index_extra_args(cfg: dict, dataset: str, index: str, heads: str | None = None) -> str:
    """``--input NAME=PATH`` for each of the kind's extra inputs (the ``index`` verb hands them to its builder)."""
    return " ".join(f"--input {name}={path}" for name, path in _extra(cfg, dataset, index, heads).items())
