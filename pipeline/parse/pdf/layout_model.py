"""PyMuPDF's layout model (``pymupdf.layout``, an ONNX model on CPU): its boxes per page, and the class of
the box holding each line (the ``layout`` and ``combined`` heading methods read it)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pipeline.parse.pdf.file import open_pdf
from pipeline.parse.pdf.geometry import inside_box
from pipeline.parse.pdf.lines import Line

LAYOUT_HEADINGS = ("section-header", "title")


Boxes = list[tuple[tuple[float, float, float, float], str]]


def page_boxes(page: pymupdf.Page) -> Boxes:
    """The PyMuPDF layout model's boxes (``pymupdf.layout``, an ONNX model on CPU): bbox and class."""
    import pymupdf.layout  # noqa: F401  (loading it registers the model with PyMuPDF)

    pymupdf.layout.activate()
    page.get_layout()
    return [(tuple(b[:4]), b[4]) for b in page.layout_information or []]


def layout_boxes(path: str | Path) -> dict[int, Boxes]:
    """Every page's layout boxes (1-based page numbers); computed once, reused by several heading methods."""
    doc = open_pdf(Path(path))
    try:
        return {pno: page_boxes(page) for pno, page in enumerate(doc, start=1)}
    finally:
        doc.close()


def mark_layout(lines: list[Line], boxes: list) -> None:
    """Give each line the class of the smallest layout box holding its centre."""
    for ln in lines:
        holding = [(abs((b[2] - b[0]) * (b[3] - b[1])), cls) for b, cls in boxes if inside_box(ln.bbox, b, 2.0)]
        ln.layout = min(holding)[1] if holding else ""
