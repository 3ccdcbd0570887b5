"""Running headers and footers and page numbers: page furniture, dropped from the text."""

from __future__ import annotations

import re
from collections import defaultdict

from pipeline.parse.pdf.lines import Line

FURNITURE_SHARE = 0.5  # a line at the same height on this share of pages is a running header/footer


MARGIN = 0.08  # top/bottom share of the page where bare numbers are page numbers


_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–]?\s*\d{1,4}\s*[-–]?(?:\s*(?:/|of)\s*\d{1,4})?$", re.I)


def drop_furniture(pages: list[list[Line]], heights: list[float]) -> list[list[Line]]:
    """Remove running headers/footers and page numbers."""
    seen: dict[tuple[str, int], set[int]] = defaultdict(set)
    for lines in pages:
        for ln in lines:
            seen[(re.sub(r"\d+", "#", ln.text.lower()), round(ln.bbox[1] / 4))].add(ln.page)
    need = max(2, FURNITURE_SHARE * len(pages))

    def keep(ln: Line, height: float) -> bool:
        if len(seen[(re.sub(r"\d+", "#", ln.text.lower()), round(ln.bbox[1] / 4))]) >= need:
            return False
        in_margin = ln.bbox[3] < MARGIN * height or ln.bbox[1] > (1 - MARGIN) * height
        return not (in_margin and _PAGE_NUMBER.match(ln.text))

    return [[ln for ln in lines if keep(ln, h)] for lines, h in zip(pages, heights)]
