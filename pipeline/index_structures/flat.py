"""The flat baseline: fixed-size overlapping chunks of consecutive sentences, no hierarchy.

Chunks are cut at sentence boundaries (so evidence spans line up with the tree variants)
and ignore section and paragraph structure, like a plain chunked RAG index. Each chunk's
text is the exact slice of the document text it covers, embedded directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.index_structures.store import IndexWriter, StoredNode
from pipeline.tree import DocTree


@dataclass
class Chunk:
    doc_id: str
    index: int
    start: int
    end: int
    pages: list[int]


def chunk_tree(tree: DocTree, tokens: list[int], chunk_tokens: int, overlap_tokens: int) -> list[Chunk]:
    """Greedy windows of sentences up to ``chunk_tokens``; the next window starts so that
    about ``overlap_tokens`` of the previous one are repeated. A sentence longer than a
    chunk becomes a chunk of its own (the encoder truncates it; nothing is skipped)."""
    sents = list(tree.at_level("sentence"))
    chunks: list[Chunk] = []
    i = 0
    while i < len(sents):
        j, total = i, 0
        while j < len(sents) and (j == i or total + tokens[j] <= chunk_tokens):
            total += tokens[j]
            j += 1
        pages = sorted({p for s in sents[i:j] for p in s.pages})
        chunks.append(Chunk(tree.doc_id, len(chunks) + 1, sents[i].start, sents[j - 1].end, pages))
        if j >= len(sents):
            break
        back, k = 0, j
        while k - 1 > i and back + tokens[k - 1] <= overlap_tokens:
            k -= 1
            back += tokens[k]
        i = k
    return chunks


def build_chunk_index(
    trees: list[DocTree], embed, count_tokens, writer: IndexWriter, chunk_tokens: int, overlap_tokens: int
) -> dict:
    nodes: list[StoredNode] = []
    for tree in trees:
        sent_tokens = count_tokens([n.text for n in tree.at_level("sentence")])
        for c in chunk_tree(tree, sent_tokens, chunk_tokens, overlap_tokens):
            node_id = f"{c.doc_id}:c{c.index}"
            nodes.append(
                StoredNode(
                    node_id, c.doc_id, "chunk", "chunk", None, c.start, c.end, c.pages, tree.text[c.start : c.end]
                )
            )
    writer.add(nodes, embed([n.text for n in nodes]))
    return {"chunk": len(nodes)}
