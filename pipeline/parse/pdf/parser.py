"""`parse_pdf`: one PDF into a DocTree, the concerns of this package in order: the pages' lines, tables and
figures, furniture dropped, the body style and the title, reading order, then sections and paragraphs."""

from __future__ import annotations

from pathlib import Path

from pipeline.parse.errors import ParseError
from pipeline.parse.pdf.figures import Describer
from pipeline.parse.pdf.file import open_pdf
from pipeline.parse.pdf.furniture import drop_furniture
from pipeline.parse.pdf.layout_model import Boxes
from pipeline.parse.pdf.order import reading_order
from pipeline.parse.pdf.pages import read_pages
from pipeline.parse.pdf.sections import is_references, section_specs
from pipeline.parse.pdf.style import body_style
from pipeline.parse.pdf.title import find_title_lines, shares_words
from pipeline.parse.text import clean_line, vocabulary
from pipeline.specs import HEADINGS
from pipeline.tree import DocTree, build_tree


def parse_pdf(
    path: str | Path,
    doc_id: str,
    title: str | None = None,
    describe: Describer | None = None,
    headings: str = "rules",
    layout: dict[int, Boxes] | None = None,
) -> DocTree:
    """Parse a PDF into sections (from headings), paragraphs, tables, figures and sentences.

    ``describe``, when given, turns each figure region (rendered to PNG) into a text
    description (a vision model through the LLM gateway: ``pipeline.parse.vision``).
    ``headings`` picks who finds headings (``HEADINGS``: the rules, PyMuPDF's layout model, or both);
    ``layout`` passes that model's boxes when they were computed already (``layout_boxes``).
    Raises :class:`ParseError` for files that cannot be parsed.
    """
    if headings not in HEADINGS:
        raise ValueError(f"headings={headings!r}: use one of {HEADINGS}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(path)
    doc = open_pdf(path)
    try:
        read = read_pages(doc, headings, layout, describe)
        title = title or clean_line(doc.metadata.get("title") or "") or None
    except ParseError:
        raise
    except Exception as exc:
        raise ParseError(path, f"corrupt: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    finally:
        doc.close()
    pages, tables, figures, sizes = read.lines, read.tables, read.figures, read.sizes
    if not any(pages) and not any(tables):
        reason = "no text layer (image-only; it needs OCR)" if read.has_images else "no text on any page"
        raise ParseError(path, reason)

    pages = drop_furniture(pages, [h for _, h in sizes])
    all_lines = [ln for lines in pages for ln in lines]
    style = body_style(all_lines)
    vocab = vocabulary("\n".join(ln.text for ln in all_lines))
    title_lines = find_title_lines(pages[0] if pages else [], style.size)
    if title and title_lines and not shares_words(title, " ".join(ln.text for ln in title_lines)):
        title_lines = []  # page 1 opens with a chapter heading, not the document's (metadata) title
    title = title or " ".join(ln.text for ln in title_lines) or doc_id
    ordered = [
        reading_order(lines + tabs + figs, width)
        for lines, tabs, figs, (width, _) in zip(pages, tables, figures, sizes)
    ]
    items = [it for its in ordered for it in its]
    sections = section_specs(items, title, {id(ln) for ln in title_lines}, style, vocab, headings)
    metadata = {"parser": "pdf", "source": path.name, "pages": len(pages)}
    if describe:
        metadata["figure_descriptions"] = sum(1 for figs in figures for f in figs if f.description)
    tree = build_tree(doc_id, title, sections, metadata=metadata)
    first = tree.root.children[:1]
    tree.metadata["front_matter"] = first[0] if first and tree.nodes[first[0]].title == title else None
    tree.metadata["references"] = [n.id for n in tree.at_level("section") if is_references(n.title)]
    return tree
