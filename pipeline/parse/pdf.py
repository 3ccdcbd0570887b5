"""PDF files as DocTrees, with PyMuPDF: real sections, paragraphs, tables and figures.

Why not the corpus' own text: it was extracted page by page with pypdf, which loses the layout.
This works from PyMuPDF's positioned lines instead: tables become ``kind="table"`` paragraphs and
leave the running text, running headers/footers and page numbers are dropped, lines are put in
reading order (two columns too) and grouped into paragraphs, heading lines (:func:`_heading_cue`)
open sections that nest by their numbers or font size, and figures become ``kind="figure"``
paragraphs holding their caption. The rules and their thresholds: docs/parsing.md. Unparseable
files raise :class:`ParseError` with a one-line reason.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from pipeline.parse.errors import ParseError
from pipeline.parse.headings import Outline, heading_number, nest
from pipeline.parse.sentences import sentence_texts
from pipeline.parse.text import NAMED_HEADINGS, clean_line, heading_title, paragraph_sentences, vocabulary
from pipeline.specs import HEADINGS
from pipeline.tree import DocTree, ParagraphSpec, SectionSpec, build_tree

Describer = Callable[[bytes], str]  # PNG bytes of a figure region -> a text description

HEADING_SIZE = 1.2  # a line this much larger than the body text is a heading
LARGER = 1.08  # a numbered line this much larger is one too (groff/mom set headings only ~15% larger)
FURNITURE_SHARE = 0.5  # a line at the same height on this share of pages is a running header/footer
MARGIN = 0.08  # top/bottom share of the page where bare numbers are page numbers
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–]?\s*\d{1,4}\s*[-–]?(?:\s*(?:/|of)\s*\d{1,4})?$", re.I)
_TABLE_CAPTION = re.compile(r"^(?:Table|Tab\.)\s*\d+")
_FIGURE_CAPTION = re.compile(r"^(?:Figure|Fig\.)\s*\d+")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
_FOOTNOTE_MARKS = "∗*†‡§¶"
LINE_ADVANCE = 1.5  # a baseline advance over this many line heights starts a new paragraph
MIN_FIGURE = 24.0  # points: smaller images and drawings are icons, rules or bullets
CAPTION_REACH = 40.0  # points between a figure region and its caption
PAGE_TEXT = 600  # characters: a page with this much text has a body size of its own
MARGIN_SHARE = 0.05  # a left edge shared by this share of lines is a column margin
_LABEL_ONLY = re.compile(r"(?:Part|PART|Chapter|CHAPTER|Appendix|APPENDIX)(?:\s+[\dIVXLA-Z]{1,5}\.?)?")
_CODE = re.compile(r"[=$\\{}<>|]|\w\(|\)\s*$|^[a-z_]+\.[a-z_]+")  # code, commands and calls set in a heading font
ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important", "hint", "danger", "attention", "example"})
# TeX's T1 (Cork) encoding puts ff, fi, fl, ffi, ffl at 0x1B-0x1F; a font without a ToUnicode map
# hands them out as control characters ("\x1crst" for "first"), which would otherwise be lost
_T1_LIGATURES = str.maketrans({"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"})
# monospaced families by name: "NimbusMonL" (URW's Courier) and the usual Mono/TT/Courier/Typewriter names
_MONO_FONT = re.compile(r"Mono|NimbusMon|Courier|TT\d|Typewriter|Consolas|Menlo|Inconsolata", re.I)
_SMALL_CAPS = re.compile(r"(?:CSC|SmallCaps|Caps|-SC\b|SC\d|\.sc\b)", re.I)
_MATH_FONT = re.compile(r"(?:CMSY|CMEX|CMMI|MSAM|MSBM|Symbol|.*Math)", re.I)
FRONT_MATTER = 120.0  # points below the title where large unnumbered lines are authors, not headings
FRONT_NAMES = frozenset({"abstract", "summary", "keywords", "keyword", "keywordsandphrases", "indexterms"})
REFERENCE_NAMES = frozenset({"references", "bibliography", "literaturecited", "workscited", "literature"})


@dataclass
class _Line:
    text: str
    bbox: tuple[float, ...]  # x0, y0, x1, y1
    size: float
    bold: bool
    page: int
    block: int
    col: str = "S"  # "L"/"R" column of a two-column page, "S" spanning or single column
    font: str = ""
    mono: bool = False
    block_lines: int = 1  # lines in its MuPDF block: a standalone short line may be a heading
    toc_entry: bool = False  # a table-of-contents line (its page number sits far to the right)
    run_in: bool = False  # the bold lead-in of a paragraph ("Results. We found ..."), split off as a heading
    in_row: bool = False  # another line in the same font shares its baseline: a table row, not a heading
    layout: str = ""  # the layout model's class for the box holding this line ("section-header", "text", ...)


@dataclass
class _Figure:
    bbox: tuple[float, float, float, float]
    page: int
    caption: list[_Line] = field(default_factory=list)
    description: str = ""
    col: str = "S"


@dataclass
class _Table:
    markdown: str
    bbox: tuple[float, float, float, float]
    page: int
    caption: list[_Line] = field(default_factory=list)
    col: str = "S"


def open_pdf(path: Path) -> pymupdf.Document:
    """Open a PDF or raise ParseError saying why it cannot be parsed."""
    raw = path.read_bytes()
    if not raw:
        raise ParseError(path, "empty file (0 bytes)")
    if not raw.lstrip()[:5] == b"%PDF-":
        raise ParseError(path, "not a PDF (no %PDF header)")
    if b"%%EOF" not in raw[-2048:]:  # checked first: a cut-off file often fails to open at all
        raise ParseError(path, "truncated (no %%EOF trailer; the download or copy was cut off)")
    try:
        doc = pymupdf.open(stream=raw, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises its own types for corrupt files
        raise ParseError(path, f"corrupt: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    problem = "encrypted (needs a password)" if doc.needs_pass else "no pages" if not doc.page_count else ""
    if problem:
        doc.close()
        raise ParseError(path, problem)
    return doc


def _inside(box, outer, tol: float = 2.0) -> bool:
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return outer[0] - tol <= cx <= outer[2] + tol and outer[1] - tol <= cy <= outer[3] + tol


def _same_baseline(prev: dict, line: dict) -> bool:
    """Pieces TeX set on one baseline ("1" + "Introduction", a sentence split by a math run)."""
    size = max((sp["size"] for sp in line["spans"]), default=10)
    gap = line["bbox"][0] - prev["bbox"][2]
    return abs(line["bbox"][3] - prev["bbox"][3]) < 0.3 * size and -1 <= gap < 2 * size


def _lines(page: pymupdf.Page, pno: int) -> list[_Line]:
    """The page's text lines with their dominant font size, font and boldness."""
    out = []
    for b_index, block in enumerate(page.get_text("dict")["blocks"]):
        groups: list[dict] = []
        for line in block.get("lines", []):
            if groups and line["spans"] and _same_baseline(groups[-1], line):
                last, first = groups[-1], line["spans"][0]
                last["spans"] += [{**first, "text": " " + first["text"]}, *line["spans"][1:]]  # a space between pieces
                last["bbox"] = _union([last["bbox"], line["bbox"]])
            else:
                groups.append({"spans": list(line["spans"]), "bbox": list(line["bbox"])})
        block_lines = [ln for line in groups if (ln := _line(line, pno, b_index))]
        for ln in block_lines:
            ln.block_lines = len(block_lines)
        if groups and block_lines:
            block_lines[:1] = _split_run_in(block_lines[0], groups[0]["spans"])
        out += block_lines
    _mark_toc_entries(out)
    _mark_rows(out)
    return out


