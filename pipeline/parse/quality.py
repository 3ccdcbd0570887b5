"""How faithful are our PDF trees? Measured against what the PDF itself says.

Per document and heading method (``pipeline.specs.HEADINGS``): headings found versus
the PDF's own outline (``doc.get_toc()``, or the window's ``<doc>.toc.json`` sidecar written
by ``pipeline.parse.quality_pdfs``) as precision / recall / F1; nesting accuracy (for consecutive
matched headings, does the tree's depth go up, down or stay as the outline's level does);
the share of PyMuPDF's plain ``get_text()`` words the tree keeps; reading order on two-column
pages (consecutive paragraphs in the order the content stream has them); tables, figures, and
seconds per page. Sources are macro-averaged (``pipeline.report.pages.parse_quality``), so one big
manual cannot hide a failing typesetting family.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.tree import DocTree, section_depth

_NUMBER_PREFIX = re.compile(r"^\s*(?:(?:\d{1,2}(?:\.\d{1,2}){0,3}|[IVX]{1,6}|[A-H](?:\.\d{1,2})*)\.?\s+)")
_WORD = re.compile(r"[a-z0-9]+")
MIN_PREFIX = 12  # a wrapped or truncated title still matches when this many characters agree
ORDER_WORDS = 4  # a paragraph is located in the content stream by its first words


@dataclass
class Quality:
    doc: str
    method: str
    pages: int
    toc_entries: int
    headings: int
    heading_precision: float | None
    heading_recall: float | None
    heading_f1: float | None
    nesting_accuracy: float | None
    sections: int
    paragraphs: int
    sentences: int
    sentences_per_paragraph: float
    text_recovered: float
    two_column_pages: int
    reading_order: float | None
    tables: int
    figures: int
    seconds_per_page: float
    missed: str  # a few outline entries not found, and headings the outline does not have (the "why")
    extra: str


_LABEL = re.compile(r"^\s*(?:(?:part|chapter|appendix|section)\b\.?|title page:|cover:)\s*", re.I)


def _norm(title: str) -> str:
    return "".join(_WORD.findall(_NUMBER_PREFIX.sub("", title).lower()))


def _norms(title: str) -> set[str]:
    """A title as written and without its label and number ("Appendix A References", "X server" keeps its X)."""
    bare = _LABEL.sub("", title)
    return {n for n in ("".join(_WORD.findall(title.lower())), _norm(title), _norm(bare)) if n}


def _same_one(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= MIN_PREFIX and (a.startswith(b) or b.startswith(a)))


def _same(a: str | set[str], b: str | set[str]) -> bool:
    """Whether two titles match: any of their normal forms equal, or one a long prefix of the other."""
    a = {a} if isinstance(a, str) else a
    b = {b} if isinstance(b, str) else b
    return any(x and y and _same_one(x, y) for x in a for y in b)


def match_pairs(found: list[str], toc: list[str]) -> list[tuple[int, int]]:
    """Pairs (found index, outline index): each found heading takes the first free outline entry it matches."""
    free: list[set[str] | None] = [_norms(t) for t in toc]
    pairs = []
    for i, title in enumerate(_norms(f) for f in found):
        for j, t in enumerate(free):
            if t is not None and _same(title, t):
                free[j] = None
                pairs.append((i, j))
                break
    return pairs


def headings(tree: DocTree) -> list[tuple[str, int]]:
    """Section titles and depths the parser found (the front-matter section, titled after the document, is none)."""
    out = [(n.title, section_depth(n.id)) for n in tree.at_level("section")]
    first = tree.root.children[:1]
    if first and tree.nodes[first[0]].title == tree.title and out:
        out = out[1:]
    return out


def nesting_accuracy(depths: list[int], levels: list[int]) -> float | None:
    """Share of consecutive matched headings whose tree depth moves (up, down, level) as the outline level does."""
    steps = [
        (d2 > d1) - (d2 < d1) == (l2 > l1) - (l2 < l1) for d1, d2, l1, l2 in zip(depths, depths[1:], levels, levels[1:])
    ]
    return round(sum(steps) / len(steps), 3) if steps else None


def text_recovered(tree: DocTree, plain: str) -> float:
    """Share of the plain-text words (with multiplicity) that the tree's text and titles keep."""
    want = Counter(_WORD.findall(plain.lower()))
    titles = " ".join(n.title for n in tree.at_level("section"))
    have = Counter(_WORD.findall(f"{tree.text} {titles} {tree.title}".lower()))
    total = sum(want.values())
    return sum(min(c, have[w]) for w, c in want.items()) / total if total else 1.0


def two_column(words: list[tuple], width: float) -> bool:
    """A page with many words wholly in each half, side by side (PyMuPDF words, not our parser's columns)."""
    mid = width / 2
    left = [w for w in words if w[2] < mid]
    right = [w for w in words if w[0] > mid]
    if min(len(left), len(right)) < 0.25 * len(words) or len(words) < 50:
        return False
    return min(w[1] for w in right) < max(w[3] for w in left) and min(w[1] for w in left) < max(w[3] for w in right)


