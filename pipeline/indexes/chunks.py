"""The ``chunks`` kind: the flat baseline, fixed-size overlapping sentence windows
(pipeline.index_structures.flat) embedded directly; no parents, so no expansion."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config_schema import key
from pipeline.indexes.tree import LevelSearcher
from pipeline.registry.index_kinds import ConfigError, IndexJob, IndexKind, IndexSpec, register


@dataclass(frozen=True)
class ChunksSpec(IndexSpec):
    chunk_tokens: int = key("tokens per chunk", type="integer", default=512, schema={"minimum": 16})
    overlap_tokens: int = key("tokens a chunk shares with the next", type="integer", default=64, schema={"minimum": 0})


def build(job: IndexJob) -> dict:
    from pipeline.index_structures.build import build_dense_index
    from pipeline.index_structures.flat import build_chunk_index

    spec = job.spec
    assert isinstance(spec, ChunksSpec)
    return build_dense_index(
        job,
        lambda trees, embed, count, writer: build_chunk_index(
            trees, embed, count, writer, spec.chunk_tokens, spec.overlap_tokens
        ),
    )


def check(spec: ChunksSpec, sprout: object) -> None:
    if spec.overlap_tokens >= spec.chunk_tokens:
        raise ConfigError.at(f"indexes.{spec.name}.overlap_tokens", "must be below chunk_tokens")


KIND = register(
    IndexKind(
        name="chunks",
        build=build,
        searcher=LevelSearcher,
        source="dense",
        embeds=True,
        shards=True,
        spec=ChunksSpec,
        levels=frozenset({"chunk"}),
        default_levels=("chunk",),
        default_expand="none",
        no_expand="chunks have no parents to expand to",
        check_index=check,
    )
)
