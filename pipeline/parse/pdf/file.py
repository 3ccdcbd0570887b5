"""Opening a PDF, or a one-line reason why it cannot be parsed."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pipeline.parse.errors import ParseError


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
