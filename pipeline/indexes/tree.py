"""The ``tree`` kind: KohakuRAG's hierarchy, sentences embedded and parents aggregated
(pipeline.index.hier), searched densely at any tree level."""

from __future__ import annotations

from pathlib import Path

from pipeline.index_kinds import TREE_LEVELS, IndexKind, register


def build(tree_paths: list[str], out: str, params: dict, inputs: dict, cache_dir: str) -> dict:
    from pipeline.index.build import build_dense_index
    from pipeline.index.hier import build_tree_index

    return build_dense_index(tree_paths, out, params["index"], params["embedding"], cache_dir, params, build_tree_index)


class LevelSearcher:
    """A dense searcher restricted to the variant's levels."""

    def __init__(self, path: Path, params: dict, cache_dir: str | Path):
        from pipeline.index.dense import DenseSearcher

        self.dense = DenseSearcher(path, params["embedding"], cache_dir)
        self.store, self.levels = self.dense.reader, params["retrieval"]["levels"]

    def encode(self, queries: list[str]):
        return self.dense.encode(queries)

    def search(self, query: str, qvec, k: int):
        return self.dense.search(qvec, k, self.levels)


KIND = register(
    IndexKind(
        name="tree",
        build=build,
        searcher=LevelSearcher,
        source="dense",
        embeds=True,
        tree_vectors=True,
        levels=TREE_LEVELS,
        default_levels=("sentence", "paragraph"),
        default_expand="paragraph",
        hybrid_role="dense",
    )
)
