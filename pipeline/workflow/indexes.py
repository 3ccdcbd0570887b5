"""What an index job reads: its dataset's trees, a dense index's encoder files, and its kind's extra inputs."""

from __future__ import annotations

from pipeline.registry.index_kinds import kind_of
from pipeline.workflow.datasets import tree_files
from pipeline.workflow.models import encoder_model_inputs


def index_inputs(cfg: dict, dataset: str, index: str) -> list[str]:
    """The trees, a dense index's packaged encoder files, and the kind's extra inputs (a sprout
    index: the attention file and, with trained heads, the head weights)."""
    kind = kind_of(cfg["indexes"][index])
    models = encoder_model_inputs(cfg, index) if kind.embeds else []
    extra = kind.extra_inputs(kind.parse(index, cfg["indexes"][index]), dataset)
    return tree_files(cfg, dataset) + models + list(extra.values())


def index_extra_args(cfg: dict, dataset: str, index: str) -> str:
    """``--input NAME=PATH`` for each of the kind's extra inputs (the ``index`` verb hands them to its builder)."""
    kind = kind_of(cfg["indexes"][index])
    extra = kind.extra_inputs(kind.parse(index, cfg["indexes"][index]), dataset)
    return " ".join(f"--input {name}={path}" for name, path in extra.items())
