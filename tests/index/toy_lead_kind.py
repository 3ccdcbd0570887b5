"""A toy index kind for tests/index/test_index_kinds.py: each document's first sentences ("lead"),
searched by how many distinct query words a sentence contains. It is a plugin, exactly as docs/architecture.md
("Adding an index kind") says: one module with its build and search code and its registration (the last line),
declared by its distribution's pyproject.toml as entry point ``lead = "toy_lead_kind"`` of group
``wattbench.index_kinds`` and pip-installed (the test's PLUGIN)."""
from __future__ import annotations

import json
import re

from pipeline.registry.index_kinds import IndexJob, IndexKind, SearchJob, register

LEAD_SENTENCES = 5


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def build(job: IndexJob) -> dict:
    from pipeline.index_structures.store import IndexWriter, StoredNode
    from pipeline.provenance import write_manifest
    from pipeline.tree import DocTree

    writer = IndexWriter(job.out, None, {"model_id": "lead", "index": job.provenance["index"]})
    nodes = [n for p in sorted(job.trees) for n in list(DocTree.load(p).at_level("sentence"))[:LEAD_SENTENCES]]
    writer.add([StoredNode.from_node(n) for n in nodes], tokens=[words(n.text) for n in nodes])
    writer.close()
    write_manifest(job.out, job.provenance, inputs=sorted(job.trees), counts={"sentence": len(nodes)})
    return {"counts": {"sentence": len(nodes)}}


class LeadSearcher:
    def __init__(self, job: SearchJob):
        from pipeline.index_structures.store import IndexReader

        self.store = IndexReader(job.path)
        self.rows = self.store.db.execute("SELECT rowid, tokens FROM nodes ORDER BY rowid").fetchall()

    def search(self, query: str, qvec, k: int):
        q = set(words(query))
        scored = [(len(q & set(json.loads(t))), r) for r, t in self.rows]
        best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:k]
        return [(self.store.node_by_rowid(r), float(s)) for s, r in best]


KIND = register(IndexKind(
    name="lead", build=build, searcher=LeadSearcher, source="lead",
    levels=frozenset({"sentence"}), default_levels=("sentence",), default_expand="none",
    parents_are_context=False, no_expand="the lead index holds no paragraphs to expand to",
))
