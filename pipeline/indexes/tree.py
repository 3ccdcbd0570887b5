"""The ``tree`` kind: KohakuRAG's hierarchy, sentences embedded and parents aggregated
(pipeline.index_structures.hier), searched densely at any tree level."""

from __future__ import annotations

from pipeline.registry.index_kinds import TREE_LEVELS, IndexJob, IndexKind, SearchJob, register


def build(job: IndexJob) -> dict:
    from pipeline.index_structures.build import build_dense_index
    from pipeline.index_structures.hier import build_tree_index

    return build_dense_index(job, build_tree_index)


class LevelSearcher:
    """A dense searcher restricted to the variant's levels."""

    def __init__(self, job: SearchJob):
        from pipeline.index_structures.dense import DenseSearcher

        if job.embedding is None:
            raise ValueError(f"{job.path}: a dense index needs the variant's embedding")
        self.dense = DenseSearcher(job.path, job.embedding, job.cache_dir)
        self.store, self.levels = self.dense.reader, list(job.retrieval.levels)

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
        shards=True,
        tree_vectors=True,
        levels=TREE_LEVELS,
        default_levels=("sentence", "paragraph"),
        default_expand="paragraph",
        hybrid_role="dense",
    )
)
