"""The ``chunks`` kind: the flat baseline, fixed-size overlapping sentence windows
(pipeline.index.flat) embedded directly; no parents, so no expansion."""

from __future__ import annotations

from pipeline.index_kinds import ConfigProblem, IndexKind, register
from pipeline.indexes.tree import LevelSearcher


def build(tree_paths: list[str], out: str, params: dict, inputs: dict, cache_dir: str) -> dict:
    from pipeline.index.build import build_dense_index
    from pipeline.index.flat import build_chunk_index

    idx = params["index"]
    return build_dense_index(
        tree_paths,
        out,
        idx,
        params["embedding"],
        cache_dir,
        params,
        lambda trees, embed, count, writer: build_chunk_index(
            trees, embed, count, writer, idx["chunk_tokens"], idx["overlap_tokens"]
        ),
    )


def check(name: str, idx: dict, cfg: dict) -> None:
    if idx["overlap_tokens"] >= idx["chunk_tokens"]:
        raise ConfigProblem(f"indexes.{name}.overlap_tokens", "must be below chunk_tokens")


KIND = register(
    IndexKind(
        name="chunks",
        build=build,
        searcher=LevelSearcher,
        source="dense",
        embeds=True,
        levels=frozenset({"chunk"}),
        default_levels=("chunk",),
        default_expand="none",
        index_keys=frozenset({"chunk_tokens", "overlap_tokens"}),
        index_defaults={"chunk_tokens": 512, "overlap_tokens": 64},
        no_expand="chunks have no parents to expand to",
        check_index=check,
    )
)