def _line(line: dict, pno: int, b_index: int) -> _Line | None:
    """One joined line: its text, and the size, font, boldness and monospace of most of its characters."""
    spans = [s for s in line["spans"] if s["text"].strip()]
    text = clean_line("".join(s["text"] for s in line["spans"]).translate(_T1_LIGATURES))
    if not spans or not text:
        return None
    chars: dict = defaultdict(int)
    fonts: dict = defaultdict(int)
    bold = mono = 0
    for s in spans:
        chars[round(s["size"], 1)] += len(s["text"])
        fonts[s["font"]] += len(s["text"])
        bold += len(s["text"]) if _bold(s) else 0
        mono += len(s["text"]) if s["flags"] & 8 or _MONO_FONT.search(s["font"]) else 0
    size = max(chars, key=lambda s: chars[s])
    total = sum(chars.values())
    font = max(fonts, key=lambda f: fonts[f])
    return _Line(text, tuple(line["bbox"]), size, bold * 2 > total, pno, b_index, font=font, mono=mono * 2 > total)


def _bold(span: dict) -> bool:
    return (
        bool(span["flags"] & 16)
        or "bold" in span["font"].lower()
        or bool(re.search(r"BX|Bold|Bd|Black|Heavy", span["font"]))
    )


def _split_run_in(ln: _Line, spans: list[dict]) -> list[_Line]:
    """A paragraph's first line that opens with a short bold phrase ending in a full stop ("Results. We
    found ...") becomes a run-in heading line plus the rest of the line; other lines stay as they are."""
    spans = [sp for sp in spans if sp["text"].strip()]
    lead = 0
    while lead < len(spans) and _bold(spans[lead]):
        lead += 1
    if not 0 < lead < len(spans):
        return [ln]
    head = clean_line("".join(sp["text"] for sp in spans[:lead]))
    rest = clean_line("".join(sp["text"] for sp in spans[lead:]))
    words = head.rstrip(".").split()
    if not (head.endswith(".") and 1 <= len(words) <= 8 and rest[:1].isupper()) or re.fullmatch(r"[\dIVX.]+", head):
        return [ln]
    box = lambda part: tuple(_union(sp["bbox"] for sp in part))  # noqa: E731
    first = _Line(
        head.rstrip(".").strip(),
        box(spans[:lead]),
        ln.size,
        True,
        ln.page,
        ln.block,
        font=spans[0]["font"],
        block_lines=ln.block_lines,
        run_in=True,
    )
    second = _Line(
        rest,
        box(spans[lead:]),
        ln.size,
        False,
        ln.page,
        ln.block,
        font=spans[lead]["font"],
        mono=ln.mono,
        block_lines=ln.block_lines,
    )
    return [first, second]


