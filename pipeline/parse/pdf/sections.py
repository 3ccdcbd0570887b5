"""The walk over a document's ordered items: headings open (nested) sections, other lines fill paragraphs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.parse.headings import Outline, heading_number, nest
from pipeline.parse.pdf.captions import FIGURE_CAPTION
from pipeline.parse.pdf.cues import FOOTNOTE_MARKS, heading_cue
from pipeline.parse.pdf.figures import Figure
from pipeline.parse.pdf.geometry import union_box
from pipeline.parse.pdf.lines import Line
from pipeline.parse.pdf.paragraphs import figure_paragraph, new_paragraph
from pipeline.parse.pdf.style import HEADING_SIZE, Style
from pipeline.parse.pdf.tables import Table
from pipeline.parse.text import heading_title, paragraph_sentences
from pipeline.tree import ParagraphSpec, SectionSpec

FRONT_MATTER = 120.0  # points below the title where large unnumbered lines are authors, not headings


FRONT_NAMES = frozenset({"abstract", "summary", "keywords", "keyword", "keywordsandphrases", "indexterms"})


REFERENCE_NAMES = frozenset({"references", "bibliography", "literaturecited", "workscited", "literature"})


_LABEL_ONLY = re.compile(r"(?:Part|PART|Chapter|CHAPTER|Appendix|APPENDIX)(?:\s+[\dIVXLA-Z]{1,5}\.?)?")


def is_references(title: str) -> bool:
    """A bibliography section ("References", "7 Bibliography"): its paragraphs are citations, not prose."""
    words = re.sub(r"[^a-z]", "", re.sub(r"^\s*[\dIVX]+(?:\.\d+)*\.?\s+", "", title).lower())
    return words in REFERENCE_NAMES


def _style_key(ln: Line) -> tuple[float, bool]:
    """A heading's place in the font hierarchy: size first, bold above regular at one size."""
    return round(ln.size, 1), ln.bold


def _heading_depths(items: list, title_ids: set[int], style: Style, method: str) -> dict[tuple[float, bool], int]:
    """Default depth of an unnumbered heading by its style: the largest (boldest) heading style is depth 1."""
    keys = sorted(
        {
            _style_key(it)
            for it in items
            if isinstance(it, Line) and id(it) not in title_ids and heading_cue(it, style, method)
        },
        reverse=True,
    )
    return {key: i + 1 for i, key in enumerate(keys)}


def section_specs(
    items: list, title: str, title_ids: set[int], style: Style, vocab: set[str], method: str = "rules"
) -> list[SectionSpec]:
    """Walk the ordered lines, tables and figures: headings open (nested) sections, other lines fill paragraphs."""
    walk = _Walk(title_ids, style, vocab, method, Outline(sizes=_heading_depths(items, title_ids, style, method)))
    title_boxes = [it.bbox for it in items if id(it) in title_ids]
    # Page-1 front matter (authors, affiliations) right under the title is set large, not a heading.
    walk.front_end = max(b[3] for b in title_boxes) + FRONT_MATTER if title_boxes else 0.0
    walk.flat = [(0, SectionSpec(title, []))]
    for it in items:
        walk.add(it)
    walk.flush()
    for _, sec in walk.flat:
        sec.pages = sorted({p for para in sec.paragraphs for p in para.pages})
    return [walk.flat[0][1], *nest(walk.flat[1:])]  # the front matter is a sibling of the first heading


