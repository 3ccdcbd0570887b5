"""Captions ("Table 1: ...", "Figure 2. ..."): moved out of the running text into their table or figure."""

from __future__ import annotations

import re

from pipeline.parse.pdf.lines import Line

TABLE_CAPTION = re.compile(r"^(?:Table|Tab\.)\s*\d+")


FIGURE_CAPTION = re.compile(r"^(?:Figure|Fig\.)\s*\d+")


CAPTION_REACH = 40.0  # points between a figure region and its caption


def attach_captions(tables: list, lines: list[Line], pattern: re.Pattern = TABLE_CAPTION) -> list[Line]:
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
