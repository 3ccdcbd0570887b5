"""A user's own corpus: a folder of documents, a questions CSV and optional WattBot-format labels.

One ``corpora:`` entry of the config names these files (:class:`CorpusSource`). :func:`check_corpus`
runs every input check without opening a document, so the workflow calls it when the Snakefile is
parsed and a bad file stops the run before any index is built, with one line naming the file (and the
row and column where there is one). :func:`ingest_corpus` writes the clean UTF-8 copies the DAG reads,
shaped like WattBot's (metadata.csv, questions.csv, solutions.csv), so every later stage is shared.

Doc ids are file stems: ``<doc_id>.pdf``, ``.txt`` or ``.md``. Other files in the folder are never
dropped silently: each is named in a warning and counted (``ignored_files``), because a folder of
papers often holds a README, a .bib or supplements that are no documents of the corpus, and refusing
to run on them would only make the user move files around.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.datasets.wattbot import (
    METADATA_COLUMNS,
    InputError,
    parse_ref_ids,
    read_checked_csv,
    require_columns,
    require_unique_ids,
)
from pipeline.names import problem

log = logging.getLogger("wattbench")

DOC_SUFFIXES = (".pdf", ".txt", ".md")
QUESTION_COLUMNS = ("id", "question")  # answer_unit is optional (empty when absent)
SOLUTION_COLUMNS = ("id", "answer_value", "answer_unit", "ref_id")  # what the WattBot scorer reads
SHOWN = 5  # ids or files named in one line before "..."


@dataclass(frozen=True)
class CorpusSource:
    """One ``corpora:`` entry's input files (paths already resolved)."""

    name: str
    pdf_dir: Path  # <doc_id>.pdf / .txt / .md ; doc id = file stem
    questions: Path  # id, question[, answer_unit]
    solutions: Path | None = None  # WattBot-format labels (id, answer_value, answer_unit, ref_id, ...)
    metadata: Path | None = None  # optional WattBot-format metadata.csv (id, type, title, year, citation, url)


def _few(items: list[str]) -> str:
    return ", ".join(items[:SHOWN]) + (f", ... ({len(items)} in all)" if len(items) > SHOWN else "")


def _folder_entries(pdf_dir: Path) -> list[Path]:
    if not pdf_dir.exists():
        raise InputError(f"{pdf_dir}: document folder not found")
    if not pdf_dir.is_dir():
        raise InputError(f"{pdf_dir}: not a folder (pdf_dir names the folder of <doc_id>.pdf/.txt/.md files)")
    return sorted(pdf_dir.iterdir())


def _is_document(path: Path) -> bool:
    """A .pdf/.txt/.md entry (a link to one too: refused by :func:`_no_link`); hidden files (``._paper.pdf``,
    macOS's resource forks) are no documents."""
    is_doc = path.suffix.lower() in DOC_SUFFIXES and not path.name.startswith(".")
    return is_doc and (path.is_file() or path.is_symlink())


def _no_link(path: Path, pdf_dir: Path) -> None:
    """A document is a file of the folder itself: a symbolic link is refused (``notes.txt ->
    ../../outside/creds`` would be indexed and sent in hosted prompts), whatever it points to."""
    if path.is_symlink():
        raise InputError(
            f"{path}: a symbolic link (to {os.readlink(path)}); put the document itself in {pdf_dir}, not a link"
        )


def other_files(pdf_dir: Path) -> list[Path]:
    """The folder's entries that are no document (other types, sub-folders): named, never used."""
    return [p for p in _folder_entries(Path(pdf_dir)) if not _is_document(p)]


