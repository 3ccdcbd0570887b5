"""Opening a PDF, or a one-line reason why it cannot be parsed."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pipeline.parse.errors import ParseError
from pipeline.parse.limits import PdfLimits


def check_limits(path: Path, limits: PdfLimits) -> None:
    """ParseError when the PDF at ``path`` is over a cap (its size read before the file, its pages from
    its cross-reference table); one that cannot be opened is :func:`open_pdf`'s to report."""
    size_mb = path.stat().st_size / 1e6
    if size_mb > limits.max_mb:
        raise ParseError(path, f"{size_mb:.0f} MB, over parsing.max_pdf_mb ({limits.max_mb:g}); raise it to parse it")
    try:
        with pymupdf.open(path) as doc:
            pages = doc.page_count
    except Exception:  # corrupt, truncated, not a PDF: open_pdf says which
        return
    if pages > limits.max_pages:
        raise ParseError(path, f"{pages} pages, over parsing.max_pdf_pages ({limits.max_pages}); raise it to parse it")


def open_pdf(path: Path) -> pymupdf.Document:
    """Open a PDF or raise ParseError saying why it cannot be parsed."""
    raw = path.read_bytes()
    if not raw:
        raise ParseError(path, "empty file (0 bytes)")
    if not raw.lstrip()[:5] == b"%PDF-":
        raise ParseError(path, "not a PDF (no %PDF header)")
    if b"%%EOF" not in raw[-2048:]:  # checked first: a cut-off file often fails to open at all
        raise ParseError(path, "truncated (no %%EOF trailer; the download or copy was cut off)")
    try:
        doc = pymupdf.open(stream=raw, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises its own types for corrupt files
        raise ParseError(path, f"corrupt: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    problem = "encrypted (needs a password)" if doc.needs_pass else "no pages" if not doc.page_count else ""
    if problem:
        doc.close()
        raise ParseError(path, problem)
    return doc