def _mark_rows(lines: list[_Line]) -> None:
    """Lines sharing a baseline with another line in the same font, side by side, are table cells."""
    for ln in lines:
        ln.in_row = any(
            o is not ln
            and o.font == ln.font
            and abs(o.bbox[3] - ln.bbox[3]) < 0.3 * ln.size
            and (o.bbox[0] > ln.bbox[2] or ln.bbox[0] > o.bbox[2])
            for o in lines
        )


_LAYOUT_HEADINGS = ("section-header", "title")


Boxes = list[tuple[tuple[float, float, float, float], str]]


def _layout_boxes(page: pymupdf.Page) -> Boxes:
    """The PyMuPDF layout model's boxes (``pymupdf.layout``, an ONNX model on CPU): bbox and class."""
    import pymupdf.layout  # noqa: F401  (loading it registers the model with PyMuPDF)

    pymupdf.layout.activate()
    page.get_layout()
    return [(tuple(b[:4]), b[4]) for b in page.layout_information or []]


def layout_boxes(path: str | Path) -> dict[int, Boxes]:
    """Every page's layout boxes (1-based page numbers); computed once, reused by several heading methods."""
    doc = open_pdf(Path(path))
    try:
        return {pno: _layout_boxes(page) for pno, page in enumerate(doc, start=1)}
    finally:
        doc.close()


def _mark_layout(lines: list[_Line], boxes: list) -> None:
    """Give each line the class of the smallest layout box holding its centre."""
    for ln in lines:
        holding = [(abs((b[2] - b[0]) * (b[3] - b[1])), cls) for b, cls in boxes if _inside(ln.bbox, b, 2.0)]
        ln.layout = min(holding)[1] if holding else ""


def _mark_toc_entries(lines: list[_Line]) -> None:
    """A title with a bare page number (or dot leaders and one) far to its right is a contents line."""
    numbers = [ln for ln in lines if re.fullmatch(r"(?:\.\s*)*[0-9ivxlc]{1,4}", ln.text)]
    for ln in lines:
        for num in numbers:
            leader = num.text.startswith(".")  # ". . . . 12" set as its own line right after the title
            gap = num.bbox[0] - ln.bbox[2]
            if (
                num is not ln
                and abs(num.bbox[3] - ln.bbox[3]) < 0.4 * ln.size
                and (gap > 2 * ln.size or (leader and gap > -2))
            ):
                ln.toc_entry = num.toc_entry = True
                break
        if re.search(r"(?:\.\s?){4,}\s*\d{1,4}$", ln.text):
            ln.toc_entry = True


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
                inside = sorted(
                    (w for w in words if cell and _inside(w[:4], cell, 0)), key=lambda w: (w[5], w[6], w[7])
                )
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
    two_columns = any(lt.bbox[1] < r.bbox[3] and r.bbox[1] < lt.bbox[3] for lt in left for r in right)
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


def _body_font(lines: list[_Line]) -> str:
    fonts: dict[str, int] = defaultdict(int)
    for ln in lines:
        fonts[ln.font] += len(ln.text)
    return max(fonts, key=lambda f: fonts[f]) if fonts else ""


@dataclass
class _Style:
    """What a document's body text looks like, for telling headings apart from it."""

    size: float
    font: str
    width: float  # a typical full line (90th percentile of line widths)
    margins: frozenset[int] = frozenset()  # left edges shared by many lines (column starts)
    centres: frozenset[int] = frozenset()  # centres of full lines (one per column)

    pages: dict[int, float] = field(default_factory=dict)  # pages set in a larger body size: that size

    def body(self, page: int) -> float:
        """The body size a line on ``page`` is compared with: the page's own where it is set larger."""
        return self.pages.get(page, self.size)

    def at_margin(self, ln: _Line) -> bool:
        return any(abs(round(ln.bbox[0]) - m) <= 1 for m in self.margins)

    def centred(self, ln: _Line) -> bool:
        return any(abs((ln.bbox[0] + ln.bbox[2]) / 2 - c) <= 3 for c in self.centres)


