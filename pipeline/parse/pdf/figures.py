"""Figures: image regions, and drawing regions with a "Figure N" caption next to them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pymupdf

from pipeline.parse.pdf.captions import FIGURE_CAPTION, attach_captions
from pipeline.parse.pdf.geometry import inside_box, union_box
from pipeline.parse.pdf.lines import Line
from pipeline.parse.pdf.tables import Table

Describer = Callable[[bytes], str]  # PNG bytes of a figure region -> a text description


MIN_FIGURE = 24.0  # points: smaller images and drawings are icons, rules or bullets


@dataclass
class Figure:
    bbox: tuple[float, float, float, float]
    page: int
    caption: list[Line] = field(default_factory=list)
    description: str = ""
    col: str = "S"


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
                    boxes[i] = tuple(union_box([a, b]))
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    return boxes


def find_figures(page: pymupdf.Page, pno: int, tables: list[Table], lines: list[Line]) -> list[Figure]:
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
    clusters = [c for c in clusters if not any(inside_box(c, t.bbox, 4) for t in tables)]
    for r in _merge_near(clusters, 1.5 * MIN_FIGURE):
        if r[2] - r[0] >= MIN_FIGURE and r[3] - r[1] >= MIN_FIGURE:
            boxes.append((r, False))
    figures: list[Figure] = []
    free = list(lines)
    for box, is_image in sorted(boxes, key=lambda b: (b[0][1], b[0][0])):
        if any(inside_box(box, f.bbox, 4) for f in figures) or any(inside_box(box, t.bbox, 4) for t in tables):
            continue
        fig = Figure(box, pno)
        free = attach_captions([fig], free, FIGURE_CAPTION)
        if is_image or fig.caption:
            figures.append(fig)
    return figures
