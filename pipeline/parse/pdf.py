"""PDF files as DocTrees, with PyMuPDF: real sections, paragraphs, tables and boxes.

The WattBot corpus was extracted page by page with pypdf, which loses the layout. Here we
work from PyMuPDF's positioned lines instead:

1. tables (``page.find_tables``) become ``kind="table"`` paragraphs whose one "sentence" is a
   markdown grid (plus the caption), and their text is removed from the running text;
2. running headers/footers (the same line at the same height on many pages) and bare page
   numbers at the page top or bottom are dropped;
3. lines are put in reading order, detecting two-column pages from line x-positions;
4. lines are grouped into paragraphs (new MuPDF block, vertical gap, column change, or a
   short line ending a sentence), and heading lines (font >= 1.2x the body size, or bold
   numbered headings like "2.3 Results") open sections that may span pages.
"""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from pipeline.parse.text import NAMED_HEADINGS, clean_line, heading_title, paragraph_sentences, vocabulary
from pipeline.tree import DocTree, ParagraphSpec, SectionSpec, build_tree

HEADING_SIZE = 1.2  # a line this much larger than the body text is a heading
FURNITURE_SHARE = 0.5  # a line at the same height on this share of pages is a running header/footer
MARGIN = 0.08  # top/bottom share of the page where bare numbers are page numbers
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–]?\s*\d{1,4}\s*[-–]?(?:\s*(?:/|of)\s*\d{1,4})?$", re.I)
_TABLE_CAPTION = re.compile(r"^(?:Table|Tab\.)\s*\d+")
_FIGURE_CAPTION = re.compile(r"^(?:Figure|Fig\.)\s*\d+")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")


@dataclass
class _Line:
    text: str
    bbox: tuple[float, float, float, float]
    size: float
    bold: bool
    page: int
    block: int
    col: str = "S"  # "L"/"R" column of a two-column page, "S" spanning or single column


@dataclass
class _Table:
    markdown: str
    bbox: tuple[float, float, float, float]
    page: int
    caption: list[_Line] = field(default_factory=list)
    col: str = "S"


def _open(path: Path) -> pymupdf.Document:
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # PyMuPDF raises its own types for corrupt files
        raise ValueError(f"{path}: cannot parse PDF: {exc}") from exc
    problem = "not a PDF" if not doc.is_pdf else "encrypted" if doc.needs_pass else "no pages" if not doc.page_count else ""
    if problem:
        doc.close()
        raise ValueError(f"{path}: cannot parse PDF: {problem}")
    return doc


def _inside(box, outer, tol: float = 2.0) -> bool:
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return outer[0] - tol <= cx <= outer[2] + tol and outer[1] - tol <= cy <= outer[3] + tol


def _lines(page: pymupdf.Page, pno: int) -> list[_Line]:
    """The page's text lines with their dominant font size and boldness."""
    out = []
    for b_index, block in enumerate(page.get_text("dict")["blocks"]):
        for line in block.get("lines", []):
            spans = [s for s in line["spans"] if s["text"].strip()]
            text = clean_line("".join(s["text"] for s in line["spans"]))
            if not spans or not text:
                continue
            chars = defaultdict(int)
            bold = 0
            for s in spans:
                chars[round(s["size"], 1)] += len(s["text"])
                if s["flags"] & 16 or "bold" in s["font"].lower():
                    bold += len(s["text"])
            size = max(chars, key=chars.get)
            out.append(_Line(text, tuple(line["bbox"]), size, bold * 2 > sum(chars.values()), pno, b_index))
    return out