def _style(lines: list[_Line]) -> _Style:
    widths = sorted(ln.bbox[2] - ln.bbox[0] for ln in lines) or [500.0]
    starts: dict[int, int] = defaultdict(int)
    for ln in lines:
        starts[round(ln.bbox[0])] += 1
    margins = frozenset(x for x, n in starts.items() if n >= MARGIN_SHARE * len(lines))
    width = widths[int(0.9 * (len(widths) - 1))]
    mids: dict[int, int] = defaultdict(int)
    for ln in lines:
        if ln.bbox[2] - ln.bbox[0] >= 0.95 * width:
            mids[round((ln.bbox[0] + ln.bbox[2]) / 2)] += 1
    centres = frozenset(x for x, n in mids.items() if n >= MARGIN_SHARE * len(lines))
    size = _body_size(lines)
    return _Style(size, _body_font(lines), width, margins, centres, _larger_pages(lines, size))


def _larger_pages(lines: list[_Line], size: float) -> dict[int, float]:
    """Pages of running text set in a larger body size than the document's (a sample chapter in 12.5 pt
    bound with articles in 10 pt): on them, text at that size is body text, not a heading."""
    by_page: dict[int, list[_Line]] = defaultdict(list)
    for ln in lines:
        by_page[ln.page].append(ln)
    out = {}
    for page, page_lines in by_page.items():
        if sum(len(ln.text) for ln in page_lines) >= PAGE_TEXT and (body := _body_size(page_lines)) > LARGER * size:
            out[page] = body
    return out


def _heading_cue(ln: _Line, style: _Style, method: str = "rules") -> str | None:
    """Why ``ln`` is a heading, or None: by the rules, the layout model, or both (``HEADINGS``)."""
    if method == "rules":
        return _rule_cue(ln, style)
    text = ln.text.strip()
    model = ln.layout in _LAYOUT_HEADINGS and sum(c.isalpha() for c in text) >= 2 and len(text) <= 120
    if method == "layout":
        return "layout" if model else None
    return _rule_cue(ln, style) or ("model" if model and _model_heading_ok(ln, text, style) else None)


def _title_like(text: str) -> bool:
    """Reads like a heading: at most 12 words, starts with a capital or a number, no sentence end, colon or comma."""
    words = text.split()
    end = text.rstrip(_FOOTNOTE_MARKS)
    if not words or len(words) > 12 or end.endswith((":", ",", ";")) or not (text[0].isupper() or text[0].isdigit()):
        return False
    return bool(re.fullmatch(r"[\dIVXA-H.]+", words[0])) or not end.endswith((".", "!", "?"))


def _model_heading_ok(ln: _Line, text: str, style: _Style) -> bool:
    """The rules' veto on a layout-model heading: no contents line, code, caption, admonition or sentence."""
    if ln.toc_entry or ln.mono or ln.size < style.size - 0.5 or _CODE.search(text):
        return False
    if _FIGURE_CAPTION.match(text) or _TABLE_CAPTION.match(text) or text.rstrip(":").lower() in ADMONITIONS:
        return False
    return _title_like(text)


def _vetoed(ln: _Line, text: str) -> bool:
    """Never a heading: contents lines, code, index letters, over-long lines, captions, admonition labels."""
    if ln.toc_entry or ln.mono or sum(c.isalpha() for c in text) < 2 or len(text) > 120:
        return True  # no letters, or an index's single-letter group head ("B", "C")
    # "Figure 11-1: ..." set in a heading font is still a caption; "Note" labels a box
    return bool(_FIGURE_CAPTION.match(text) or _TABLE_CAPTION.match(text) or text.rstrip(":").lower() in ADMONITIONS)


def _rule_cue(ln: _Line, style: _Style) -> str | None:
    """Why ``ln`` is a heading by the rules, or None (see the module docstring).

    "size" (clearly larger type), "larger" (a little larger and numbered), "bold" (bold and numbered
    or named, or a bold line standing alone), "caps" (a standalone line in small caps or all caps),
    "centred" (a short standalone line centred on a column), "font" (a distinct font at a margin).
    """
    text = ln.text.rstrip(_FOOTNOTE_MARKS).strip()
    if _vetoed(ln, text):
        return None
    if ln.run_in:
        return "run-in" if _title_like(text) and not _CODE.search(text) else None
    numbered = heading_title(text) is not None and heading_number(text) is not None
    named = text.replace(" ", "").rstrip(".:").lower() in NAMED_HEADINGS
    short = ln.block_lines <= 2 or ln.bbox[2] - ln.bbox[0] < 0.8 * style.width
    sentence = (
        bool(_SENTENCE_END.search(text)) and not re.fullmatch(r"[\dIVXA-H.]+\.", text.split()[0] + ".") and not numbered
    )
    body = style.body(ln.page)
    if ln.size >= HEADING_SIZE * body:
        return "size" if (numbered or named or ln.bold or short) and not sentence and not text.endswith(":") else None
    if abs(ln.size - body) > 0.5 * body * (HEADING_SIZE - 1) and ln.size < body:
        return None  # smaller than body text: footnotes, captions, table cells
    if ln.size >= LARGER * body and numbered:
        return "larger"
    if ln.bold and (named or numbered):
        return "bold"
    return _body_size_cue(ln, text, style, numbered, sentence)


