"""The document tree every stage shares: document -> section -> paragraph -> sentence.

Parsers do not compute offsets themselves: they describe a document as nested
``SectionSpec``/``ParagraphSpec`` lists and :func:`build_tree` lays out the document
text, so that every node's ``start``/``end`` are exact character offsets into
``DocTree.text`` and node ids are stable (they depend on position, never on run order).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.specs import TREE_LEVELS as LEVELS  # noqa: F401 (re-exported) the config schema's list: one copy of the level names

PARAGRAPH_KINDS = ("text", "table", "figure")
PARAGRAPH_SEP = "\n\n"
SENTENCE_SEP = " "


@dataclass
class Node:
    """One node of a document tree; ``start``/``end`` index into ``DocTree.text``."""

    id: str
    doc_id: str
    level: str
    kind: str
    parent: str | None
    title: str
    text: str
    start: int
    end: int
    pages: list[int] = field(default_factory=list)
    bbox: list[float] | None = None
    children: list[str] = field(default_factory=list)

    @property
    def page(self) -> int | None:
        return self.pages[0] if self.pages else None


@dataclass
class ParagraphSpec:
    """What a parser knows about a paragraph before offsets exist."""

    sentences: list[str]
    kind: str = "text"
    pages: list[int] = field(default_factory=list)
    bbox: list[float] | None = None
    sentence_bboxes: list[list[float] | None] | None = None


@dataclass
class SectionSpec:
    """A section: its own paragraphs first, then its subsections (nested numbering "2" > "2.1")."""

    title: str
    paragraphs: list[ParagraphSpec]
    pages: list[int] = field(default_factory=list)
    subsections: list[SectionSpec] = field(default_factory=list)
    bbox: list[float] | None = None


@dataclass
class DocTree:
    doc_id: str
    title: str
    text: str
    nodes: dict[str, Node]
    metadata: dict = field(default_factory=dict)

    @property
    def root(self) -> Node:
        return self.nodes[self.doc_id]

    def at_level(self, level: str) -> Iterator[Node]:
        return (n for n in self.nodes.values() if n.level == level)

    def parent_of(self, node_id: str) -> Node | None:
        parent = self.nodes[node_id].parent
        return self.nodes[parent] if parent else None

    def ancestors(self, node_id: str) -> list[Node]:
        """Parent first, document last."""
        out, node = [], self.parent_of(node_id)
        while node is not None:
            out.append(node)
            node = self.parent_of(node.id)
        return out

    def check(self) -> None:
        """Raise if any node's text is not exactly its slice of the document text."""
        for n in self.nodes.values():
            if self.text[n.start : n.end] != n.text:
                raise ValueError(f"{n.id}: text does not match offsets {n.start}:{n.end}")

    def to_json(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "metadata": self.metadata,
            "text": self.text,
            # Node texts are slices of ``text``; storing offsets only keeps files lean and consistent.
            "nodes": [{k: v for k, v in asdict(n).items() if k != "text"} for n in self.nodes.values()],
        }

    @classmethod
    def from_json(cls, data: dict) -> DocTree:
        text = data["text"]
        nodes = {n["id"]: Node(text=text[n["start"] : n["end"]], **n) for n in data["nodes"]}
        return cls(data["doc_id"], data["title"], data["text"], nodes, data.get("metadata", {}))

    def save(self, path: str | Path) -> None:
        from pipeline.io import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True))

    @classmethod
    def load(cls, path: str | Path) -> DocTree:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def build_tree(doc_id: str, title: str, sections: list[SectionSpec], metadata: dict | None = None) -> DocTree:
    """Lay out the document text and create nodes with exact offsets and stable ids.

    Ids: ``doc``, ``doc:s{S}``, ``doc:s{S}:p{P}``, ``doc:s{S}:p{P}:t{T}`` with 1-based
    indices that restart inside their parent; a subsection nests its id in its parent's
    (``doc:s2:s1:p1:t1``), so an id prefix is always an ancestor. Empty sentences,
    paragraphs and sections are dropped here, once, so no parser has to remember to.
    """
    b = _Builder(doc_id)
    root = Node(doc_id, doc_id, "document", "document", None, title, "", 0, 0)
    b.nodes[doc_id] = root
    for s_index, spec in enumerate((x for x in sections if _has_text(x)), start=1):
        b.section(root, f"{doc_id}:s{s_index}", spec)
    nodes = b.nodes
    text = "".join(b.parts)
    root.end = len(text)
    for node in nodes.values():
        if node.level in ("section", "paragraph"):
            node.text = text[node.start : node.end]
    if sections:
        root.pages = sorted({p for n in nodes.values() for p in n.pages})
    root.text = text
    return DocTree(doc_id, title, text, nodes, metadata or {})


class _Builder:
    """:func:`build_tree`'s state: the nodes made so far and the text laid out so far (``pos`` its length)."""

    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id
        self.nodes: dict[str, Node] = {}
        self.parts: list[str] = []
        self.pos = 0

    def emit(self, piece: str) -> tuple[int, int]:
        """Append ``piece`` to the text; its (start, end)."""
        self.parts.append(piece)
        start = self.pos
        self.pos += len(piece)
        return start, self.pos

    def paragraph(self, parent: Node, p_index: int, para: ParagraphSpec) -> None:
        if self.parts:
            self.emit(PARAGRAPH_SEP)
        par_id = f"{parent.id}:p{p_index}"
        pos = self.pos
        par = Node(
            par_id, self.doc_id, "paragraph", para.kind, parent.id, "", "", pos, pos, list(para.pages), para.bbox
        )
        self.nodes[par_id] = par
        parent.children.append(par_id)
        boxes = para.sentence_bboxes or [None] * len(para.sentences)
        t_index = 0
        for sentence, box in zip(para.sentences, boxes):
            sentence = sentence.strip()
            if not sentence:
                continue
            t_index += 1
            if t_index > 1:
                self.emit(SENTENCE_SEP)
            start, end = self.emit(sentence)
            sid = f"{par_id}:t{t_index}"
            self.nodes[sid] = Node(
                sid, self.doc_id, "sentence", para.kind, par_id, "", sentence, start, end, list(para.pages), box
            )
            par.children.append(sid)
        par.end = self.pos

    def section(self, parent: Node, sec_id: str, spec: SectionSpec) -> None:
        pos = self.pos
        sec = Node(sec_id, self.doc_id, "section", "section", parent.id, spec.title, "", pos, pos, [], spec.bbox)
        self.nodes[sec_id] = sec
        parent.children.append(sec_id)
        for p_index, para in enumerate(_kept_paragraphs(spec), start=1):
            self.paragraph(sec, p_index, para)
        for k_index, sub in enumerate((x for x in spec.subsections if _has_text(x)), start=1):
            self.section(sec, f"{sec_id}:s{k_index}", sub)
        sec.start, sec.end = self.nodes[sec.children[0]].start, self.pos  # separators belong to no node
        kids = (self.nodes[c].pages for c in sec.children)
        sec.pages = sorted(set(spec.pages).union(*kids))


def _kept_paragraphs(spec: SectionSpec) -> list[ParagraphSpec]:
    return [p for p in spec.paragraphs if any(s.strip() for s in p.sentences)]


def _has_text(spec: SectionSpec) -> bool:
    return bool(_kept_paragraphs(spec)) or any(_has_text(x) for x in spec.subsections)


def section_depth(node_id: str) -> int:
    """How deep a section id is nested: ``doc:s2`` is 1, ``doc:s2:s1`` is 2."""
    return sum(1 for part in node_id.split(":")[1:] if part.startswith("s"))
