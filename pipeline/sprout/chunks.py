"""Leaf chunks: ``max_sentences_per_chunk`` consecutive sentences of the shared DocTree.

SproutRAG groups sentences in fixed, non-overlapping runs ([0,1], [2,3], ...) over the whole
document, ignoring paragraphs. Sentences come from the same trees every other variant indexes
(not the reference's regex splitter), so gold spans and hits line up across variants; a chunk's
text is the exact tree-text slice from its first sentence's start to its last sentence's end.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.tree import DocTree


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    index: int  # 0-based position in the document
    start: int  # character offsets into DocTree.text
    end: int
    sentence_ids: tuple[str, ...]
    pages: tuple[int, ...] = ()

    @property
    def node_id(self) -> str:
        return leaf_id(self.doc_id, self.index)


def leaf_id(doc_id: str, index: int) -> str:
    return f"{doc_id}::leaf::{index}"


def internal_id(doc_id: str, merge: int) -> str:
    return f"{doc_id}::internal::{merge}"


def leaf_chunks(tree: DocTree, max_sentences: int = 2) -> list[Chunk]:
    """Chunks in document order; a document without sentences gives one whole-text chunk
    (none when its text is empty)."""
    if max_sentences < 1:
        raise ValueError(f"max_sentences_per_chunk must be >= 1, got {max_sentences}")
    sents = sorted(tree.at_level("sentence"), key=lambda n: n.start)
    if not sents:
        return [Chunk(tree.doc_id, 0, 0, len(tree.text), ())] if tree.text.strip() else []
    out: list[Chunk] = []
    for i in range(0, len(sents), max_sentences):
        run = sents[i : i + max_sentences]
        pages = tuple(sorted({p for s in run for p in s.pages}))
        out.append(Chunk(tree.doc_id, len(out), run[0].start, run[-1].end, tuple(s.id for s in run), pages))
    return out
