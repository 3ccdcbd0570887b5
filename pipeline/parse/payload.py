"""WattBot's pre-extracted documents (``corpus/<doc>.json`` of its data folder) as DocTrees.

Each holds one section per PDF page and, mostly, one paragraph per page of raw
pypdf text (odd spacing, mid-paragraph line breaks, hyphenation) plus image placeholder
paragraphs. We recover paragraphs inside the page text from line shapes, re-split sentences
with our splitter instead of the corpus's crude regex, and rebuild the real sections: a
paragraph opening with a heading line ("2 Methods", "3.1 Setup", "References") starts a
section, nested by its number, spanning pages (pages stay on every node). Without fonts a
numbered line may be a list item, so a number must continue the outline seen so far
(``pipeline.parse.headings``); a document whose headings do not describe it (fewer than
``MIN_HEADINGS``, or one section spanning most of a long document: see :func:`headings_fit`)
keeps one section per page, which is still better than one section for the whole paper.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tqdm import tqdm

from pipeline.parse.headings import Outline, heading_number, nest
from pipeline.parse.text import clean_line, heading_title, paragraph_sentences, vocabulary
from pipeline.tree import DocTree, ParagraphSpec, SectionSpec, build_tree

_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table|Tab\.)\s*\d+[.:]")
SHORT_LINE = 0.75  # a line under this share of a full line may end a paragraph
MIN_HEADINGS = 2  # fewer recovered headings than this: keep pages as sections
SPARSE_PAGES = 10  # ... and when one section would span this many pages and
SPARSE_SHARE = 0.5  # this share of the document: the "headings" are a report's contents page, not its outline
EDGE_LINES = 2  # running headers/footers sit in the first or last lines of a page's text
RUNNING_SHARE = 0.3  # ... and recur on at least this share of pages (and on 3 pages or more)
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.I)


def _furniture_key(line: str) -> str:
    return re.sub(r"\d+", "#", line.lower())


def running_lines(page_texts: list[str]) -> set[str]:
    """Keys (digits as ``#``) of page-edge lines that recur on many pages: running headers/footers.

    "2 Alexandra Luccioni and ..." on every even page would otherwise read as section 2.
    """
    pages: dict[str, set[int]] = {}
    for pno, raw in enumerate(page_texts):
        lines = [x for x in (clean_line(y) for y in raw.split("\n")) if x]
        for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]:
            pages.setdefault(_furniture_key(line), set()).add(pno)
    need = max(3, RUNNING_SHARE * len(page_texts))
    return {k for k, v in pages.items() if len(v) >= need}


def drop_furniture(raw: str, running: set[str]) -> str:
    """The page text without running header/footer lines and bare page numbers at its edges."""
    lines = raw.split("\n")
    nonblank = [i for i, x in enumerate(lines) if x.strip()]
    edges = set(nonblank[:EDGE_LINES] + nonblank[-EDGE_LINES:])
    keep = []
    for i, line in enumerate(lines):
        cleaned = clean_line(line)
        if i in edges and (_furniture_key(cleaned) in running or _PAGE_NUMBER.match(cleaned)):
            continue
        keep.append(line)
    return "\n".join(keep)


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


def _section_heading(lines: list[str], outline: Outline) -> tuple[int, str] | None:
    """``(depth, title)`` when a paragraph opens with a heading that fits the outline."""
    title = heading_title(lines[0]) if lines else None
    if title is None or not title[0].isalnum() or (title[0].isalpha() and not title[0].isupper()):
        return None
    if sum(c.isalpha() for c in title) < 3:  # "5 M": a formula or table line, not a heading
        return None
    depth = outline.depth(heading_number(title))
    return (depth, title) if depth else None


def headings_fit(flat: list[tuple[int, SectionSpec]], n_pages: int) -> bool:
    """Whether the recovered headings describe the document: enough of them, none spanning most of it.

    A corporate report whose only "numbered headings" are its contents page (``3 Introduction``,
    ``9 Carbon``) would otherwise get one 90-page section, and a paragraph match would pull it
    all into a prompt as its parent context.
    """
    if len(flat) - 1 < MIN_HEADINGS:
        return False
    for _, sec in flat:
        if sec.title.replace(" ", "").lower() in ("references", "bibliography"):
            continue  # long by nature: a reference list is one section however many pages it takes
        pages = [p for para in sec.paragraphs for p in para.pages]
        if pages and max(pages) - min(pages) + 1 >= max(SPARSE_PAGES, SPARSE_SHARE * n_pages):
            return False
    return True


def load_payload(path: str | Path) -> DocTree:
    """Read one pre-extracted JSON file into a DocTree with real (nested) sections where the text has them."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    doc_id = data["document_id"]
    pages = data["sections"]
    raw_texts = [p["text"] for s in pages for p in s["paragraphs"] if p["metadata"].get("attachment_type") != "image"]
    vocab = vocabulary("\n".join(raw_texts))
    title = clean_line(data.get("title") or doc_id)
    by_page: list[SectionSpec] = []
    flat: list[tuple[int, SectionSpec]] = [(0, SectionSpec(title, []))]  # front matter, before any heading
    outline = Outline()
    running = running_lines(
        [p["text"] for s in pages for p in s["paragraphs"] if p["metadata"].get("attachment_type") != "image"]
    )
    for section in pages:
        page = int(section["metadata"]["page"])
        by_page.append(SectionSpec(f"Page {page}", [], pages=[page]))
        for para in section["paragraphs"]:
            meta = para.get("metadata", {})
            p_page = int(meta.get("page", page))
            if meta.get("attachment_type") == "image":
                spec = ParagraphSpec([clean_line(para["text"])], kind="figure", pages=[p_page])
                by_page[-1].paragraphs.append(spec)
                flat[-1][1].paragraphs.append(spec)
                continue
            for lines in page_paragraphs(drop_furniture(para["text"], running)):
                spec = ParagraphSpec(paragraph_sentences(lines, vocab), pages=[p_page])
                heading = _section_heading(lines, outline)
                if heading:
                    flat.append((heading[0], SectionSpec(heading[1], [])))
                by_page[-1].paragraphs.append(spec)
                flat[-1][1].paragraphs.append(spec)
    metadata = {"parser": "wattbot-payload", "source": path.name, **data.get("metadata", {})}
    sections = [flat[0][1], *nest(flat[1:])] if headings_fit(flat, len(by_page)) else by_page
    metadata["sections_from"] = "headings" if sections is not by_page else "pages"
    return build_tree(doc_id, title, sections, metadata)


def load_corpus_dir(folder: str | Path) -> list[DocTree]:
    """Every ``*.json`` document of a corpus folder, sorted by doc id."""
    files = sorted(Path(folder).glob("*.json"))
    trees = [load_payload(f) for f in tqdm(files, desc="parse JSON", unit="doc")]
    return sorted(trees, key=lambda t: t.doc_id)
