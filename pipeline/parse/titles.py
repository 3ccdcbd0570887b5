"""A document's own title, for a corpus whose metadata does not name it: a PDF's metadata title, a
Markdown file's first heading, else the file name. Here, in the parse stage, because only the parse stage
opens PDFs (the import-linter contract "only the parse stage reads PDFs")."""

from __future__ import annotations

import re
from pathlib import Path


def document_title(path: Path) -> str:
    """Never raises: a PDF that cannot be opened is the tree verb's to report (the parse errors CSV)."""
    path = Path(path)
    title = ""
    if path.suffix.lower() == ".pdf":
        import pymupdf

        try:
            with pymupdf.open(path) as doc:
                title = (doc.metadata or {}).get("title") or ""
        except Exception:  # encrypted, broken, empty: its tree reports why
            title = ""
    elif path.suffix.lower() == ".md":
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        title = next((ln.lstrip("#") for ln in lines if re.match(r"#{1,6}\s", ln)), "")
    return " ".join(title.split()) or path.stem
