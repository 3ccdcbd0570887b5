"""WattBot 2025 inputs: document metadata, questions, and where each document's text lives.

``metadata.csv`` is cp1252 (latin-1 family), not UTF-8; questions are UTF-8 with a BOM.
Every loader fails with one line naming the file, row and field.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.names import problem

METADATA_COLUMNS = ("id", "type", "title", "year", "citation", "url")
QUESTION_COLUMNS = ("id", "question", "answer_unit")


class InputError(ValueError):
    """A malformed input file; the message names the file, row and field."""


def read_checked_csv(path: Path, encodings: tuple[str, ...]) -> pd.DataFrame:
    if not path.exists():
        raise InputError(f"{path}: file not found")
    head = path.read_bytes()[:4096]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        raise InputError(f"{path}: looks UTF-16 encoded (NUL bytes); save it as UTF-8 or cp1252 CSV")
    last: Exception | None = None
    for enc in encodings:
        try:
            return pd.read_csv(path, encoding=enc, dtype=str, keep_default_na=False)
        except UnicodeDecodeError as exc:
            last = exc
        except pd.errors.ParserError as exc:
            raise InputError(f"{path}: not a readable CSV ({str(exc).splitlines()[0]})") from exc
    raise InputError(f"{path}: cannot decode with {', '.join(encodings)} ({last})")


def require_columns(df: pd.DataFrame, path: Path, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (has {', '.join(df.columns)})")


def require_unique_ids(df: pd.DataFrame, path: Path) -> None:
    empty = df.index[df["id"].str.strip() == ""].tolist()
    if empty:
        raise InputError(f"{path}: row {empty[0] + 2}, field id: empty id")
    dup = df["id"][df["id"].duplicated()].tolist()
    if dup:
        row = int(df.index[df["id"] == dup[0]][1]) + 2
        raise InputError(f"{path}: row {row}, field id: duplicate id '{dup[0]}'")


def load_metadata(path: str | Path) -> pd.DataFrame:
    """Documents table (id, type, title, year, citation, url); UTF-8 first, then cp1252."""
    path = Path(path)
    df = read_checked_csv(path, ("utf-8-sig", "cp1252", "latin-1"))
    require_columns(df, path, METADATA_COLUMNS)
    require_unique_ids(df, path)
    require_doc_ids(df, path)
    return df


def require_doc_ids(df: pd.DataFrame, path: Path) -> None:
    """Every document id a name (pipeline/names.py): ids become file names (``fetch``'s ``<id>.pdf``, trees)."""
    for i, doc in df["id"].items():
        why = problem(doc)
        if why:
            raise InputError(f"{path}: row {int(i) + 2}, field id: document id {doc!r} {why}")


def load_questions(path: str | Path, known_docs: set[str] | None = None) -> pd.DataFrame:
    """Questions (and labels, when present). Unknown document ids in labels are errors."""
    path = Path(path)
    df = read_checked_csv(path, ("utf-8-sig", "cp1252"))
    require_columns(df, path, QUESTION_COLUMNS)
    require_unique_ids(df, path)
    empty_q = df.index[df["question"].str.strip() == ""].tolist()
    if empty_q:
        raise InputError(f"{path}: row {empty_q[0] + 2}, field question: empty question")
    if known_docs is not None and "ref_id" in df.columns:
        for i, ref in df["ref_id"].items():
            for doc in parse_ref_ids(ref):
                if doc not in known_docs:
                    raise InputError(f"{path}: row {i + 2}, field ref_id: unknown document id '{doc}'")
    return df


LABEL_COLUMNS = ("id", "answer_value", "answer_unit", "ref_id")  # what the WattBot scorer reads of a labels file


def load_labels(path: str | Path, questions_path: str | Path) -> pd.DataFrame:
    """A split's labels (``wattbot.solutions``): the scorer's columns, unique ids, each id a question of the
    split. Any subset of the split's questions may be labelled (Kaggle's Public rows alone, or all of them)."""
    path = Path(path)
    df = read_checked_csv(path, ("utf-8-sig", "cp1252"))
    require_columns(df, path, LABEL_COLUMNS)
    require_unique_ids(df, path)
    asked = set(read_checked_csv(Path(questions_path), ("utf-8-sig", "cp1252")).get("id", pd.Series(dtype=str)))
    for i, qid in df["id"].items():
        if qid not in asked:
            raise InputError(f"{path}: row {int(i) + 2}, field id: no question '{qid}' in {questions_path}")
    return df


def parse_ref_ids(ref: str) -> list[str]:
    """``"['a','b']"`` or ``"a"`` -> ``["a", "b"]``; ``is_blank`` and empty -> ``[]``."""
    ref = (ref or "").strip()
    if not ref or ref.lower() == "is_blank":
        return []
    if ref.startswith("["):
        items = ref.strip("[]").split(",")
        return [i.strip().strip("'\"").strip() for i in items if i.strip().strip("'\"").strip()]
    return [ref]


def format_ref_ids(docs: list[str]) -> str:
    """The Kaggle convention: a Python-list string, or ``is_blank`` when there are none."""
    return "[" + ",".join(f"'{d}'" for d in docs) + "]" if docs else "is_blank"


PDF_FALLBACKS = ("extracted-text",)  # values of wattbot.pdf_fallback (null: none, a missing PDF is an error)
SHOWN_IDS = 5  # document ids named in one error line


def missing_pdfs(doc_ids: list[str], pdf_dir: Path) -> list[str]:
    """The documents without ``<doc_id>.pdf`` in ``pdf_dir``, in the order given."""
    return [d for d in doc_ids if not (Path(pdf_dir) / f"{d}.pdf").is_file()]


def check_pdf_dir(doc_ids: list[str], pdf_dir: Path, fallback: str | None) -> list[str]:
    """The documents that fall back to the extracted text (none when every PDF is there). Without a stated
    fallback (``wattbot.pdf_fallback``) a half-filled folder is an error naming the missing PDFs: a run on a
    mix of PDFs and extracted text must be asked for, never happen silently."""
    missing = missing_pdfs(doc_ids, pdf_dir)
    if missing and fallback is None:
        shown = ", ".join(missing[:SHOWN_IDS]) + (", ..." if len(missing) > SHOWN_IDS else "")
        raise InputError(
            f"config key 'wattbot.pdf_dir': {len(missing)} of {len(doc_ids)} documents have no PDF in {pdf_dir} "
            f"({shown}); add them, or set wattbot.pdf_fallback: extracted-text to parse those from the extracted text"
        )
    if fallback is not None and fallback not in PDF_FALLBACKS:
        raise InputError(f"config key 'wattbot.pdf_fallback': '{fallback}' is not one of {', '.join(PDF_FALLBACKS)}")
    return missing


def document_source(doc_id: str, corpus_dir: Path, pdf_dir: Path | None, fallback: str | None = None) -> Path:
    """The PDF when a PDF folder is configured, else the pre-extracted JSON. A PDF missing from a configured
    folder is an error unless ``fallback`` (``wattbot.pdf_fallback``) states the extracted text as its stand-in."""
    if pdf_dir is not None:
        pdf = Path(pdf_dir) / f"{doc_id}.pdf"
        if pdf.is_file():
            return pdf
        check_pdf_dir([doc_id], pdf_dir, fallback)
    return Path(corpus_dir) / f"{doc_id}.json"