def discover_documents(pdf_dir: Path) -> dict[str, Path]:
    """``doc_id -> file`` of the folder's ``.pdf``/``.txt``/``.md`` files (suffix in any case), sorted.

    InputError (one line) for a missing or empty folder, a file stem the DAG cannot use as a doc id, and
    two files mapping to one doc id; the scorer compares ref ids case-insensitively, so ``A.pdf`` and
    ``a.pdf`` are one id too."""
    pdf_dir = Path(pdf_dir)
    docs = [p for p in _folder_entries(pdf_dir) if _is_document(p)]
    if not docs:
        raise InputError(f"{pdf_dir}: no documents (expected <doc_id>.pdf, .txt or .md files)")
    found: dict[str, Path] = {}
    for path in docs:
        _no_link(path, pdf_dir)
        doc_id = path.stem
        why = problem(doc_id)  # the one rule for names that become paths (pipeline/names.py)
        if why:
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", doc_id).strip("_.-") or "doc"
            raise InputError(f"{path}: doc id '{doc_id}' {why}; rename the file, e.g. to {safe}{path.suffix}")
        same = [(d, p) for d, p in found.items() if d.lower() == doc_id.lower()]
        if same and same[0][0] == doc_id:
            raise InputError(f"{path}: maps to the same doc id as {same[0][1].name} ('{doc_id}'); keep one of them")
        if same:
            raise InputError(
                f"{path}: doc id '{doc_id}' differs from {same[0][1].name}'s only in case (ref ids are compared "
                "ignoring case); rename one of them"
            )
        found[doc_id] = path
    return dict(sorted(found.items()))


def read_corpus_csv(path: Path) -> pd.DataFrame:
    """A corpus CSV: UTF-8 (a BOM is fine), every value a string. One-line InputError otherwise."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise InputError(f"{path}: not a file")
    if path.is_file():
        raw = path.read_bytes()
        if not raw.strip():
            raise InputError(f"{path}: empty file (expected a header row)")
        if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4096]:
            raise InputError(f"{path}: looks UTF-16 encoded (NUL bytes); save it as UTF-8")
        if b"\x00" in raw:  # past the first 4 KiB: not UTF-16, a NUL byte inside a row
            at = raw.index(b"\x00")
            row = raw[:at].count(b"\n") + 1
            raise InputError(f"{path}: row {row}: a NUL byte (offset {at}); a CSV is text, save it as UTF-8")
        try:
            raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            row = raw[: exc.start].count(b"\n") + 1
            raise InputError(
                f"{path}: row {row}: not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
            ) from None
    return read_checked_csv(path, ("utf-8-sig",))


def read_questions(path: Path) -> pd.DataFrame:
    """id, question[, answer_unit]: ids unique and non-empty, no empty question."""
    df = read_corpus_csv(path)
    require_columns(df, path, QUESTION_COLUMNS)
    if df.empty:
        raise InputError(f"{path}: no questions (a header row only)")
    require_unique_ids(df, path)
    empty = df.index[df["question"].str.strip() == ""].tolist()
    if empty:
        raise InputError(f"{path}: row {empty[0] + 2}, field question: empty question")
    return df


def read_solutions(
    path: Path, questions: pd.DataFrame, questions_path: Path, docs: dict[str, Path], pdf_dir: Path
) -> pd.DataFrame:
    """WattBot-format labels: the scorer's columns, each id a question, each cited doc a document."""
    df = read_corpus_csv(path)
    require_columns(df, path, SOLUTION_COLUMNS)
    if df.empty:
        raise InputError(f"{path}: no labels (a header row only); leave solutions out for a corpus without labels")
    require_unique_ids(df, path)
    asked = set(questions["id"])
    known = {d.lower() for d in docs}
    for i, row in df.iterrows():
        if row["id"] not in asked:
            raise InputError(f"{path}: row {int(i) + 2}, field id: no question '{row['id']}' in {questions_path}")
        for doc in parse_ref_ids(row["ref_id"]):
            if doc.lower() not in known:
                raise InputError(
                    f"{path}: row {int(i) + 2}, field ref_id: no document '{doc}' in {pdf_dir} "
                    f"(expected {doc}.pdf, .txt or .md)"
                )
    return df


def read_metadata(path: Path, docs: dict[str, Path], pdf_dir: Path) -> pd.DataFrame:
    """WattBot-format metadata: its six columns, unique ids, each id a document of the folder."""
    df = read_corpus_csv(path)
    require_columns(df, path, METADATA_COLUMNS)
    require_unique_ids(df, path)
    for i, doc in df["id"].items():
        if doc not in docs:
            raise InputError(
                f"{path}: row {int(i) + 2}, field id: no document '{doc}' in {pdf_dir} (expected {doc}.pdf, .txt or .md)"
            )
    return df


@dataclass
class _Loaded:
    docs: dict[str, Path]
    ignored: list[Path]
    questions: pd.DataFrame
    solutions: pd.DataFrame | None
    metadata: pd.DataFrame | None