def _body_size_cue(ln: _Line, text: str, style: _Style, numbered: bool, sentence: bool) -> str | None:
    """The cues of a heading set at body size: a standalone numbered, bold, caps or centred line, or a distinct font."""
    narrow = ln.bbox[2] - ln.bbox[0] < 0.9 * style.width
    distinct = _family(ln.font) != _family(style.font) and not _MATH_FONT.match(ln.font.split("+")[-1])
    if numbered and ln.block_lines == 1 and narrow and (distinct or ln.size > style.body(ln.page) + 0.2):
        return "numbered"  # a standalone numbered line set apart by its font (mom's 10.8 pt in 10.5 pt text)
    alone = (
        ln.block_lines == 1
        and narrow
        and _title_like(text)
        and not _CODE.search(text)
        and not ln.in_row
        and not _MATH_FONT.match(ln.font.split("+")[-1])
    )
    if alone and ln.bold:
        return "bold"
    letters = [c for c in text if c.isalpha()]
    if alone and (_SMALL_CAPS.search(ln.font.split("+")[-1]) or (len(letters) >= 4 and text.isupper())):
        return "caps"
    if alone and ln.bbox[2] - ln.bbox[0] < 0.6 * style.width and style.centred(ln) and not style.at_margin(ln):
        return "centred"
    plain_at_margin = style.at_margin(ln) and not ln.in_row and not ln.bold and not sentence and not text.endswith(":")
    if distinct and narrow and plain_at_margin and text[0].isupper() and len(text.split()) <= 12:
        return "font"
    return None


def _family(font: str) -> str:
    """``LMRoman10-Regular`` -> ``lmroman``: the type family without size and weight."""
    return re.sub(r"[\d-].*$", "", font.split("+")[-1]).lower()


def _union(boxes) -> list[float]:
    boxes = list(boxes)
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def _new_paragraph(prev: _Line, ln: _Line) -> bool:
    """Whether ``ln`` starts a new paragraph after ``prev`` (same section)."""
    if prev.page != ln.page or _FIGURE_CAPTION.match(ln.text) or _TABLE_CAPTION.match(ln.text):
        return True
    height = prev.bbox[3] - prev.bbox[1]
    if prev.mono != ln.mono:  # code starts or ends: a font change
        return True
    if prev.mono and prev.col == ln.col and ln.bbox[3] - prev.bbox[3] <= LINE_ADVANCE * height:
        return False  # lines of one code listing, whatever MuPDF's blocks say
    ended = bool(_SENTENCE_END.search(prev.text))
    if (prev.col, prev.block) != (ln.col, ln.block):  # a sentence may run on into the next column
        return ended or not ln.text[:1].islower()
    if ln.bbox[3] - prev.bbox[3] > LINE_ADVANCE * height or abs(ln.size - prev.size) > 0.5:
        return True
    short = prev.bbox[2] < ln.bbox[2] - 0.15 * (ln.bbox[2] - ln.bbox[0])
    indented = ln.bbox[0] > prev.bbox[0] + 0.8 * ln.size
    return ended and (short or indented)


def _attach_captions(tables: list, lines: list[_Line], pattern: re.Pattern = _TABLE_CAPTION) -> list[_Line]:
    """Move each table's (figure's) caption block ("Table 1: ...") out of the text into it."""
    taken: set[int] = set()
    for tab in tables:
        candidates = []
        for ln in lines:
            below, above = ln.bbox[1] - tab.bbox[3], tab.bbox[1] - ln.bbox[3]
            near = -CAPTION_REACH < below < CAPTION_REACH or -CAPTION_REACH < above < CAPTION_REACH
            overlaps = ln.bbox[0] < tab.bbox[2] and tab.bbox[0] < ln.bbox[2]
            if near and overlaps and pattern.match(ln.text) and id(ln) not in taken:
                candidates.append((min(abs(below), abs(above)), ln))
        if candidates:
            ln = min(candidates, key=lambda c: c[0])[1]
            tab.caption = [x for x in lines if x.block == ln.block and x.page == ln.page and x.bbox[1] >= ln.bbox[1]]
            taken.update(id(x) for x in tab.caption)
    return [ln for ln in lines if id(ln) not in taken]


