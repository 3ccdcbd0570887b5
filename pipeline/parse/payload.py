"""The WattBot pre-extracted corpus (``corpus/<doc>.json``) as DocTrees.

That corpus holds one section per PDF page and, mostly, one paragraph per page of raw
pypdf text (odd spacing, mid-paragraph line breaks, hyphenation) plus image placeholder
paragraphs. We keep pages as sections (title "Page N"; real sections come later), recover
paragraphs inside the page text from line shapes, and re-split sentences with our splitter
instead of the corpus's crude regex.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from tqdm import tqdm

from pipeline.parse.text import clean_line, heading_title, paragraph_sentences, vocabulary
from pipeline.tree import DocTree, ParagraphSpec, SectionSpec, build_tree

_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table|Tab\.)\s*\d+[.:]")
SHORT_LINE = 0.75  # a line under this share of a full line may end a paragraph


def _full_line_length(lines: list[str]) -> int:
    """Length of a typical full line on the page (80th percentile): lines are justified."""
    lengths = sorted(len(x) for x in lines if x)
    return lengths[int(0.8 * (len(lengths) - 1))] if lengths else 0


def page_paragraphs(raw: str) -> list[list[str]]:
    """Group a page's cleaned lines into paragraphs.

    A paragraph ends at a blank line or after a short line ending a sentence; a heading
    line or a figure/table caption starts a new one.
    """
    lines = [clean_line(x) for x in raw.split("\n")]
    full = _full_line_length(lines)
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in lines:
        if not line:
            if current:
                paragraphs.append(current)
                current = []
            continue
        if current and (heading_title(line) or _CAPTION.match(line)):
            paragraphs.append(current)
            current = []
        current.append(line)
        if _SENTENCE_END.search(line) and len(line) < SHORT_LINE * full:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs


def load_payload(path: str | Path) -> DocTree:
    """Read one corpus JSON file into a DocTree whose sections are its pages."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    doc_id = data["document_id"]
    pages = data["sections"]
    raw_texts = [p["text"] for s in pages for p in s["paragraphs"] if p["metadata"].get("attachment_type") != "image"]
    vocab = vocabulary("\n".join(raw_texts))
    sections: list[SectionSpec] = []
    for section in pages:
        page = int(section["metadata"]["page"])
        paragraphs: list[ParagraphSpec] = []
        for para in section["paragraphs"]:
            meta = para.get("metadata", {})
            p_page = int(meta.get("page", page))
            if meta.get("attachment_type") == "image":
                paragraphs.append(ParagraphSpec([clean_line(para["text"])], kind="figure", pages=[p_page]))
                continue
            for lines in page_paragraphs(para["text"]):
                paragraphs.append(ParagraphSpec(paragraph_sentences(lines, vocab), pages=[p_page]))
        sections.append(SectionSpec(f"Page {page}", paragraphs, pages=[page]))
    metadata = {"parser": "wattbot-payload", "source": path.name, **data.get("metadata", {})}
    return build_tree(doc_id, clean_line(data.get("title") or doc_id), sections, metadata)


def load_corpus_dir(folder: str | Path) -> list[DocTree]:
    """Every ``*.json`` document of a corpus folder, sorted by doc id."""
    files = sorted(Path(folder).glob("*.json"))
    trees = [load_payload(f) for f in tqdm(files, desc="parse corpus", unit="doc")]
    return sorted(trees, key=lambda t: t.doc_id)
