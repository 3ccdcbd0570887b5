"""Documents into DocTrees (see ``pipeline.tree``), offline.

- :func:`load_payload` / :func:`load_corpus_dir`: the WattBot pre-extracted corpus JSON, with real
  sections recovered from its numbered headings;
- :func:`parse_pdf`: PDF files via PyMuPDF (nested sections from headings, tables, figures, boxes);
  unparseable files raise :class:`pipeline.parse.errors.ParseError`;
- ``headings`` (numbering and nesting), ``quality`` (measured against PDF outlines), ``quality_pdfs``
  (the parse-quality PDFs), ``vision`` (optional figure captioning), ``commands`` (CLI verbs);
- :func:`parse_text`: plain text or markdown;
- :func:`split_sentences` / :func:`sentence_texts`: the shared sentence splitter.
"""

from pipeline.parse.payload import load_corpus_dir, load_payload
from pipeline.parse.sentences import sentence_texts, split_sentences
from pipeline.parse.text import parse_text


def __getattr__(name: str):
    # PyMuPDF takes ~1 s to import; only PDF users should pay for it.
    if name == "parse_pdf":
        from pipeline.parse.pdf import parse_pdf

        return parse_pdf
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["load_corpus_dir", "load_payload", "parse_pdf", "parse_text", "sentence_texts", "split_sentences"]