def _load(src: CorpusSource) -> _Loaded:
    docs = discover_documents(src.pdf_dir)
    ignored = other_files(src.pdf_dir)
    if ignored:
        log.warning(
            "corpus %s: %d file(s) in %s are no document (.pdf, .txt, .md) and are not used: %s",
            src.name,
            len(ignored),
            src.pdf_dir,
            _few([p.name for p in ignored]),
        )
    questions = read_questions(src.questions)
    solutions = (
        read_solutions(src.solutions, questions, src.questions, docs, src.pdf_dir)
        if src.solutions is not None
        else None
    )
    metadata = read_metadata(src.metadata, docs, src.pdf_dir) if src.metadata is not None else None
    return _Loaded(docs, ignored, questions, solutions, metadata)


def _counts(data: _Loaded) -> dict[str, int]:
    return {
        "documents": len(data.docs),
        **{f"documents_{s[1:]}": sum(p.suffix.lower() == s for p in data.docs.values()) for s in DOC_SUFFIXES},
        "ignored_files": len(data.ignored),
        "questions": len(data.questions),
        "solutions": 0 if data.solutions is None else len(data.solutions),
        "metadata_rows": 0 if data.metadata is None else len(data.metadata),
    }


def check_corpus(src: CorpusSource) -> dict[str, int]:
    """Every input check of one corpus, without opening a document; InputError (one line naming the file,
    row and column) on the first problem. Returns the counts (documents by type, ignored files, questions,
    solutions, metadata rows)."""
    return _counts(_load(src))


def file_stem_title(path: Path) -> str:
    """The title of a document without one of its own: its file name, less the suffix."""
    return Path(path).stem


def _metadata_table(data: _Loaded, title_of: Callable[[Path], str]) -> pd.DataFrame:
    """One row per document, in doc id order: the user's row where there is one, else ``title_of(file)``
    and empty type/year/citation/url. The user's extra columns are kept after WattBot's six."""
    given = {} if data.metadata is None else data.metadata.set_index("id", drop=False).to_dict("index")
    extra = [] if data.metadata is None else [c for c in data.metadata.columns if c not in METADATA_COLUMNS]
    rows = []
    for doc_id, path in data.docs.items():
        row = given.get(doc_id) or {"id": doc_id, "title": title_of(path)}
        rows.append({c: row.get(c, "") for c in (*METADATA_COLUMNS, *extra)})
    return pd.DataFrame(rows, columns=[*METADATA_COLUMNS, *extra])


def _questions_table(df: pd.DataFrame) -> pd.DataFrame:
    """id, question, answer_unit first (answer_unit empty when absent), the other columns after them."""
    df = df.copy()
    if "answer_unit" not in df.columns:
        df["answer_unit"] = ""
    first = ["id", "question", "answer_unit"]
    return df[first + [c for c in df.columns if c not in first]]


def ingest_corpus(
    src: CorpusSource, out_dir: Path, title_of: Callable[[Path], str] = file_stem_title
) -> dict[str, int]:
    """Check the corpus, then write ``out_dir``/metadata.csv, questions.csv and (with labels) solutions.csv:
    UTF-8, atomically, each with its manifest. Returns check_corpus's counts. ``title_of`` names a document
    the metadata does not: the verb passes the parse stage's reader (:func:`pipeline.parse.titles.document_title`),
    as only the parse stage opens PDFs (an import-linter contract)."""
    from pipeline.io import atomic_write_text
    from pipeline.provenance import write_manifest

    data = _load(src)
    out_dir = Path(out_dir)
    docs = [str(p) for p in data.docs.values()]
    given = [str(p) for p in (src.metadata,) if p is not None]
    tables = {
        "metadata.csv": (_metadata_table(data, title_of), [*given, *docs]),
        "questions.csv": (_questions_table(data.questions), [str(src.questions)]),
    }
    if data.solutions is not None and src.solutions is not None:
        tables["solutions.csv"] = (data.solutions, [str(src.solutions), str(src.questions)])
    for name, (table, inputs) in tables.items():
        out = out_dir / name
        atomic_write_text(out, table.to_csv(index=False, lineterminator="\n"))
        write_manifest(out, {"corpus": src.name}, inputs)
    return _counts(data)
