"""Atomic writes and JSONL I/O: what every stage writes its outputs with.

Outputs are written to a temp file in the same folder, then renamed, so a reader (or a rerun
after a kill) never sees half a file; JSON is written with sorted keys so reruns are
byte-identical. Provenance manifests (:mod:`pipeline.provenance`) are written through it.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


@functools.cache
def _umask() -> int:
    """The process's umask, read once (reading it means setting it: once, before any writer thread runs)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode any tool gives a new file (0o666 less the umask): mkstemp's temp file is 0600 whatever the
    umask, and a rename keeps that, which left reports unreadable to colleagues on a shared machine."""
    return 0o666 & ~_umask()


def create_shared_file(path: str | Path) -> Path:
    """An empty file at ``path`` with :func:`file_mode`, unless one is there. For SQLite: it creates a
    database 0644 less the umask (0640 under umask 007: a group's cache no colleague could write) and gives
    its -wal, -shm and -journal files the database's mode, so a database made here first has them all right
    (an empty file is an empty database)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, file_mode())
    except FileExistsError:
        return path
    os.fchmod(fd, file_mode())
    os.close(fd)
    return path


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a temp file in the same folder, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1) + "\n")


def atomic_write_jsonl(path: str | Path, rows: Iterable[dict]) -> None:
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))


def read_jsonl(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def read_csv_columns(path: str | Path) -> dict[str, list[str]]:
    """A CSV's columns, each a list of its cells as text: what ``pandas.read_csv(path, dtype=str,
    keep_default_na=False)`` gives for a well-formed file (a BOM dropped, blank lines skipped, a short
    row padded with ""; a long one an error), without importing pandas (~0.3 CPU-s a job: the retrieve verb reads its
    questions with this)."""
    import csv

    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = [row for row in csv.reader(fh) if row]
    header, body = (rows[0], rows[1:]) if rows else ([], [])
    for n, row in enumerate(body, 2):
        if len(row) > len(header):
            raise ValueError(f"{path}: row {n} has {len(row)} fields, the header {len(header)}")
    return {name: [row[i] if i < len(row) else "" for row in body] for i, name in enumerate(header)}
