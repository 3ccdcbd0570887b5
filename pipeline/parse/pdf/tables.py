"""Tables found from ruling lines, as markdown grids (their text leaves the body)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pymupdf

from pipeline.parse.pdf.geometry import inside_box
from pipeline.parse.pdf.lines import Line
from pipeline.parse.text import clean_line


@dataclass
class Table:
    markdown: str
    bbox: tuple[float, float, float, float]
    page: int
    caption: list[Line] = field(default_factory=list)
    col: str = "S"


def _markdown(rows: list[list[str]]) -> str:
    rows = [r for r in rows if any(r)]
    width = max(len(r) for r in rows)
    rows = [[c.replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    grid = [rows[0], ["---"] * width, *rows[1:]]
    return "\n".join("| " + " | ".join(r) + " |" for r in grid)


def find_tables(page: pymupdf.Page, pno: int) -> list[Table]:
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
                    (w for w in words if cell and inside_box(w[:4], cell, 0)), key=lambda w: (w[5], w[6], w[7])
                )
                cells.append(clean_line(" ".join(w[4] for w in inside)))
            rows.append(cells)
        if any(any(r) for r in rows):
            out.append(Table(_markdown(rows), tuple(tab.bbox), pno))
    return out