def reading_order(paragraphs: list[str], stream: list[str]) -> float | None:
    """Share of consecutive paragraphs (tree order) found in increasing content-stream order."""
    positions = []
    for text in paragraphs:
        key = _WORD.findall(text.lower())[:ORDER_WORDS]
        if len(key) < ORDER_WORDS:
            continue
        hit = next((i for i in range(len(stream) - len(key) + 1) if stream[i : i + len(key)] == key), None)
        if hit is not None:
            positions.append(hit)
    steps = [b > a for a, b in zip(positions, positions[1:])]
    return sum(steps) / len(steps) if steps else None


def _example(titles: list[str], n: int = 3) -> str:
    return "; ".join(t[:40] for t in titles[:n])


@dataclass
class PdfText:
    """What PyMuPDF reads from the PDF itself, the reference for text recovery and reading order."""

    plain: str
    pages: int
    stream_pages: dict[int, list[str]] | None = None  # two-column pages: their words in content-stream order


def measure(tree: DocTree, toc: list[list], pdf: PdfText, method: str = "rules", seconds: float = 0.0) -> Quality:
    """The quality of one parsed tree against its outline ``[[level, title, page], ...]`` and plain text."""
    plain, pages, stream_pages = pdf.plain, pdf.pages, pdf.stream_pages
    toc_titles = [t for _, t, *_ in toc]
    found = headings(tree)
    if any(_same(_norms(tree.title), _norms(t)) for t in toc_titles):
        found = [(tree.title, 0), *found]  # the outline names the document's title, and the parser found it
    titles = [t for t, _ in found]
    pairs = match_pairs(titles, toc_titles)
    hits = len(pairs)
    precision = hits / len(found) if found else None
    recall = hits / len(toc) if toc else None
    f1 = (2 * precision * recall / (precision + recall) if precision and recall else 0.0) if toc else None
    pairs.sort()
    nesting = nesting_accuracy([found[i][1] for i, _ in pairs], [toc[j][0] for _, j in pairs])
    text_paras = [p for p in tree.at_level("paragraph") if p.kind == "text"]
    kinds = Counter(p.kind for p in tree.at_level("paragraph"))
    orders = []
    for page, stream in (stream_pages or {}).items():
        order = reading_order([p.text for p in text_paras if p.pages[:1] == [page]], stream)
        if order is not None:
            orders.append(order)
    matched_toc = {j for _, j in pairs}
    matched_found = {i for i, _ in pairs}
    return Quality(
        doc=tree.doc_id,
        method=method,
        pages=pages,
        toc_entries=len(toc),
        headings=len(found),
        heading_precision=None if precision is None else round(precision, 3),
        heading_recall=None if recall is None else round(recall, 3),
        heading_f1=None if f1 is None else round(f1, 3),
        nesting_accuracy=nesting,
        sections=sum(1 for _ in tree.at_level("section")),
        paragraphs=sum(kinds.values()),
        sentences=sum(1 for _ in tree.at_level("sentence")),
        sentences_per_paragraph=round(sum(len(p.children) for p in text_paras) / max(len(text_paras), 1), 2),
        text_recovered=round(text_recovered(tree, plain), 3),
        two_column_pages=len(stream_pages or {}),
        reading_order=round(sum(orders) / len(orders), 3) if orders else None,
        tables=kinds["table"],
        figures=kinds["figure"],
        seconds_per_page=round(seconds / max(pages, 1), 3),
        missed=_example([t for j, t in enumerate(toc_titles) if j not in matched_toc]),
        extra=_example([t for i, t in enumerate(titles) if i not in matched_found]),
    )


def outline(path: Path) -> list[list]:
    """The ground-truth outline: the PDF window's sidecar when there is one, else the PDF's own."""
    sidecar = path.with_suffix(".toc.json")
    if sidecar.exists():
        return json.loads(sidecar.read_text(encoding="utf-8"))
    import pymupdf

    with pymupdf.open(path) as doc:
        return [[lv, t, p] for lv, t, p in doc.get_toc(simple=True) if t.strip()]


def measure_pdf(path: str | Path, doc_id: str | None = None, methods: tuple[str, ...] = ("rules",)) -> list[Quality]:
    """Parse one PDF with each heading method; measure each against the outline and plain text (raises ParseError)."""
    from pipeline.parse.pdf import layout_boxes, open_pdf, parse_pdf

    path = Path(path)
    with open_pdf(path) as doc:  # a bad file raises ParseError with its reason, before anything else
        toc = outline(path)
        plain = "\n".join(page.get_text() for page in doc)
        pages = doc.page_count
        streams = {}
        for pno, page in enumerate(doc, start=1):
            words = page.get_text("words", sort=False)
            if two_column(words, page.rect.width):
                streams[pno] = [w for word in words for w in _WORD.findall(word[4].lower())]
    layout, layout_seconds = None, 0.0
    if any(m != "rules" for m in methods):  # the model runs once; both methods that use it pay its time
        start = time.perf_counter()
        layout = layout_boxes(path)
        layout_seconds = time.perf_counter() - start
    out = []
    for method in methods:
        start = time.perf_counter()
        tree = parse_pdf(path, doc_id or path.stem, headings=method, layout=layout)
        seconds = time.perf_counter() - start + (layout_seconds if method != "rules" else 0.0)
        out.append(measure(tree, toc, PdfText(plain, pages, streams), method, seconds))
    return out
