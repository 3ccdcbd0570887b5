"""What an index job reads: its dataset's trees, a dense index's encoder files, and its kind's extra inputs."""

from __future__ import annotations

from pipeline.registry.index_kinds import kind_of
from pipeline.shards import Shard
from pipeline.workflow.datasets import tree_files
from pipeline.workflow.models import encoder_model_inputs
from pipeline.workflow.shards import index_parts, part_args


def index_inputs(cfg: dict, dataset: str, index: str) -> list[str]:
    """The trees, a dense index's packaged encoder files, and the kind's extra inputs (a sprout
    index: the attention file and, with trained heads, the head weights). The parts a sharded dense index
    merges are the rule's other input (pipeline/workflow/shards.py: index_parts)."""
    kind = kind_of(cfg["indexes"][index])
    models = encoder_model_inputs(cfg, index) if kind.embeds else []
    extra = kind.extra_inputs(kind.parse(index, cfg["indexes"][index]), dataset)
    return tree_files(cfg, dataset) + models + list(extra.values())


def index_extra_args(cfg: dict, dataset: str, index: str, shards: list[Shard] | None = None) -> str:
    """``--input NAME=PATH`` for each of the kind's extra inputs (the ``index`` verb hands them to its builder),
    and ``--part PATH`` for each part it merges (none in one shard: the rule's params stay as they were)."""
    kind = kind_of(cfg["indexes"][index])
    extra = kind.extra_inputs(kind.parse(index, cfg["indexes"][index]), dataset)
    parts = part_args(index_parts(dataset, index, shards or []))
    return " ".join([*(f"--input {name}={path}" for name, path in extra.items()), *([parts] if parts else [])])