def _merge_near(boxes: list[tuple], gap: float) -> list[tuple]:
    """Union boxes closer than ``gap`` (the bars, axes and labels of one chart) until none are."""
    boxes = [tuple(b) for b in boxes]
    merged = True
    while merged:
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] - gap <= b[2] and b[0] - gap <= a[2] and a[1] - gap <= b[3] and b[1] - gap <= a[3]:
                    boxes[i] = tuple(_union([a, b]))
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    return boxes


def _figures(page: pymupdf.Page, pno: int, tables: list[_Table], lines: list[_Line]) -> list[_Figure]:
    """Image regions, and drawing regions with a "Figure N" caption next to them."""
    area = page.rect.width * page.rect.height
    boxes = []
    for info in page.get_image_info():
        r = pymupdf.Rect(info["bbox"]) & page.rect
        if r.width >= MIN_FIGURE and r.height >= MIN_FIGURE and r.width * r.height < 0.9 * area:
            boxes.append((tuple(r), True))
    try:
        clusters = [tuple(r) for r in page.cluster_drawings()]
    except Exception:  # drawing analysis is best effort, like tables
        clusters = []
    clusters = [c for c in clusters if not any(_inside(c, t.bbox, 4) for t in tables)]
    for r in _merge_near(clusters, 1.5 * MIN_FIGURE):
        if r[2] - r[0] >= MIN_FIGURE and r[3] - r[1] >= MIN_FIGURE:
            boxes.append((r, False))
    figures: list[_Figure] = []
    free = list(lines)
    for box, is_image in sorted(boxes, key=lambda b: (b[0][1], b[0][0])):
        if any(_inside(box, f.bbox, 4) for f in figures) or any(_inside(box, t.bbox, 4) for t in tables):
            continue
        fig = _Figure(box, pno)
        free = _attach_captions([fig], free, _FIGURE_CAPTION)
        if is_image or fig.caption:
            figures.append(fig)
    return figures


@dataclass
class _Pages:
    """What every page holds: its body lines (reading order not yet fixed), tables, figures and size."""

    lines: list[list[_Line]] = field(default_factory=list)
    tables: list[list[_Table]] = field(default_factory=list)
    figures: list[list[_Figure]] = field(default_factory=list)
    sizes: list[tuple[float, float]] = field(default_factory=list)
    has_images: bool = False


def _read_pages(
    doc: pymupdf.Document, headings: str, layout: dict[int, Boxes] | None, describe: Describer | None
) -> _Pages:
    """Lines, tables and figures of every page; lines inside a table or figure, or captioning one, leave the body."""
    out = _Pages()
    for pno, page in enumerate(doc, start=1):
        page_tables = _tables(page, pno)
        lines = [ln for ln in _lines(page, pno) if not any(_inside(ln.bbox, t.bbox) for t in page_tables)]
        if headings != "rules":
            _mark_layout(lines, layout[pno] if layout else _layout_boxes(page))
        lines = _attach_captions(page_tables, lines)
        page_figures = _figures(page, pno, page_tables, lines)
        out.has_images = out.has_images or bool(page.get_image_info())
        taken = {id(x) for f in page_figures for x in f.caption}
        lines = [ln for ln in lines if id(ln) not in taken and not any(_inside(ln.bbox, f.bbox) for f in page_figures)]
        for fig in page_figures:
            if describe:
                fig.description = describe(page.get_pixmap(clip=pymupdf.Rect(fig.bbox), dpi=144).tobytes("png"))
        out.lines.append(lines)
        out.tables.append(page_tables)
        out.figures.append(page_figures)
        out.sizes.append((page.rect.width, page.rect.height))
    return out


