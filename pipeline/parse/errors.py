"""Bad input gets a one-line reason, and the rest of the run goes on.

A PDF that cannot be parsed (empty, encrypted, corrupt, truncated, zero pages, no text layer),
and a text document that is empty or not UTF-8, raises :class:`ParseError`. The ``tree`` verb
turns it into an *empty* tree (the root only, ``metadata["error"]`` = the reason) so every
downstream rule still finds its input and simply has nothing from that document; :func:`collect_errors` gathers the reasons into
``results/<dataset>/parse/errors.csv`` at the end of the run, and a strict config makes
that step fail.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pipeline.tree import DocTree, build_tree

ERROR_FIELDS = ["doc", "source", "reason"]


class ParseError(ValueError):
    """A document that cannot be parsed; ``reason`` is a short phrase ("encrypted")."""

    def __init__(self, source: str | Path, reason: str):
        self.source, self.reason = str(source), reason
        kind = "PDF" if Path(source).suffix.lower() == ".pdf" else "document"
        super().__init__(f"{source}: cannot parse {kind}: {reason}")


def failed_tree(doc_id: str, source: str | Path, reason: str) -> DocTree:
    """The stand-in tree of a document that failed: no text, the reason in its metadata."""
    return build_tree(doc_id, doc_id, [], metadata={"error": reason, "source": Path(source).name})


def errors_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ERROR_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=lambda r: r["doc"]):
        writer.writerow({k: " ".join(str(row[k]).split()) for k in ERROR_FIELDS})  # one line each
    return out.getvalue()


def collect_errors(tree_paths: list[str | Path]) -> list[dict]:
    """The failed documents among ``tree_paths`` (trees written by the ``tree`` verb)."""
    rows = []
    for path in tree_paths:
        tree = DocTree.load(path)
        if tree.metadata.get("error"):
            rows.append(
                {"doc": tree.doc_id, "source": tree.metadata.get("source", ""), "reason": tree.metadata["error"]}
            )
    return rows
