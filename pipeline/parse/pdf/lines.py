"""A page's text lines: pieces on one baseline joined, each with its dominant size, font, boldness and
monospace; run-in bold lead-ins split off; contents lines and table rows marked."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import pymupdf

from pipeline.parse.pdf.geometry import union_box
from pipeline.parse.text import clean_line

# TeX's T1 (Cork) encoding puts ff, fi, fl, ffi, ffl at 0x1B-0x1F; a font without a ToUnicode map
# hands them out as control characters ("\x1crst" for "first"), which would otherwise be lost
_T1_LIGATURES = str.maketrans({"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"})


# monospaced families by name: "NimbusMonL" (URW's Courier) and the usual Mono/TT/Courier/Typewriter names
_MONO_FONT = re.compile(r"Mono|NimbusMon|Courier|TT\d|Typewriter|Consolas|Menlo|Inconsolata", re.I)


@dataclass
class Line:
    text: str
    bbox: tuple[float, ...]  # x0, y0, x1, y1
    size: float
    bold: bool
    page: int
    block: int
    col: str = "S"  # "L"/"R" column of a two-column page, "S" spanning or single column
    font: str = ""
    mono: bool = False
    block_lines: int = 1  # lines in its MuPDF block: a standalone short line may be a heading
    toc_entry: bool = False  # a table-of-contents line (its page number sits far to the right)
    run_in: bool = False  # the bold lead-in of a paragraph ("Results. We found ..."), split off as a heading
    in_row: bool = False  # another line in the same font shares its baseline: a table row, not a heading
    layout: str = ""  # the layout model's class for the box holding this line ("section-header", "text", ...)


def _same_baseline(prev: dict, line: dict) -> bool:
    """Pieces TeX set on one baseline ("1" + "Introduction", a sentence split by a math run)."""
    size = max((sp["size"] for sp in line["spans"]), default=10)
    gap = line["bbox"][0] - prev["bbox"][2]
    return abs(line["bbox"][3] - prev["bbox"][3]) < 0.3 * size and -1 <= gap < 2 * size


def page_lines(page: pymupdf.Page, pno: int) -> list[Line]:
    """The page's text lines with their dominant font size, font and boldness."""
    out = []
    for b_index, block in enumerate(page.get_text("dict")["blocks"]):
        groups: list[dict] = []
        for line in block.get("lines", []):
            if groups and line["spans"] and _same_baseline(groups[-1], line):
                last, first = groups[-1], line["spans"][0]
                last["spans"] += [{**first, "text": " " + first["text"]}, *line["spans"][1:]]  # a space between pieces
                last["bbox"] = union_box([last["bbox"], line["bbox"]])
            else:
                groups.append({"spans": list(line["spans"]), "bbox": list(line["bbox"])})
        block_lines = [ln for line in groups if (ln := _line(line, pno, b_index))]
        for ln in block_lines:
            ln.block_lines = len(block_lines)
        if groups and block_lines:
            block_lines[:1] = _split_run_in(block_lines[0], groups[0]["spans"])
        out += block_lines
    _mark_toc_entries(out)
    _mark_rows(out)
    return out


def _line(line: dict, pno: int, b_index: int) -> Line | None:
    """One joined line: its text, and the size, font, boldness and monospace of most of its characters."""
    spans = [s for s in line["spans"] if s["text"].strip()]
    text = clean_line("".join(s["text"] for s in line["spans"]).translate(_T1_LIGATURES))
    if not spans or not text:
        return None
    chars: dict = defaultdict(int)
    fonts: dict = defaultdict(int)
    bold = mono = 0
    for s in spans:
        chars[round(s["size"], 1)] += len(s["text"])
        fonts[s["font"]] += len(s["text"])
        bold += len(s["text"]) if _bold(s) else 0
        mono += len(s["text"]) if s["flags"] & 8 or _MONO_FONT.search(s["font"]) else 0
    size = max(chars, key=lambda s: chars[s])
    total = sum(chars.values())
    font = max(fonts, key=lambda f: fonts[f])
    return Line(text, tuple(line["bbox"]), size, bold * 2 > total, pno, b_index, font=font, mono=mono * 2 > total)


def _bold(span: dict) -> bool:
    return (
        bool(span["flags"] & 16)
        or "bold" in span["font"].lower()
        or bool(re.search(r"BX|Bold|Bd|Black|Heavy", span["font"]))
    )


def _split_run_in(ln: Line, spans: list[dict]) -> list[Line]:
    """A paragraph's first line that opens with a short bold phrase ending in a full stop ("Results. We
    found ...") becomes a run-in heading line plus the rest of the line; other lines stay as they are."""
    spans = [sp for sp in spans if sp["text"].strip()]
    lead = 0
    while lead < len(spans) and _bold(spans[lead]):
        lead += 1
    if not 0 < lead < len(spans):
        return [ln]
    head = clean_line("".join(sp["text"] for sp in spans[:lead]))
    rest = clean_line("".join(sp["text"] for sp in spans[lead:]))
    words = head.rstrip(".").split()
    if not (head.endswith(".") and 1 <= len(words) <= 8 and rest[:1].isupper()) or re.fullmatch(r"[\dIVX.]+", head):
        return [ln]
    box = lambda part: tuple(union_box(sp["bbox"] for sp in part))  # noqa: E731
    first = Line(
        head.rstrip(".").strip(),
        box(spans[:lead]),
        ln.size,
        True,
        ln.page,
        ln.block,
        font=spans[0]["font"],
        block_lines=ln.block_lines,
        run_in=True,
    )
    second = Line(
        rest,
        box(spans[lead:]),
        ln.size,
        False,
        ln.page,
        ln.block,
        font=spans[lead]["font"],
        mono=ln.mono,
        block_lines=ln.block_lines,
    )
    return [first, second]


def _mark_rows(lines: list[Line]) -> None:
    """Lines sharing a baseline with another line in the same font, side by side, are table cells."""
    for ln in lines:
        ln.in_row = any(
            o is not ln
            and o.font == ln.font
            and abs(o.bbox[3] - ln.bbox[3]) < 0.3 * ln.size
            and (o.bbox[0] > ln.bbox[2] or ln.bbox[0] > o.bbox[2])
            for o in lines
        )


def _mark_toc_entries(lines: list[Line]) -> None:
    """A title with a bare page number (or dot leaders and one) far to its right is a contents line."""
    numbers = [ln for ln in lines if re.fullmatch(r"(?:\.\s*)*[0-9ivxlc]{1,4}", ln.text)]
    for ln in lines:
        for num in numbers:
            leader = num.text.startswith(".")  # ". . . . 12" set as its own line right after the title
            gap = num.bbox[0] - ln.bbox[2]
            if (
                num is not ln
                and abs(num.bbox[3] - ln.bbox[3]) < 0.4 * ln.size
                and (gap > 2 * ln.size or (leader and gap > -2))
            ):
                ln.toc_entry = num.toc_entry = True
                break
        if re.search(r"(?:\.\s?){4,}\s*\d{1,4}$", ln.text):
            ln.toc_entry = True
