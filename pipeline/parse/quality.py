"""How faithful are our PDF trees? Measured against what the PDF itself says.

Per document: headings found versus the PDF's own outline (``doc.get_toc()``, written by
the authoring tool, so an independent ground truth), sentences per paragraph, the share of
PyMuPDF's plain ``get_text()`` words that the tree keeps (running headers and page numbers
are meant to go, everything else should stay), and tables and figures found.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from pipeline.parse.errors import ParseError
from pipeline.tree import DocTree

_NUMBER_PREFIX = re.compile(r"^\s*(?:(?:\d{1,2}(?:\.\d{1,2}){0,3}|[IVX]{1,6}|[A-H](?:\.\d{1,2})*)\.?\s+)")
_WORD = re.compile(r"[a-z0-9]+")
MIN_PREFIX = 12  # a wrapped or truncated title still matches when this many characters agree


@dataclass
class Quality:
    doc: str
    pages: int
    toc_entries: int
    headings: int
    heading_precision: float | None
    heading_recall: float | None
    sections: int
    paragraphs: int
    sentences: int
    sentences_per_paragraph: float
    text_recovered: float
    tables: int
    figures: int


def _norm(title: str) -> str:
    return "".join(_WORD.findall(_NUMBER_PREFIX.sub("", title).lower()))


def _same(a: str, b: str) -> bool:
    if not a or not b:
        return False
    return a == b or (min(len(a), len(b)) >= MIN_PREFIX and (a.startswith(b) or b.startswith(a)))


def match_headings(found: list[str], toc: list[str]) -> int:
    """How many found headings match a distinct outline entry (normalised, number-free titles)."""
    free = [_norm(t) for t in toc]
    hits = 0
    for title in (_norm(f) for f in found):
        for i, t in enumerate(free):
            if t is not None and _same(title, t):
                free[i] = None
                hits += 1
                break
    return hits


def headings(tree: DocTree) -> list[str]:
    """Section titles the parser found (the front-matter section, titled after the document, is no heading)."""
    out = [n.title for n in tree.at_level("section")]
    first = tree.root.children[:1]
    if first and tree.nodes[first[0]].title == tree.title and out:
        out = out[1:]
    return out


def text_recovered(tree: DocTree, plain: str) -> float:
    """Share of the plain-text words (with multiplicity) that the tree's text and titles keep."""
    want = Counter(_WORD.findall(plain.lower()))
    titles = " ".join(n.title for n in tree.at_level("section"))
    have = Counter(_WORD.findall(f"{tree.text} {titles} {tree.title}".lower()))
    total = sum(want.values())
    return sum(min(c, have[w]) for w, c in want.items()) / total if total else 1.0


def measure(tree: DocTree, toc: list[str], plain: str, pages: int) -> Quality:
    found = headings(tree)
    hits = match_headings(found, toc)
    text_paras = [p for p in tree.at_level("paragraph") if p.kind == "text"]
    kinds = Counter(p.kind for p in tree.at_level("paragraph"))
    return Quality(
        doc=tree.doc_id, pages=pages, toc_entries=len(toc), headings=len(found),
        heading_precision=round(hits / len(found), 3) if found else None,
        heading_recall=round(hits / len(toc), 3) if toc else None,
        sections=sum(1 for _ in tree.at_level("section")), paragraphs=sum(kinds.values()),
        sentences=sum(1 for _ in tree.at_level("sentence")),
        sentences_per_paragraph=round(sum(len(p.children) for p in text_paras) / max(len(text_paras), 1), 2),
        text_recovered=round(text_recovered(tree, plain), 3), tables=kinds["table"], figures=kinds["figure"],
    )


def measure_pdf(path: str | Path, doc_id: str | None = None) -> Quality:
    """Parse one PDF and measure it against its own outline and plain text (raises ParseError)."""
    import pymupdf

    from pipeline.parse.pdf import parse_pdf

    path = Path(path)
    tree = parse_pdf(path, doc_id or path.stem)
    with pymupdf.open(path) as doc:
        toc = [title for _, title, _ in doc.get_toc() if title.strip()]
        plain = "\n".join(page.get_text() for page in doc)
        return measure(tree, toc, plain, doc.page_count)


def quality_table(pdfs: list[Path]) -> tuple[list[dict], list[dict]]:
    """Rows for ``quality.csv`` and ``errors.csv``; a bad PDF is reported, the others go on."""
    from tqdm import tqdm

    rows, errors = [], []
    for path in tqdm(sorted(pdfs), desc="parse quality", unit="pdf"):
        try:
            rows.append(asdict(measure_pdf(path)))
        except ParseError as exc:
            errors.append({"doc": path.stem, "source": path.name, "reason": exc.reason})
    return rows, errors