@dataclass
class _Walk:
    """The state of one walk over a document's items: the sections so far and the open paragraph."""

    title_ids: set[int]
    style: Style
    vocab: set[str]
    method: str
    outline: Outline
    front_end: float = 0.0
    front: bool = True  # before the first heading
    flat: list[tuple[int, SectionSpec]] = field(default_factory=list)
    block: list[Line] = field(default_factory=list)
    last_heading: Line | None = None

    @property
    def open_title(self) -> bool:
        """The last section has no paragraph yet: a line may still extend its title."""
        return self.last_heading is not None and not self.flat[-1][1].paragraphs and not self.block

    def flush(self) -> None:
        if self.block:
            kind = "figure" if FIGURE_CAPTION.match(self.block[0].text) else "text"
            sentences = paragraph_sentences([ln.text for ln in self.block], self.vocab)
            pages = sorted({ln.page for ln in self.block})
            box = union_box(ln.bbox for ln in self.block)
            self.flat[-1][1].paragraphs.append(ParagraphSpec(sentences, kind, pages, box))
            self.block.clear()

    def heading_depth(self, ln: Line) -> int | None:
        cue = heading_cue(ln, self.style, self.method)
        text = ln.text.rstrip(FOOTNOTE_MARKS).strip()
        if cue is None or (self.front and _front_matter(ln, text, cue, self.front_end)):
            return None
        number = heading_number(text) if heading_title(text) else None
        return self.outline.depth(number, _style_key(ln), strict=cue not in ("size", "layout"))  # "model" strict

    def add(self, it) -> None:
        if isinstance(it, Table):
            self.flush()
            caption = " ".join(ln.text for ln in it.caption)
            grid = f"{caption}\n{it.markdown}" if caption else it.markdown
            box = union_box([it.bbox] + [ln.bbox for ln in it.caption])
            self.flat[-1][1].paragraphs.append(ParagraphSpec([grid], "table", [it.page], box))
        elif isinstance(it, Figure):
            self.flush()
            self.flat[-1][1].paragraphs.append(figure_paragraph(it, self.vocab))
        elif id(it) not in self.title_ids and (depth := self.heading_depth(it)):
            self.add_heading(it, depth)
            return
        elif self.open_title and self.last_heading and _after_label(self.last_heading, it, self.style):
            self.flat[-1][1].title += " " + it.text  # "Part III" then "Installing, Resources, Misc." in large type
            self.last_heading = None
            return
        else:
            block = self.block
            if block and (
                new_paragraph(block[-1], it) or (id(block[-1]) in self.title_ids) != (id(it) in self.title_ids)
            ):
                self.flush()
            self.block.append(it)
        self.last_heading = None

    def add_heading(self, ln: Line, depth: int) -> None:
        self.flush()
        self.front = False
        if self.last_heading and not self.flat[-1][1].paragraphs and _continues_heading(self.last_heading, ln):
            self.flat[-1][1].title += " " + ln.text
        else:
            self.flat.append((depth, SectionSpec(ln.text, [], bbox=list(ln.bbox))))
        self.last_heading = ln


def _after_label(label: Line, ln: Line, style: Style) -> bool:
    """The title line under a bare "Part III" / "Chapter 9" label: same page, below it, in large type."""
    return (
        label.page == ln.page
        and ln.bbox[1] > label.bbox[1]
        and _LABEL_ONLY.fullmatch(label.text.strip()) is not None
        and ln.size >= HEADING_SIZE * style.size
    )


def _front_matter(ln: Line, text: str, cue: str, front_end: float) -> bool:
    """Before the first heading: authors and affiliations set large, centred or in caps right under the
    title, and the abstract and keywords, stay in the front-matter section instead of opening sections."""
    if text.replace(" ", "").rstrip(".:").lower() in FRONT_NAMES and ln.page <= 2:
        return True
    near_title = ln.page == 1 and ln.bbox[1] < front_end and heading_number(text) is None
    return near_title and (cue in ("centred", "caps") or (cue == "size" and not ln.bold))


def _continues_heading(prev: Line, ln: Line) -> bool:
    """A heading wrapped over two lines (same style, right below, not numbered itself), or the title
    under a bare "Chapter 9" / "Part III" label line, whatever the gap between them."""
    if prev.page == ln.page and _LABEL_ONLY.fullmatch(prev.text.strip()) and ln.bbox[1] > prev.bbox[1]:
        return True
    height = prev.bbox[3] - prev.bbox[1]
    close = -0.2 * height <= ln.bbox[1] - prev.bbox[3] < 0.7 * height  # tight leading: the boxes overlap a little
    return close and prev.page == ln.page and abs(prev.size - ln.size) < 0.5 and heading_title(ln.text) is None
