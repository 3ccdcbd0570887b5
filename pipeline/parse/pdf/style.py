"""What a document's body text looks like (size, font, line width, margins), which headings stand out from."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from pipeline.parse.pdf.lines import Line

HEADING_SIZE = 1.2  # a line this much larger than the body text is a heading


LARGER = 1.08  # a numbered line this much larger is one too (groff/mom set headings only ~15% larger)


PAGE_TEXT = 600  # characters: a page with this much text has a body size of its own


MARGIN_SHARE = 0.05  # a left edge shared by this share of lines is a column margin


def _body_size(lines: list[Line]) -> float:
    sizes = [ln.size for ln in lines for _ in range(len(ln.text))]
    return statistics.median(sizes) if sizes else 10.0


def _body_font(lines: list[Line]) -> str:
    fonts: dict[str, int] = defaultdict(int)
    for ln in lines:
        fonts[ln.font] += len(ln.text)
    return max(fonts, key=lambda f: fonts[f]) if fonts else ""


@dataclass
class Style:
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

    def at_margin(self, ln: Line) -> bool:
        return any(abs(round(ln.bbox[0]) - m) <= 1 for m in self.margins)

    def centred(self, ln: Line) -> bool:
        return any(abs((ln.bbox[0] + ln.bbox[2]) / 2 - c) <= 3 for c in self.centres)


def body_style(lines: list[Line]) -> Style:
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
    return Style(size, _body_font(lines), width, margins, centres, _larger_pages(lines, size))


def _larger_pages(lines: list[Line], size: float) -> dict[int, float]:
    """Pages of running text set in a larger body size than the document's (a sample chapter in 12.5 pt
    bound with articles in 10 pt): on them, text at that size is body text, not a heading."""
    by_page: dict[int, list[Line]] = defaultdict(list)
    for ln in lines:
        by_page[ln.page].append(ln)
    out = {}
    for page, page_lines in by_page.items():
        if sum(len(ln.text) for ln in page_lines) >= PAGE_TEXT and (body := _body_size(page_lines)) > LARGER * size:
            out[page] = body
    return out
