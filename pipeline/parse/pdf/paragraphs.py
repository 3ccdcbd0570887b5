"""Paragraph breaks between lines, and the paragraphs of figures."""

from __future__ import annotations

from pipeline.parse.pdf.captions import FIGURE_CAPTION, TABLE_CAPTION
from pipeline.parse.pdf.cues import SENTENCE_END
from pipeline.parse.pdf.figures import Figure
from pipeline.parse.pdf.geometry import union_box
from pipeline.parse.pdf.lines import Line
from pipeline.parse.sentences import sentence_texts
from pipeline.parse.text import paragraph_sentences
from pipeline.tree import ParagraphSpec

LINE_ADVANCE = 1.5  # a baseline advance over this many line heights starts a new paragraph


def new_paragraph(prev: Line, ln: Line) -> bool:
    """Whether ``ln`` starts a new paragraph after ``prev`` (same section)."""
    if prev.page != ln.page or FIGURE_CAPTION.match(ln.text) or TABLE_CAPTION.match(ln.text):
        return True
    height = prev.bbox[3] - prev.bbox[1]
    if prev.mono != ln.mono:  # code starts or ends: a font change
        return True
    if prev.mono and prev.col == ln.col and ln.bbox[3] - prev.bbox[3] <= LINE_ADVANCE * height:
        return False  # lines of one code listing, whatever MuPDF's blocks say
    ended = bool(SENTENCE_END.search(prev.text))
    if (prev.col, prev.block) != (ln.col, ln.block):  # a sentence may run on into the next column
        return ended or not ln.text[:1].islower()
    if ln.bbox[3] - prev.bbox[3] > LINE_ADVANCE * height or abs(ln.size - prev.size) > 0.5:
        return True
    short = prev.bbox[2] < ln.bbox[2] - 0.15 * (ln.bbox[2] - ln.bbox[0])
    indented = ln.bbox[0] > prev.bbox[0] + 0.8 * ln.size
    return ended and (short or indented)


def figure_paragraph(fig: Figure, vocab: set[str]) -> ParagraphSpec:
    caption = (
        paragraph_sentences([ln.text for ln in fig.caption], vocab) if fig.caption else [f"[Figure on page {fig.page}]"]
    )
    extra = sentence_texts(f"Figure description: {fig.description}") if fig.description else []
    return ParagraphSpec(caption + extra, "figure", [fig.page], union_box([fig.bbox] + [ln.bbox for ln in fig.caption]))
