"""Reading order of a page's lines, tables and figures: column by column on two-column pages."""

from __future__ import annotations


def reading_order(items: list, width: float) -> list:
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