def _markdown(rows: list[list[str]]) -> str:
    rows = [r for r in rows if any(r)]
    width = max(len(r) for r in rows)
    rows = [[c.replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    grid = [rows[0], ["---"] * width, *rows[1:]]
    return "\n".join("| " + " | ".join(r) + " |" for r in grid)


def _tables(page: pymupdf.Page, pno: int) -> list[_Table]:
    """Tables found from ruling lines; cell text comes from the words inside each cell."""
    try:
        try:  # PyMuPDF >= 1.27 gates ruled tables by a slow layout model by default; we want the rules
            found = page.find_tables(use_layout=False).tables
        except TypeError:
            found = page.find_tables().tables
    except Exception:  # table detection is best effort; the text stays in the body then
        return []
    words = page.get_text("words")
    out = []
    for tab in found:
        rows = []
        for row in tab.rows:
            cells = []
            for cell in row.cells:
                inside = sorted((w for w in words if cell and _inside(w[:4], cell, 0)), key=lambda w: (w[5], w[6], w[7]))
                cells.append(clean_line(" ".join(w[4] for w in inside)))
            rows.append(cells)
        if any(any(r) for r in rows):
            out.append(_Table(_markdown(rows), tuple(tab.bbox), pno))
    return out


def _drop_furniture(pages: list[list[_Line]], heights: list[float]) -> list[list[_Line]]:
    """Remove running headers/footers and page numbers."""
    seen: dict[tuple[str, int], set[int]] = defaultdict(set)
    for lines in pages:
        for ln in lines:
            seen[(re.sub(r"\d+", "#", ln.text.lower()), round(ln.bbox[1] / 4))].add(ln.page)
    need = max(2, FURNITURE_SHARE * len(pages))

    def keep(ln: _Line, height: float) -> bool:
        if len(seen[(re.sub(r"\d+", "#", ln.text.lower()), round(ln.bbox[1] / 4))]) >= need:
            return False
        in_margin = ln.bbox[3] < MARGIN * height or ln.bbox[1] > (1 - MARGIN) * height
        return not (in_margin and _PAGE_NUMBER.match(ln.text))

    return [[ln for ln in lines if keep(ln, h)] for lines, h in zip(pages, heights)]


def _reading_order(items: list, width: float) -> list:
    """Order a page's lines and tables: column by column on two-column pages, else top-down."""
    mid, slack = width / 2, 0.02 * width
    for it in items:
        x0, _, x1, _ = it.bbox
        it.col = "L" if x1 <= mid + slack else "R" if x0 >= mid - slack else "S"
    left = [it for it in items if it.col == "L"]
    right = [it for it in items if it.col == "R"]
    two_columns = any(l.bbox[1] < r.bbox[3] and r.bbox[1] < l.bbox[3] for l in left for r in right)
    if not two_columns:
        for it in items:
            it.col = "S"
        return sorted(items, key=lambda it: (round(it.bbox[1]), it.bbox[0]))
    out: list = []
    band: list = []
    for it in sorted(items, key=lambda it: (it.bbox[1], it.bbox[0])):
        if it.col == "S":  # a full-width item closes the band of columns above it
            out += sorted(band, key=lambda b: (b.col, b.bbox[1])) + [it]
            band = []
        else:
            band.append(it)
    return out + sorted(band, key=lambda b: (b.col, b.bbox[1]))


def _body_size(lines: list[_Line]) -> float:
    sizes = [ln.size for ln in lines for _ in range(len(ln.text))]
    return statistics.median(sizes) if sizes else 10.0


def _heading(ln: _Line, body: float) -> bool:
    if not any(c.isalpha() for c in ln.text) or len(ln.text) > 120:
        return False
    if ln.size >= HEADING_SIZE * body:
        return True
    named = ln.text.replace(" ", "").rstrip(".:").lower() in NAMED_HEADINGS
    return ln.bold and (named or heading_title(ln.text) is not None)


def _union(boxes) -> list[float]:
    boxes = list(boxes)
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def _new_paragraph(prev: _Line, ln: _Line) -> bool:
    """Whether ``ln`` starts a new paragraph after ``prev`` (same section)."""
    if prev.page != ln.page or _FIGURE_CAPTION.match(ln.text) or _TABLE_CAPTION.match(ln.text):
        return True
    ended = bool(_SENTENCE_END.search(prev.text))
    if (prev.col, prev.block) != (ln.col, ln.block):  # a sentence may run on into the next column
        return ended or not ln.text[:1].islower()
    height = prev.bbox[3] - prev.bbox[1]
    if ln.bbox[1] - prev.bbox[3] > 0.7 * height or abs(ln.size - prev.size) > 0.5:
        return True
    short = prev.bbox[2] < ln.bbox[2] - 0.15 * (ln.bbox[2] - ln.bbox[0])
    indented = ln.bbox[0] > prev.bbox[0] + 0.8 * ln.size
    return ended and (short or indented)


def _attach_captions(tables: list[_Table], lines: list[_Line]) -> list[_Line]:
    """Move each table's caption block ("Table 1: ...") out of the text into the table."""
    taken: set[int] = set()
    for tab in tables:
        for ln in lines:
            near = -40 < tab.bbox[1] - ln.bbox[3] < 40 or -40 < ln.bbox[1] - tab.bbox[3] < 40
            overlaps = ln.bbox[0] < tab.bbox[2] and tab.bbox[0] < ln.bbox[2]
            if near and overlaps and _TABLE_CAPTION.match(ln.text) and id(ln) not in taken:
                tab.caption = [x for x in lines if x.block == ln.block and x.page == ln.page and x.bbox[1] >= ln.bbox[1]]
                taken.update(id(x) for x in tab.caption)
                break
    return [ln for ln in lines if id(ln) not in taken]


def parse_pdf(path: str | Path, doc_id: str, title: str | None = None) -> DocTree:
    """Parse a PDF into sections (from headings), paragraphs, tables and sentences."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(path)
    doc = _open(path)
    try:
        pages, tables, sizes = [], [], []
        for pno, page in enumerate(doc, start=1):
            page_tables = _tables(page, pno)
            lines = [ln for ln in _lines(page, pno) if not any(_inside(ln.bbox, t.bbox) for t in page_tables)]
            pages.append(_attach_captions(page_tables, lines))
            tables.append(page_tables)
            sizes.append((page.rect.width, page.rect.height))
        title = title or clean_line(doc.metadata.get("title") or "") or None
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(f"{path}: cannot parse PDF: {exc}") from exc
    finally:
        doc.close()

    pages = _drop_furniture(pages, [h for _, h in sizes])
    all_lines = [ln for lines in pages for ln in lines]
    body = _body_size(all_lines)
    vocab = vocabulary("\n".join(ln.text for ln in all_lines))
    title_lines = _title_lines(pages[0] if pages else [], body)
    title = title or " ".join(ln.text for ln in title_lines) or doc_id
    ordered = [_reading_order(lines + tabs, width) for lines, tabs, (width, _) in zip(pages, tables, sizes)]
    sections = _sections([it for items in ordered for it in items], title, {id(ln) for ln in title_lines}, body, vocab)
    return build_tree(doc_id, title, sections, metadata={"parser": "pdf", "source": path.name, "pages": len(pages)})


def _sections(items: list, title: str, title_ids: set[int], body: float, vocab: set[str]) -> list[SectionSpec]:
    """Walk the ordered lines and tables: headings open sections, other lines fill paragraphs."""
    sections = [SectionSpec(title, [])]
    block: list[_Line] = []
    last_heading: _Line | None = None

    def flush() -> None:
        if block:
            kind = "figure" if _FIGURE_CAPTION.match(block[0].text) else "text"
            sentences = paragraph_sentences([ln.text for ln in block], vocab)
            pages = sorted({ln.page for ln in block})
            sections[-1].paragraphs.append(ParagraphSpec(sentences, kind, pages, _union(ln.bbox for ln in block)))
            block.clear()

    for it in items:
        if isinstance(it, _Table):
            flush()
            caption = " ".join(ln.text for ln in it.caption)
            grid = f"{caption}\n{it.markdown}" if caption else it.markdown
            box = _union([it.bbox] + [ln.bbox for ln in it.caption])
            sections[-1].paragraphs.append(ParagraphSpec([grid], "table", [it.page], box))
        elif id(it) not in title_ids and _heading(it, body):
            flush()
            if last_heading and not sections[-1].paragraphs and _continues_heading(last_heading, it):
                sections[-1].title += " " + it.text
            else:
                sections.append(SectionSpec(it.text, []))
            last_heading = it
            continue
        else:
            if block and (_new_paragraph(block[-1], it) or (id(block[-1]) in title_ids) != (id(it) in title_ids)):
                flush()
            block.append(it)
        last_heading = None
    flush()
    for sec in sections:
        sec.pages = sorted({p for para in sec.paragraphs for p in para.pages})
    return sections


def _continues_heading(prev: _Line, ln: _Line) -> bool:
    """A heading wrapped over two lines: same style, right below, and not numbered itself."""
    close = 0 <= ln.bbox[1] - prev.bbox[3] < 0.7 * (prev.bbox[3] - prev.bbox[1])
    return close and prev.page == ln.page and abs(prev.size - ln.size) < 0.5 and heading_title(ln.text) is None


def _title_lines(first_page: list[_Line], body: float) -> list[_Line]:
    """The largest-font lines on page 1, when clearly larger than body text: the paper title."""
    if not first_page:
        return []
    top = max(ln.size for ln in first_page)
    if top < HEADING_SIZE * body:
        return []
    return [ln for ln in first_page if ln.size == top][:4]
