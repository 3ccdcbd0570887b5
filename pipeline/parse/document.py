"""Pick the parser for a document source by its file type."""

from __future__ import annotations

from pathlib import Path

from pipeline.tree import DocTree


def parse_document(
    source: str | Path, doc_id: str, title: str | None = None, describe=None, headings: str = "rules"
) -> DocTree:
    """``.json`` = WattBot pre-extracted payload, ``.pdf`` = PyMuPDF, ``.txt``/``.md`` = plain text.

    ``describe`` (PNG bytes -> text) captions PDF figures with a vision model; other formats have no images.
    ``headings`` picks the PDF heading method (``pipeline.specs.HEADINGS``; docs/parsing.md compares them).
    """
    source = Path(source)
    suffix = source.suffix.lower()
    if suffix == ".json":
        from pipeline.parse.payload import load_payload

        return load_payload(source)
    if suffix == ".pdf":
        from pipeline.parse.pdf import parse_pdf

        return parse_pdf(source, doc_id, title, describe=describe, headings=headings)
    if suffix in (".txt", ".md"):
        from pipeline.parse.text import parse_text

        return parse_text(source.read_text(encoding="utf-8"), doc_id, title or doc_id)
    raise ValueError(f"{source}: no parser for '{suffix}' files (have .json, .pdf, .txt, .md)")
