"""The retrieval stage, KohakuRAG's stack as configurable steps:

plan queries -> per query: dense / BM25 / hybrid top-k -> cross-query rerank -> hits (each with
its context node and the planned queries that matched it) -> context snippets (parents, siblings,
tree dedup, ``top_k_final``, token budget). Output: the retrieval JSONL contract. The stage reads a
:class:`RetrieveJob` (typed specs), which the ``retrieve`` verb makes from the rule's hashed params.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from tqdm import tqdm

from pipeline.config_schema import ConfigTable
from pipeline.index_structures.store import IndexReader, StoredNode
from pipeline.ranking.rerank import rerank
from pipeline.registry.index_kinds import IndexKind, SearchJob, kind_of
from pipeline.registry.retrieval_modes import FUSIONS
from pipeline.retrieve.expand import expand_context
from pipeline.retrieve.planner import make_planner, mine_acronyms
from pipeline.specs import ContextSpec, EncoderSpec, RetrievalSpec

ORDER = ["chunk", "sentence", "paragraph", "section", "document"]


def expand(reader: IndexReader, node: StoredNode, to: str) -> StoredNode:
    """The node's ancestor at level ``to`` (the node itself when it is at or above it)."""
    if to == "none" or node.level == "chunk":
        return node
    current = node
    while ORDER.index(current.level) < ORDER.index(to) and current.parent:
        parent = reader.node(current.parent)
        if parent is None:
            raise KeyError(f"node {current.node_id}'s parent {current.parent} is not in the index")
        current = parent
    return current


def hit_record(node: StoredNode, score: float, context: StoredNode, sources: set[str], queries: list[int]) -> dict:
    return {
        "node_id": node.node_id,
        "doc_id": node.doc_id,
        "level": node.level,
        "score": round(float(score), 6),
        "text": node.text,
        "start": node.start,
        "end": node.end,
        "pages": node.pages,
        "source": "+".join(sorted(sources)),
        "queries": queries,
        "context_id": context.node_id,
        "context": context.text,
    }


@dataclass(frozen=True)
class RetrieveJob:
    """One retrieval job, made by the ``retrieve`` verb from the rule's params: the variant's spec, its
    indexes (its own first, then its hybrid partner) and the query encoder."""

    spec: RetrievalSpec
    indexes: tuple[tuple[IndexKind, Path], ...]  # (kind, index file) per index the variant searches
    embedding: EncoderSpec | None  # the query encoder (None: no index of it embeds)
    cache_dir: Path

    @classmethod
    def from_params(cls, params: ConfigTable, index_dir: str | Path, cache_dir: str | Path) -> RetrieveJob:
        """``params`` is a retrieval slice of the config (:func:`pipeline.config.retrieval_slice`);
        index files are ``<index_dir>/<index name>.sqlite``."""
        spec = RetrievalSpec.from_dict(params.get("name", ""), params["retrieval"], params["indexes"])
        embedding = EncoderSpec.from_dict(params["embedding"]) if params.get("embedding") else None
        # named by the variant, never by the order of params["indexes"] (sorted keys: "bm25" before "hier")
        indexes = tuple((kind_of(params["indexes"][n]), Path(index_dir) / f"{n}.sqlite") for n in spec.index_names)
        return cls(spec, indexes, embedding, Path(cache_dir))

    def context(self) -> ContextSpec:
        """The variant's context, its ``parent_depth`` resolved: a sprout node's parent is its merge
        partner, not its context (its kind says so)."""
        if self.spec.context.parent_depth is not None:
            return self.spec.context
        return replace(self.spec.context, parent_depth=1 if self.indexes[0][0].parents_are_context else 0)


