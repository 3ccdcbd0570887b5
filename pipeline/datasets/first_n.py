"""A smoke run's questions (``limit: N``): the first N of a split, in file order, and the labels of those N;
and the other cut question files: a split's labelled ids alone, the questions of a power-sized sample.

Every variant of the run reads the one cut file, so each answers the same N questions; the labels are cut
to the same ids, so a scorer does not count the questions not asked as missed (WattBot's scores a missing
row 0, the suite's an empty result). A question file is a CSV with an ``id`` column (WattBot's ingested
splits, a corpus's questions, a suite export's queries); labels are a CSV with ``id`` (WattBot's and a
corpus's solutions) or a JSONL with ``query_id`` (a suite export's gold).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pipeline.io import atomic_write_jsonl, atomic_write_text, read_jsonl
from pipeline.provenance import write_manifest


def first_questions(questions: str | Path, n: int, out: str | Path) -> list[str]:
    """The first ``n`` questions of ``questions`` (every one when it has fewer) to ``out``; their ids."""
    header, rows = _read_csv(questions)
    kept = rows[:n]
    atomic_write_text(out, _csv_text(header, kept))
    write_manifest(out, {"limit": n}, [questions])
    return [r[header.index("id")] for r in kept]


def first_gold(gold: str | Path, questions: str | Path, out: str | Path) -> int:
    """The rows of the labels ``gold`` whose question is in the cut file ``questions``, in file order, to
    ``out``; how many."""
    header, asked = _read_csv(questions)
    wanted = {r[header.index("id")] for r in asked}
    if str(gold).endswith(".jsonl"):
        rows = [g for g in read_jsonl(gold) if str(g["query_id"]) in wanted]
        atomic_write_jsonl(out, rows)
        count = len(rows)
    else:
        header, table = _read_csv(gold)
        kept = [r for r in table if r[header.index("id")] in wanted]
        atomic_write_text(out, _csv_text(header, kept))
        count = len(kept)
    write_manifest(out, {}, [gold, questions])
    return count


def labelled_ids(gold: str | Path, out: str | Path) -> list[str]:
    """The ids of the labels ``gold`` to ``out``, a CSV with the one column ``id``: what a job that must not
    see the labels (an answer job's power-sized sample, pipeline/report/stats/power.py) may read of them."""
    header, rows = _read_csv(gold)
    ids = [r[header.index("id")] for r in rows]
    atomic_write_text(out, _csv_text(["id"], [[i] for i in ids]))
    write_manifest(out, {}, [gold])
    return ids


def questions_with_ids(
    questions: str | Path, ids: list[str], out: str | Path, shaped: dict, inputs: list[str | Path]
) -> int:
    """The rows of ``questions`` whose id is in ``ids``, in file order, to ``out``; how many (an id that
    is not a question of the file is an error: the sample was drawn from another split)."""
    header, rows = _read_csv(questions)
    wanted = set(ids)
    kept = [r for r in rows if r[header.index("id")] in wanted]
    if len(kept) != len(wanted):
        stray = sorted(wanted - {r[header.index("id")] for r in kept})
        raise ValueError(f"{questions}: no question with id(s) {', '.join(stray[:5])}")
    atomic_write_text(out, _csv_text(header, kept))
    write_manifest(out, shaped, [questions, *inputs])
    return len(kept)


def _read_csv(path: str | Path) -> tuple[list[str], list[list[str]]]:
    with open(path, encoding="utf-8-sig", newline="") as fh:  # WattBot's solutions start with a BOM
        reader = csv.reader(fh)
        header = next(reader, [])
        rows = list(reader)
    if "id" not in header:
        raise ValueError(f"{path}: no 'id' column (has {header})")
    return header, rows


def _csv_text(header: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()
