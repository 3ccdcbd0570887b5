"""A suite dataset into what the pipeline reads: DocTrees (via ``parse_text``), ``docs.csv``,
``queries.csv`` and ``gold.jsonl`` with the gold spans projected onto tree-text offsets (the suite's
export stage, on the parse floor: the loaders in pipeline/datasets/ know no parser).

``parse_text`` rewrites the text (whitespace, ligatures, line-end hyphens, heading lines become
section titles), so spans are carried over through a character alignment, never by offset copying.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.io import atomic_write_jsonl, atomic_write_text, read_jsonl
from pipeline.parse.text import _LIGATURES as _TEXT_LIGATURES
from pipeline.parse.text import parse_text
from pipeline.provenance import write_manifest
from pipeline.tree import DocTree

if TYPE_CHECKING:  # the loaders import Hugging Face datasets (~0.4 CPU-s): only the export needs them
    from pipeline.datasets.suite import SuiteTables

# --- offsets: original text -> tree text -----------------------------------------------------------

# parse_text's own ligature table, so the two can never disagree.
_LIGATURES = {chr(k): v or "" for k, v in _TEXT_LIGATURES.items()}
# What parse_text may drop between two kept characters: whitespace (clean_line's set) and a
# line-end hyphen it glued ("effi-\nciency" -> "efficiency").
_SPACE = "\\s\u00a0\u2000-\u200b\u202f\u205f\u3000"
_INK = re.compile(f"[^{_SPACE}]")
_LINE_END_HYPHEN = re.compile(r"-(?=[ \t\u00a0\u200b]*(?:\r\n|\r|\n))")
_SKIP = f"(?:[{_SPACE}]|-[ \\t\u00a0\u200b]*(?:\\r\\n|\\r|\\n))*"
_NEAR = 300  # a fast match this far past the cursor may have jumped over the true place: check


class OffsetMap:
    """Character alignment of an original text with its DocTree text.

    Each tree sentence is located in the original, searching forward from the previous one (so the
    alignment is monotone and text parse_text dropped, such as heading lines, is skipped), on the
    "ink" of both texts (non-whitespace characters, ligatures expanded): an exact ``str.find`` with
    line-end hyphens kept and one with them removed; a whitespace/hyphen-tolerant regex only when
    neither finds the sentence close by.
    """

    def __init__(self, original: str, tree: DocTree):
        norm, origin = _expand_ligatures(original)
        ink = [m.start() for m in _INK.finditer(norm)]
        glued = {m.start() for m in _LINE_END_HYPHEN.finditer(norm)}
        views = []  # (ink string, original offset of each of its chars): hyphens kept / glued ones dropped
        for drop in (set(), glued):
            pos = [i for i in ink if i not in drop]
            views.append(("".join(norm[i] for i in pos), [origin[i] for i in pos]))
        self.tree_pos: list[int] = []
        self.orig_pos: list[int] = []
        self.unaligned_chars = 0
        done = 0  # original offset just past the last aligned character
        for node in sorted(tree.at_level("sentence"), key=lambda n: n.start):
            chars = [(m.start() + node.start, m.group()) for m in _INK.finditer(node.text)]
            if not chars:
                continue
            target = "".join(c for _, c in chars)
            found = []
            for ink_text, offsets in views:
                at = ink_text.find(target, bisect_left(offsets, done))
                if at >= 0:
                    found.append(offsets[at : at + len(target)])
            fast = min(found, key=lambda o: o[0]) if found else None
            aligned = fast
            if fast is None or fast[0] - done > _NEAR:
                aligned = _regex_align(norm, origin, target, bisect_left(origin, done)) or fast
            if aligned is None:
                self.unaligned_chars += len(chars)
                continue
            self.tree_pos.extend(i for i, _ in chars)
            self.orig_pos.extend(aligned)
            done = aligned[-1] + 1

    def project(self, start: int, end: int) -> tuple[int, int] | None:
        """Tree-text span of the original span ``[start, end)``; None when none of it survived parsing."""
        i = bisect_left(self.orig_pos, start)
        j = bisect_left(self.orig_pos, end) - 1
        if i > j:
            return None
        return self.tree_pos[i], self.tree_pos[j] + 1


def _regex_align(norm: str, origin, target: str, cursor: int) -> list[int] | None:
    """Original offsets of ``target``'s characters, matched in ``norm`` from ``cursor`` while skipping
    whitespace and glued line-end hyphens anywhere; None if it is not there."""
    m = re.compile(_SKIP.join(re.escape(c) for c in target)).search(norm, cursor)
    if m is None:
        return None
    out, j = [], m.start()
    for c in target:
        while norm[j] != c:  # the pattern matched, so what is skipped here is whitespace or a hyphen
            j += 1
        out.append(origin[j])
        j += 1
    return out


def _expand_ligatures(text: str) -> tuple[str, list[int]]:
    """``text`` with parse_text's ligature/soft-hyphen rewrite, and each char's original offset."""
    if not any(c in text for c in _LIGATURES):
        return text, range(len(text) + 1)  # type: ignore[return-value]
    out, origin = [], []
    for i, c in enumerate(text):
        rep = _LIGATURES.get(c, c)
        out.append(rep)
        origin.extend([i] * len(rep))
    return "".join(out), origin


def squeeze(text: str) -> str:
    """Text without whitespace, ligatures expanded: what 'equal modulo whitespace' compares."""
    return re.sub(r"[\s\u00a0\u2000-\u200b\u202f\u205f\u3000]+", "", _expand_ligatures(text)[0])


# --- export ------------------------------------------------------------------------------------------


def export_suite_tables(tables: SuiteTables, out_dir: str | Path) -> dict:
    """Write ``trees/<doc_id>.json``, ``docs.csv``, ``queries.csv`` and ``gold.jsonl`` under ``out_dir``
    (tree files of documents not in ``tables`` are removed from ``trees/``).

    ``gold.jsonl`` rows: ``query_id, doc_id, start, end, grade`` in tree-text offsets, plus
    ``orig_start``/``orig_end``. A gold span with no surviving character is dropped and counted.
    Returns counts (docs, sentences, queries, gold, dropped gold, unaligned characters).
    """
    out = Path(out_dir)
    (out / "trees").mkdir(parents=True, exist_ok=True)
    by_doc: dict[str, list[dict]] = {}
    for g in tables.gold:
        by_doc.setdefault(g["doc_id"], []).append(g)
    gold_out: list[dict] = []
    counts: dict[str, Any] = {
        "name": tables.name,
        "docs": len(tables.docs),
        "sentences": 0,
        "queries": len(tables.queries),
        "gold": 0,
        "gold_dropped": 0,
        "unaligned_chars": 0,
    }
    for doc in tables.docs:
        tree = parse_text(doc["text"], doc["doc_id"], doc["title"] or doc["doc_id"])
        tree.metadata.update({"benchmark": tables.name, "source_id": doc["source_id"]})
        tree.save(out / "trees" / f"{doc['doc_id']}.json")
        counts["sentences"] += sum(1 for _ in tree.at_level("sentence"))
        golds = by_doc.get(doc["doc_id"], [])
        if not golds:
            continue
        spans = OffsetMap(doc["text"], tree)
        counts["unaligned_chars"] += spans.unaligned_chars
        for g in golds:
            projected = spans.project(g["start"], g["end"])
            if projected is None:
                counts["gold_dropped"] += 1
                continue
            gold_out.append(
                {
                    "query_id": g["query_id"],
                    "doc_id": g["doc_id"],
                    "start": projected[0],
                    "end": projected[1],
                    "grade": g["grade"],
                    "orig_start": g["start"],
                    "orig_end": g["end"],
                }
            )
    keep = {f"{d}.json" for d in tables.docs["doc_id"]}
    for stale in (out / "trees").glob("*.json"):  # an earlier, larger export must not leak into the index
        if stale.name not in keep:
            stale.unlink()
    gold_out.sort(key=lambda g: (g["query_id"], g["doc_id"], g["start"], g["end"]))
    counts["gold"] = len(gold_out)
    atomic_write_jsonl(out / "gold.jsonl", gold_out)
    docs = tables.docs.remove_columns("text").to_pandas()
    docs["n_chars"] = [len(t) for t in tables.docs["text"]]
    atomic_write_text(out / "docs.csv", docs.to_csv(index=False, lineterminator="\n"))
    write_queries(tables, out / "queries.csv")
    return counts


def write_queries(tables: SuiteTables, path: str | Path) -> None:
    """``queries.csv``: ``id``, ``question``, then the loader's other columns, in the loader's query order (the
    order a split's retrieval batches are cut in)."""
    queries = tables.queries.to_pandas()
    queries = queries[["id", "question"] + [c for c in queries.columns if c not in ("id", "question")]]
    atomic_write_text(path, queries.to_csv(index=False, lineterminator="\n"))


def read_gold(path: str | Path) -> list[dict]:
    """The projected gold written by :func:`export_suite_tables`."""
    return read_jsonl(path)


def export_dataset(name: str, root: str | Path, subset: dict, out_dir: str | Path) -> dict:
    """The ``suite-export`` verb: load suite dataset ``name`` from ``root``, export it, write its manifest."""
    from pipeline.datasets.suite import dataset_root, load_suite_tables

    tables = load_suite_tables(name, dataset_root(root, name), subset or None)
    counts = export_suite_tables(tables, out_dir)
    write_manifest(Path(out_dir) / "queries.csv", {"dataset": name, "subset": tables.params}, inputs=[], counts=counts)
    return counts
