"""The document's title block: the largest-font lines on page 1."""

from __future__ import annotations

import re

from pipeline.parse.headings import heading_number
from pipeline.parse.pdf.lines import Line
from pipeline.parse.pdf.style import HEADING_SIZE


def shares_words(a: str, b: str) -> bool:
    """Whether two titles share a word of four letters or more."""
    words = lambda t: {w for w in re.findall(r"[a-z]{4,}", t.lower())}  # noqa: E731
    return bool(words(a) & words(b))


def find_title_lines(first_page: list[Line], body: float) -> list[Line]:
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
