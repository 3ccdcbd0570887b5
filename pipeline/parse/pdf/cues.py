"""Why a line is a heading (its cue), by the rules, the layout model, or both (``HEADINGS``); the rules and
their thresholds: docs/parsing.md."""

from __future__ import annotations

import re

from pipeline.parse.headings import heading_number
from pipeline.parse.pdf.captions import FIGURE_CAPTION, TABLE_CAPTION
from pipeline.parse.pdf.layout_model import LAYOUT_HEADINGS
from pipeline.parse.pdf.lines import Line
from pipeline.parse.pdf.style import HEADING_SIZE, LARGER, Style
from pipeline.parse.text import NAMED_HEADINGS, heading_title

SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")


FOOTNOTE_MARKS = "∗*†‡§¶"


_CODE = re.compile(r"[=$\\{}<>|]|\w\(|\)\s*$|^[a-z_]+\.[a-z_]+")  # code, commands and calls set in a heading font


ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important", "hint", "danger", "attention", "example"})


_SMALL_CAPS = re.compile(r"(?:CSC|SmallCaps|Caps|-SC\b|SC\d|\.sc\b)", re.I)


_MATH_FONT = re.compile(r"(?:CMSY|CMEX|CMMI|MSAM|MSBM|Symbol|.*Math)", re.I)


def heading_cue(ln: Line, style: Style, method: str = "rules") -> str | None:
    """Why ``ln`` is a heading, or None: by the rules, the layout model, or both (``HEADINGS``)."""
    if method == "rules":
        return rule_cue(ln, style)
    text = ln.text.strip()
    model = ln.layout in LAYOUT_HEADINGS and sum(c.isalpha() for c in text) >= 2 and len(text) <= 120
    if method == "layout":
        return "layout" if model else None
    return rule_cue(ln, style) or ("model" if model and _model_heading_ok(ln, text, style) else None)


def _title_like(text: str) -> bool:
    """Reads like a heading: at most 12 words, starts with a capital or a number, no sentence end, colon or comma."""
    words = text.split()
    end = text.rstrip(FOOTNOTE_MARKS)
    if not words or len(words) > 12 or end.endswith((":", ",", ";")) or not (text[0].isupper() or text[0].isdigit()):
        return False
    return bool(re.fullmatch(r"[\dIVXA-H.]+", words[0])) or not end.endswith((".", "!", "?"))


def _model_heading_ok(ln: Line, text: str, style: Style) -> bool:
    """The rules' veto on a layout-model heading: no contents line, code, caption, admonition or sentence."""
    if ln.toc_entry or ln.mono or ln.size < style.size - 0.5 or _CODE.search(text):
        return False
    if FIGURE_CAPTION.match(text) or TABLE_CAPTION.match(text) or text.rstrip(":").lower() in ADMONITIONS:
        return False
    return _title_like(text)


def _vetoed(ln: Line, text: str) -> bool:
    """Never a heading: contents lines, code, index letters, over-long lines, captions, admonition labels."""
    if ln.toc_entry or ln.mono or sum(c.isalpha() for c in text) < 2 or len(text) > 120:
        return True  # no letters, or an index's single-letter group head ("B", "C")
    # "Figure 11-1: ..." set in a heading font is still a caption; "Note" labels a box
    return bool(FIGURE_CAPTION.match(text) or TABLE_CAPTION.match(text) or text.rstrip(":").lower() in ADMONITIONS)


def rule_cue(ln: Line, style: Style) -> str | None:
    """Why ``ln`` is a heading by the rules, or None (see the module docstring).

    "size" (clearly larger type), "larger" (a little larger and numbered), "bold" (bold and numbered
    or named, or a bold line standing alone), "caps" (a standalone line in small caps or all caps),
    "centred" (a short standalone line centred on a column), "font" (a distinct font at a margin).
    """
    text = ln.text.rstrip(FOOTNOTE_MARKS).strip()
    if _vetoed(ln, text):
        return None
    if ln.run_in:
        return "run-in" if _title_like(text) and not _CODE.search(text) else None
    numbered = heading_title(text) is not None and heading_number(text) is not None
    named = text.replace(" ", "").rstrip(".:").lower() in NAMED_HEADINGS
    short = ln.block_lines <= 2 or ln.bbox[2] - ln.bbox[0] < 0.8 * style.width
    sentence = (
        bool(SENTENCE_END.search(text)) and not re.fullmatch(r"[\dIVXA-H.]+\.", text.split()[0] + ".") and not numbered
    )
    body = style.body(ln.page)
    if ln.size >= HEADING_SIZE * body:
        return "size" if (numbered or named or ln.bold or short) and not sentence and not text.endswith(":") else None
    if abs(ln.size - body) > 0.5 * body * (HEADING_SIZE - 1) and ln.size < body:
        return None  # smaller than body text: footnotes, captions, table cells
    if ln.size >= LARGER * body and numbered:
        return "larger"
    if ln.bold and (named or numbered):
        return "bold"
    return _body_size_cue(ln, text, style, numbered, sentence)


def _body_size_cue(ln: Line, text: str, style: Style, numbered: bool, sentence: bool) -> str | None:
    """The cues of a heading set at body size: a standalone numbered, bold, caps or centred line, or a distinct font."""
    narrow = ln.bbox[2] - ln.bbox[0] < 0.9 * style.width
    distinct = _family(ln.font) != _family(style.font) and not _MATH_FONT.match(ln.font.split("+")[-1])
    if numbered and ln.block_lines == 1 and narrow and (distinct or ln.size > style.body(ln.page) + 0.2):
        return "numbered"  # a standalone numbered line set apart by its font (mom's 10.8 pt in 10.5 pt text)
    alone = (
        ln.block_lines == 1
        and narrow
        and _title_like(text)
        and not _CODE.search(text)
        and not ln.in_row
        and not _MATH_FONT.match(ln.font.split("+")[-1])
    )
    if alone and ln.bold:
        return "bold"
    letters = [c for c in text if c.isalpha()]
    if alone and (_SMALL_CAPS.search(ln.font.split("+")[-1]) or (len(letters) >= 4 and text.isupper())):
        return "caps"
    if alone and ln.bbox[2] - ln.bbox[0] < 0.6 * style.width and style.centred(ln) and not style.at_margin(ln):
        return "centred"
    plain_at_margin = style.at_margin(ln) and not ln.in_row and not ln.bold and not sentence and not text.endswith(":")
    if distinct and narrow and plain_at_margin and text[0].isupper() and len(text.split()) <= 12:
        return "font"
    return None


def _family(font: str) -> str:
    """``LMRoman10-Regular`` -> ``lmroman``: the type family without size and weight."""
    return re.sub(r"[\d-].*$", "", font.split("+")[-1]).lower()
