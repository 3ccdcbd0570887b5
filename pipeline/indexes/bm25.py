"""The ``bm25`` kind: rank-bm25 over the tokenised tree nodes of the index's ``levels``
(pipeline.index_structures.bm25); the lexical side of a hybrid."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config_schema import key
from pipeline.registry.index_kinds import TREE_LEVELS, IndexJob, IndexKind, IndexSpec, SearchJob, register
from pipeline.specs import LEVEL_FUSIONS


@dataclass(frozen=True)
class BM25Spec(IndexSpec):
    levels: list[str] = key(
        "the levels whose nodes are tokenised",
        type="array",
        default=["sentence", "paragraph"],
        schema={"minItems": 1, "items": {"$ref": "#/definitions/tree_level"}},
    )


@dataclass(frozen=True)
class LexicalSettings:
    """The ``retrieval.<v>`` keys of a variant that searches a bm25 index."""

    level_fusion: str = key("how BM25 merges its per-level rankings", choices=LEVEL_FUSIONS, default="score")


def build(job: IndexJob) -> dict:
    from pipeline.index_structures.build import build_lexical_index

    assert isinstance(job.spec, BM25Spec)
    return build_lexical_index(job, list(job.spec.levels))


class LexicalSearcher:
    """BM25 over the variant's levels, merged across levels by its ``level_fusion``."""

    def __init__(self, job: SearchJob):
        from pipeline.index_structures.bm25 import BM25Searcher

        self.bm25 = BM25Searcher(job.path, list(job.retrieval.levels))
        self.store, self.fusion = self.bm25.reader, job.settings.level_fusion

    def search(self, query: str, qvec, k: int):
        return self.bm25.search(query, k, fusion=self.fusion)


KIND = register(
    IndexKind(
        name="bm25",
        build=build,
        searcher=LexicalSearcher,
        source="bm25",
        spec=BM25Spec,
        search_spec=LexicalSettings,
        levels=TREE_LEVELS,
        levels_from_index=True,
        default_levels=("sentence", "paragraph"),
        default_expand="paragraph",
        hybrid_role="lexical",
    )
)
