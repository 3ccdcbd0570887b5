"""What one PDF may be, apart from the parser that checks it: a job's arguments build the caps without
importing PyMuPDF and its layout model (about half a second a job that never reads a PDF)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.specs import PDF_CAPS


@dataclass(frozen=True)
class PdfLimits:
    """What one PDF may be (``parsing.max_pdf_mb``, ``max_pdf_pages``): a stranger's file of gigabytes or
    a million pages is a parse error naming the cap, not hours of CPU and memory."""

    max_mb: float = PDF_CAPS["max_pdf_mb"]
    max_pages: int = PDF_CAPS["max_pdf_pages"]
