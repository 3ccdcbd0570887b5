"""Every page's body lines, tables and figures (with captions and, when asked, descriptions)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pymupdf

from pipeline.parse.pdf.captions import attach_captions
from pipeline.parse.pdf.figures import Describer, Figure, find_figures
from pipeline.parse.pdf.geometry import inside_box
from pipeline.parse.pdf.layout_model import Boxes, mark_layout, page_boxes
from pipeline.parse.pdf.lines import Line, page_lines
from pipeline.parse.pdf.tables import Table, find_tables


@dataclass
class Pages:
    """What every page holds: its body lines (reading order not yet fixed), tables, figures and size."""

    lines: list[list[Line]] = field(default_factory=list)
    tables: list[list[Table]] = field(default_factory=list)
    figures: list[list[Figure]] = field(default_factory=list)
    sizes: list[tuple[float, float]] = field(default_factory=list)
    has_images: bool = False


FIGURE_DPI = 144  # a figure's rendering for the vision model ...
MAX_FIGURE_PIXELS = 4_000_000  # ... at most this many pixels: a figure on a huge page is drawn coarser, not bigger


def figure_png(page: pymupdf.Page, bbox) -> bytes:
    """The figure's region of the page (clipped to the page) as PNG, at FIGURE_DPI or less: a stranger's PDF
    can declare a page of 200 x 200 inches, which at 144 dpi is over 800 million pixels."""
    clip = pymupdf.Rect(bbox) & page.rect
    area_in2 = max(clip.width * clip.height, 1.0) / 72**2
    dpi = min(FIGURE_DPI, int((MAX_FIGURE_PIXELS / area_in2) ** 0.5))
    return page.get_pixmap(clip=clip, dpi=max(dpi, 1)).tobytes("png")


def read_pages(
    doc: pymupdf.Document, headings: str, layout: dict[int, Boxes] | None, describe: Describer | None
) -> Pages:
    """Lines, tables and figures of every page; lines inside a table or figure, or captioning one, leave the body."""
    out = Pages()
    for pno, page in enumerate(doc, start=1):
        page_tables = find_tables(page, pno)
        lines = [ln for ln in page_lines(page, pno) if not any(inside_box(ln.bbox, t.bbox) for t in page_tables)]
        if headings != "rules":
            mark_layout(lines, layout[pno] if layout else page_boxes(page))
        lines = attach_captions(page_tables, lines)
        page_figures = find_figures(page, pno, page_tables, lines)
        out.has_images = out.has_images or bool(page.get_image_info())
        taken = {id(x) for f in page_figures for x in f.caption}
        lines = [
            ln for ln in lines if id(ln) not in taken and not any(inside_box(ln.bbox, f.bbox) for f in page_figures)
        ]
        for fig in page_figures:
            if describe:
                fig.description = describe(figure_png(page, fig.bbox))
        out.lines.append(lines)
        out.tables.append(page_tables)
        out.figures.append(page_figures)
        out.sizes.append((page.rect.width, page.rect.height))
    return out
