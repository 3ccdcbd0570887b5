"""The ``bm25`` kind: rank-bm25 over the tokenised tree nodes of the index's ``levels``
(pipeline.index.bm25); the lexical side of a hybrid."""

from __future__ import annotations

from pathlib import Path

from pipeline.index_kinds import TREE_LEVELS, IndexKind, register


def build(tree_paths: list[str], out: str, params: dict, inputs: dict, cache_dir: str) -> dict:
    from pipeline.index.build import build_lexical_index

    return build_lexical_index(tree_paths, out, params["index"], params)


class LexicalSearcher:
    """BM25 over the variant's levels, merged across levels by its ``level_fusion``."""

    def __init__(self, path: Path, params: dict, cache_dir: str | Path):
        from pipeline.index.bm25 import BM25Searcher

        cfg = params["retrieval"]
        self.bm25 = BM25Searcher(path, cfg["levels"])
        self.store, self.fusion = self.bm25.reader, cfg.get("level_fusion", "score")

    def search(self, query: str, qvec, k: int):
        return self.bm25.search(query, k, fusion=self.fusion)


KIND = register(
    IndexKind(
        name="bm25",
        build=build,
        searcher=LexicalSearcher,
        source="bm25",
        levels=TREE_LEVELS,
        levels_from_index=True,
        default_levels=("sentence", "paragraph"),
        default_expand="paragraph",
        index_keys=frozenset({"levels"}),
        index_defaults={"levels": ["sentence", "paragraph"]},
        retrieval_keys=frozenset({"level_fusion"}),
        hybrid_role="lexical",
    )
)