def parse_pdf(
    path: str | Path,
    doc_id: str,
    title: str | None = None,
    describe: Describer | None = None,
    headings: str = "rules",
    layout: dict[int, Boxes] | None = None,
) -> DocTree:
    """Parse a PDF into sections (from headings), paragraphs, tables, figures and sentences.

    ``describe``, when given, turns each figure region (rendered to PNG) into a text
    description (a vision model through the LLM gateway: ``pipeline.parse.vision``).
    ``headings`` picks who finds headings (``HEADINGS``: the rules, PyMuPDF's layout model, or both);
    ``layout`` passes that model's boxes when they were computed already (``layout_boxes``).
    Raises :class:`ParseError` for files that cannot be parsed.
    """
    if headings not in HEADINGS:
        raise ValueError(f"headings={headings!r}: use one of {HEADINGS}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(path)
    doc = open_pdf(path)
    try:
        read = _read_pages(doc, headings, layout, describe)
        title = title or clean_line(doc.metadata.get("title") or "") or None
    except ParseError:
        raise
    except Exception as exc:
        raise ParseError(path, f"corrupt: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    finally:
        doc.close()
    pages, tables, figures, sizes = read.lines, read.tables, read.figures, read.sizes
    if not any(pages) and not any(tables):
        reason = "no text layer (image-only; it needs OCR)" if read.has_images else "no text on any page"
        raise ParseError(path, reason)

    pages = _drop_furniture(pages, [h for _, h in sizes])
    all_lines = [ln for lines in pages for ln in lines]
    style = _style(all_lines)
    vocab = vocabulary("\n".join(ln.text for ln in all_lines))
    title_lines = _title_lines(pages[0] if pages else [], style.size)
    if title and title_lines and not _shares_words(title, " ".join(ln.text for ln in title_lines)):
        title_lines = []  # page 1 opens with a chapter heading, not the document's (metadata) title
    title = title or " ".join(ln.text for ln in title_lines) or doc_id
    ordered = [
        _reading_order(lines + tabs + figs, width)
        for lines, tabs, figs, (width, _) in zip(pages, tables, figures, sizes)
    ]
    items = [it for its in ordered for it in its]
    sections = _sections(items, title, {id(ln) for ln in title_lines}, style, vocab, headings)
    metadata = {"parser": "pdf", "source": path.name, "pages": len(pages)}
    if describe:
        metadata["figure_descriptions"] = sum(1 for figs in figures for f in figs if f.description)
    tree = build_tree(doc_id, title, sections, metadata=metadata)
    first = tree.root.children[:1]
    tree.metadata["front_matter"] = first[0] if first and tree.nodes[first[0]].title == title else None
    tree.metadata["references"] = [n.id for n in tree.at_level("section") if _is_references(n.title)]
    return tree


def _is_references(title: str) -> bool:
    """A bibliography section ("References", "7 Bibliography"): its paragraphs are citations, not prose."""
    words = re.sub(r"[^a-z]", "", re.sub(r"^\s*[\dIVX]+(?:\.\d+)*\.?\s+", "", title).lower())
    return words in REFERENCE_NAMES


def _figure_paragraph(fig: _Figure, vocab: set[str]) -> ParagraphSpec:
    caption = (
        paragraph_sentences([ln.text for ln in fig.caption], vocab) if fig.caption else [f"[Figure on page {fig.page}]"]
    )
    extra = sentence_texts(f"Figure description: {fig.description}") if fig.description else []
    return ParagraphSpec(caption + extra, "figure", [fig.page], _union([fig.bbox] + [ln.bbox for ln in fig.caption]))


def _style_key(ln: _Line) -> tuple[float, bool]:
    """A heading's place in the font hierarchy: size first, bold above regular at one size."""
    return round(ln.size, 1), ln.bold


def _heading_depths(items: list, title_ids: set[int], style: _Style, method: str) -> dict[tuple[float, bool], int]:
    """Default depth of an unnumbered heading by its style: the largest (boldest) heading style is depth 1."""
    keys = sorted(
        {
            _style_key(it)
            for it in items
            if isinstance(it, _Line) and id(it) not in title_ids and _heading_cue(it, style, method)
        },
        reverse=True,
    )
    return {key: i + 1 for i, key in enumerate(keys)}


def _sections(
    items: list, title: str, title_ids: set[int], style: _Style, vocab: set[str], method: str = "rules"
) -> list[SectionSpec]:
    """Walk the ordered lines, tables and figures: headings open (nested) sections, other lines fill paragraphs."""
    walk = _Walk(title_ids, style, vocab, method, Outline(sizes=_heading_depths(items, title_ids, style, method)))
    title_boxes = [it.bbox for it in items if id(it) in title_ids]
    # Page-1 front matter (authors, affiliations) right under the title is set large, not a heading.
    walk.front_end = max(b[3] for b in title_boxes) + FRONT_MATTER if title_boxes else 0.0
    walk.flat = [(0, SectionSpec(title, []))]
    for it in items:
        walk.add(it)
    walk.flush()
    for _, sec in walk.flat:
        sec.pages = sorted({p for para in sec.paragraphs for p in para.pages})
    return [walk.flat[0][1], *nest(walk.flat[1:])]  # the front matter is a sibling of the first heading


@dataclass
class _Walk:
    """The state of one walk over a document's items: the sections so far and the open paragraph."""

    title_ids: set[int]
    style: _Style
    vocab: set[str]
    method: str
    outline: Outline
    front_end: float = 0.0
    front: bool = True  # before the first heading
    flat: list[tuple[int, SectionSpec]] = field(default_factory=list)
    block: list[_Line] = field(default_factory=list)
    last_heading: _Line | None = None

    @property
    def open_title(self) -> bool:
        """The last section has no paragraph yet: a line may still extend its title."""
        return self.last_heading is not None and not self.flat[-1][1].paragraphs and not self.block

    def flush(self) -> None:
        if self.block:
            kind = "figure" if _FIGURE_CAPTION.match(self.block[0].text) else "text"
            sentences = paragraph_sentences([ln.text for ln in self.block], self.vocab)
            pages = sorted({ln.page for ln in self.block})
            box = _union(ln.bbox for ln in self.block)
            self.flat[-1][1].paragraphs.append(ParagraphSpec(sentences, kind, pages, box))
            self.block.clear()

    def heading_depth(self, ln: _Line) -> int | None:
        cue = _heading_cue(ln, self.style, self.method)
        text = ln.text.rstrip(_FOOTNOTE_MARKS).strip()
        if cue is None or (self.front and _front_matter(ln, text, cue, self.front_end)):
            return None
        number = heading_number(text) if heading_title(text) else None
        return self.outline.depth(number, _style_key(ln), strict=cue not in ("size", "layout"))  # "model" strict

    def add(self, it) -> None:
        if isinstance(it, _Table):
            self.flush()
            caption = " ".join(ln.text for ln in it.caption)
            grid = f"{caption}\n{it.markdown}" if caption else it.markdown
            box = _union([it.bbox] + [ln.bbox for ln in it.caption])
            self.flat[-1][1].paragraphs.append(ParagraphSpec([grid], "table", [it.page], box))
        elif isinstance(it, _Figure):
            self.flush()
            self.flat[-1][1].paragraphs.append(_figure_paragraph(it, self.vocab))
        elif id(it) not in self.title_ids and (depth := self.heading_depth(it)):
            self.add_heading(it, depth)
            return
        elif self.open_title and self.last_heading and _after_label(self.last_heading, it, self.style):
            self.flat[-1][1].title += " " + it.text  # "Part III" then "Installing, Resources, Misc." in large type
            self.last_heading = None
            return
        else:
            block = self.block
            if block and (
                _new_paragraph(block[-1], it) or (id(block[-1]) in self.title_ids) != (id(it) in self.title_ids)
            ):
                self.flush()
            self.block.append(it)
        self.last_heading = None

    def add_heading(self, ln: _Line, depth: int) -> None:
        self.flush()
        self.front = False
        if self.last_heading and not self.flat[-1][1].paragraphs and _continues_heading(self.last_heading, ln):
            self.flat[-1][1].title += " " + ln.text
        else:
            self.flat.append((depth, SectionSpec(ln.text, [], bbox=list(ln.bbox))))
        self.last_heading = ln


def _after_label(label: _Line, ln: _Line, style: _Style) -> bool:
    """The title line under a bare "Part III" / "Chapter 9" label: same page, below it, in large type."""
    return (
        label.page == ln.page
        and ln.bbox[1] > label.bbox[1]
        and _LABEL_ONLY.fullmatch(label.text.strip()) is not None
        and ln.size >= HEADING_SIZE * style.size
    )


def _front_matter(ln: _Line, text: str, cue: str, front_end: float) -> bool:
    """Before the first heading: authors and affiliations set large, centred or in caps right under the
    title, and the abstract and keywords, stay in the front-matter section instead of opening sections."""
    if text.replace(" ", "").rstrip(".:").lower() in FRONT_NAMES and ln.page <= 2:
        return True
    near_title = ln.page == 1 and ln.bbox[1] < front_end and heading_number(text) is None
    return near_title and (cue in ("centred", "caps") or (cue == "size" and not ln.bold))


def _continues_heading(prev: _Line, ln: _Line) -> bool:
    """A heading wrapped over two lines (same style, right below, not numbered itself), or the title
    under a bare "Chapter 9" / "Part III" label line, whatever the gap between them."""
    if prev.page == ln.page and _LABEL_ONLY.fullmatch(prev.text.strip()) and ln.bbox[1] > prev.bbox[1]:
        return True
    height = prev.bbox[3] - prev.bbox[1]
    close = -0.2 * height <= ln.bbox[1] - prev.bbox[3] < 0.7 * height  # tight leading: the boxes overlap a little
    return close and prev.page == ln.page and abs(prev.size - ln.size) < 0.5 and heading_title(ln.text) is None


def _shares_words(a: str, b: str) -> bool:
    """Whether two titles share a word of four letters or more."""
    words = lambda t: {w for w in re.findall(r"[a-z]{4,}", t.lower())}  # noqa: E731
    return bool(words(a) & words(b))


def _title_lines(first_page: list[_Line], body: float) -> list[_Line]:
    """The largest-font lines on page 1, when clearly larger than body text: the paper title."""
    if not first_page:
        return []
    top = max(ln.size for ln in first_page)
    if top < HEADING_SIZE * body:
        return []
    lines = sorted((ln for ln in first_page if ln.size == top), key=lambda ln: ln.bbox[1])
    if heading_number(lines[0].text) is not None:
        return []  # "1 Introduction": the document has no title block, its headings are the largest type
    out = lines[:1]
    for ln in lines[1:4]:  # a title wrapped over a few adjacent lines
        if ln.bbox[1] - out[-1].bbox[3] > 0.8 * (ln.bbox[3] - ln.bbox[1]):
            break
        out.append(ln)
    return out