class Searchers:
    """The searchers of a variant's index (and its hybrid partner), each made by its kind, and one
    query's fused result list."""

    def __init__(self, job: RetrieveJob):
        spec = job.spec
        self.top_k, self.hybrid = spec.top_k, spec.hybrid
        self.fusion = FUSIONS.get(spec.hybrid.mode) if spec.hybrid else None
        self.searchers = [
            (kind, kind.searcher(SearchJob(path, spec, spec.searchers[name], job.embedding, job.cache_dir)))
            for (kind, path), name in zip(job.indexes, spec.index_names)
        ]
        self.kind, primary = self.searchers[0]
        self.store = primary.store
        # whatever embeds the queries (None: a lexical index only)
        self.encoder = next((s for _, s in self.searchers if hasattr(s, "encode")), None)
        self.hit_extra = getattr(primary, "hit_extra", None)  # per-hit fields of the kind (sprout: spans, height)

    def search(self, query: str, qvec) -> tuple[list[tuple[str, float]], dict[str, StoredNode], dict[str, set[str]]]:
        """Fused ranking, the nodes found, and which retrievers (dense, bm25, ...) found each."""
        top_k, hybrid = self.top_k, self.hybrid
        lists: dict[str, list[tuple[str, float]]] = {}
        nodes: dict[str, StoredNode] = {}
        for i, (kind, searcher) in enumerate(self.searchers):
            # a hybrid's dense side fetches enough for both; its lexical side hybrid.top_k
            k = top_k if not hybrid else max(top_k, hybrid.top_k) if i == 0 else hybrid.top_k
            found = searcher.search(query, qvec, k)
            lists[kind.source] = [(n.node_id, s) for n, s in found]
            nodes.update((n.node_id, n) for n, _ in found)
        if hybrid is None or self.fusion is None:
            ranked = next(iter(lists.values()))
        else:
            dense, lexical = (lists[kind.source] for kind, _ in self.searchers)
            ranked = self.fusion.fuse(dense, lexical, top_k, hybrid)
        members = {name: {n for n, _ in found} for name, found in lists.items()}
        return ranked, nodes, {n: {name for name in lists if n in members[name]} for n in nodes}


def retrieve(
    questions: Mapping[str, Sequence[str]], job: RetrieveJob, progress: bool = True, gateway=None
) -> list[dict]:
    """The retrieval JSONL rows of ``questions`` (one per question: columns ``id``, ``question`` and maybe
    ``answer_unit``, a DataFrame or :func:`pipeline.io.read_csv_columns`'s dict); ``gateway`` serves an
    LLM planner."""
    spec = job.spec
    searchers = Searchers(job)
    store = searchers.store

    def acronyms() -> dict[str, str]:  # the offline planner's, mined from the index's sentences
        return mine_acronyms(t for (t,) in store.db.execute("SELECT text FROM nodes WHERE level = 'sentence'"))

    planner = make_planner(spec.planner, acronyms, gateway)
    texts = list(questions["question"])
    units: list[str | None] = list(questions["answer_unit"]) if "answer_unit" in questions else [None] * len(texts)
    plans = planner.plan_all(texts, units, progress) if planner else [[q] for q in texts]  # an LLM's concurrently
    qvecs = iter(searchers.encoder.encode([q for p in plans for q in p])) if searchers.encoder else None
    ctx = job.context()
    out = []
    for qid, plan in tqdm(list(zip(questions["id"], plans)), desc="retrieve", disable=not progress):
        lists: list = []
        nodes: dict = {}
        sources: dict = {}
        for query in plan:
            ranked, found, source = searchers.search(query, next(qvecs) if qvecs else None)
            lists.append(ranked)
            nodes.update(found)
            for n, names in source.items():
                sources.setdefault(n, set()).update(names)
        order = rerank(lists, spec.rerank, spec.kohaku_compat)
        if ctx.top_k_final:  # else every unique match stays (KohakuRAG: ~top_k x queries)
            order = order[: ctx.top_k_final]
        hits = [
            hit_record(
                nodes[r.node_id], r.score, expand(store, nodes[r.node_id], spec.expand), sources[r.node_id], r.queries
            )
            for r in order
        ]
        snippets = expand_context(store, [r.node_id for r in order], replace(ctx, top_k_final=None))
        if searchers.hit_extra:  # sprout: exact spans (a subtree may cover non-adjacent leaves), size, height, depth
            for hit in hits:
                hit.update(searchers.hit_extra(hit["node_id"]))
        for hit in hits:  # what each match brought into the prompt context (after dedup and budget)
            hit["expansion"] = [s.node_id for s in snippets if s.source == hit["node_id"]]
        out.append(
            {"id": qid, "query": plan[0], "queries": plan, "hits": hits, "context": [asdict(s) for s in snippets]}
        )
    for question, reason in getattr(planner, "failures", None) or []:  # the LLM planner's fallbacks
        tqdm.write(f"planner failure (fell back to the question): {reason}: {question[:80]}")
    return out
