"""Pick the parser for a document source by its file type."""

from __future__ import annotations

from pathlib import Path

from pipeline.tree import DocTree

NUL = b"\x00"


def parse_document(
    source: str | Path, doc_id: str, title: str | None = None, describe=None, headings: str = "rules", limits=None
) -> DocTree:
    """``.json`` = WattBot pre-extracted payload, ``.pdf`` = PyMuPDF, ``.txt``/``.md`` = plain text.

    ``describe`` (PNG bytes -> text) captions PDF figures with a vision model; other formats have no images.
    ``headings`` picks the PDF heading method (``pipeline.specs.HEADINGS``; docs/parsing.md compares them);
    ``limits`` (a ``PdfLimits``) caps a PDF's size and pages (default: the schema's).
    """
    source = Path(source)
    suffix = source.suffix.lower()
    if suffix == ".json":
        from pipeline.parse.payload import load_payload

        return load_payload(source)
    if suffix == ".pdf":
        from pipeline.parse.limits import PdfLimits
        from pipeline.parse.pdf import parse_pdf
        from pipeline.parse.pdf.file import check_limits

        check_limits(source, limits or PdfLimits())
        return parse_pdf(source, doc_id, title, describe=describe, headings=headings)
    if suffix in (".txt", ".md"):
        from pipeline.parse.text import parse_text

        return parse_text(read_text_document(source), doc_id, title or doc_id)
    raise ValueError(f"{source}: no parser for '{suffix}' files (have .json, .pdf, .txt, .md)")


def read_text_document(source: Path) -> str:
    """A ``.txt``/``.md`` document's text; ParseError (an empty tree and a row of the parse errors, as for a
    bad PDF) when it is empty or not UTF-8, so one such file never stops the run nor passes silently."""
    from pipeline.parse.errors import ParseError

    raw = source.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(source, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    if not text.strip():
        raise ParseError(source, "empty file (0 bytes)" if not raw else "no text (only white space)")
    if "\x00" in text:  # binary content named .txt/.md: never indexed nor sent in a prompt
        raise ParseError(source, f"not text (a NUL byte at offset {raw.index(NUL)})")
    return text
