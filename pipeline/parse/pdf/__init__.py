"""PDF files as DocTrees, with PyMuPDF: real sections, paragraphs, tables and figures.

Why not the pre-extracted JSON's text: it was extracted page by page with pypdf, which loses the layout.
This works from PyMuPDF's positioned lines instead (:mod:`~pipeline.parse.pdf.lines`): tables become
``kind="table"`` paragraphs and leave the running text (:mod:`~pipeline.parse.pdf.tables`), running
headers/footers and page numbers are dropped (:mod:`~pipeline.parse.pdf.furniture`), lines are put in
reading order (two columns too; :mod:`~pipeline.parse.pdf.order`) and grouped into paragraphs
(:mod:`~pipeline.parse.pdf.paragraphs`), heading lines (:mod:`~pipeline.parse.pdf.cues`) open sections
that nest by their numbers or font size (:mod:`~pipeline.parse.pdf.sections`), and figures become
``kind="figure"`` paragraphs holding their caption (:mod:`~pipeline.parse.pdf.figures`,
:mod:`~pipeline.parse.pdf.captions`). :func:`parse_pdf` (:mod:`~pipeline.parse.pdf.parser`) runs them in
that order. The rules and their thresholds: docs/parsing.md. Unparseable files raise
:class:`~pipeline.parse.errors.ParseError` with a one-line reason.
"""

from pipeline.parse.pdf.figures import Describer
from pipeline.parse.pdf.file import open_pdf
from pipeline.parse.pdf.layout_model import Boxes, layout_boxes
from pipeline.parse.pdf.parser import parse_pdf

__all__ = ["Boxes", "Describer", "layout_boxes", "open_pdf", "parse_pdf"]
