"""Retrieval benchmarks (LegalBench-RAG, HotpotQA, DragonBall, MS MARCO TREC-DL) in one schema.

Every loader returns a :class:`RetrievalBenchmark` of three ``datasets.Dataset`` tables:

* ``docs``: ``doc_id, title, text, source_id`` (+ extras). ``doc_id`` is filesystem-safe and stable;
  ``source_id`` is the dataset's own name for the document (file path, title, passage id).
* ``queries``: ``id, question`` (+ extras such as ``language``/``domain``).
* ``gold``: ``query_id, doc_id, start, end, grade``: a character span ``[start, end)`` in the
  ORIGINAL ``docs.text`` (a whole-document label is ``0, len(text)``); grade 1 unless graded.

:func:`export_benchmark` turns a benchmark into what the pipeline reads: DocTrees (via
``parse_text``), ``queries.csv`` and ``gold.jsonl`` with the spans projected onto tree-text offsets.
``parse_text`` rewrites the text (whitespace, ligatures, line-end hyphens, heading lines become
section titles), so spans are carried over through a character alignment, never by offset copying.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets

from pipeline.datasets.paths import data_root
from pipeline.io import atomic_write_jsonl, atomic_write_text, read_jsonl
from pipeline.parse.text import _LIGATURES as _TEXT_LIGATURES
from pipeline.parse.text import parse_text
from pipeline.suite_datasets import canonical
from pipeline.suite_datasets import get as get_dataset
from pipeline.tree import DocTree

GOLD_COLUMNS = ("query_id", "doc_id", "start", "end", "grade")


@dataclass
class RetrievalBenchmark:
    name: str
    docs: datasets.Dataset  # doc_id, title, text, source_id (+ extras)
    queries: datasets.Dataset  # id, question (+ extras)
    gold: datasets.Dataset  # query_id, doc_id, start, end, grade; spans in the original text
    params: dict | None = None  # the subset parameters that produced it (for manifests)

    def summary(self) -> dict:
        return {
            "name": self.name,
            "docs": len(self.docs),
            "queries": len(self.queries),
            "gold": len(self.gold),
            "chars": sum(len(t) for t in self.docs["text"]),
        }


def make_benchmark(
    name: str, docs: list[dict], queries: list[dict], gold: list[dict], params: dict | None = None
) -> RetrievalBenchmark:
    """Check the shared schema once (ids unique, gold inside its document) and build the tables."""
    texts = {d["doc_id"]: d["text"] for d in docs}
    if len(texts) != len(docs):
        raise ValueError(f"{name}: duplicate doc_id")
    qids = {q["id"] for q in queries}
    if len(qids) != len(queries):
        raise ValueError(f"{name}: duplicate query id")
    for g in gold:
        if g["query_id"] not in qids or g["doc_id"] not in texts:
            raise ValueError(f"{name}: gold row refers to an unknown query or document: {g}")
        if not 0 <= g["start"] < g["end"] <= len(texts[g["doc_id"]]):
            raise ValueError(f"{name}: gold span outside its document: {g}")
    features = datasets.Features(
        {
            "query_id": datasets.Value("string"),
            "doc_id": datasets.Value("string"),
            "start": datasets.Value("int64"),
            "end": datasets.Value("int64"),
            "grade": datasets.Value("int64"),
        }
    )
    return RetrievalBenchmark(
        name,
        datasets.Dataset.from_list(docs),
        datasets.Dataset.from_list(queries),
        datasets.Dataset.from_dict({c: [g[c] for g in gold] for c in GOLD_COLUMNS}, features),
        params,
    )


def safe_id(label: str, prefix: str = "", key: str | None = None, max_len: int = 64) -> str:
    """A filesystem- and node-id-safe doc id (``[A-Za-z0-9._-]``, no ``:``), stable across runs.

    A short hash of ``key`` (default: the label) is appended whenever the label had to be changed
    or cut, so two labels never collide after sanitising.
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._-")[:max_len]
    if slug != label or key is not None:
        slug = f"{slug}-{hashlib.sha1((key or label).encode('utf-8')).hexdigest()[:8]}"
    return f"{prefix}{slug}"


def read_records(root: str | Path, file: str | None = None, split: str = "train", **hub_kwargs) -> list[dict]:
    """Records of a local JSON/JSONL file (``root/file``), or of a Hugging Face hub dataset when
    ``root`` is not a local path: the name is passed to ``datasets.load_dataset`` unchanged (with
    ``data_files=file`` when a file is named), so an online user can point a loader at a hub copy.

    Local files are parsed with :mod:`json`, not Arrow: HotpotQA's ``[title, [sentences]]`` pairs
    are mixed-type lists that Arrow cannot type.
    """
    path = Path(root) / file if file else Path(root)
    if path.exists():
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:  # JSON lines (whatever the file is called)
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return data if isinstance(data, list) else [data]
    if Path(root).is_absolute() or str(root).startswith("."):  # a local path, not a hub name: say so
        raise FileNotFoundError(path)
    if file:
        hub_kwargs["data_files"] = file
    return list(datasets.load_dataset(str(root), split=split, **hub_kwargs))


def default_root(name: str) -> Path:
    """``<data root>/retrieval/<folder>`` (see :func:`pipeline.datasets.paths.data_root`)."""
    return data_root() / "retrieval" / get_dataset(name).folder


def load_benchmark(name: str, root: str | Path | None = None, subset: dict | None = None) -> RetrievalBenchmark:
    """Load ``name`` from ``root`` (its data folder, or a hub name; default :func:`default_root`).

    ``subset=None`` uses the loader's ``DEFAULT_SUBSET`` (small, seeded, deterministic); keys given
    override it; ``{"full": True}`` starts from everything instead (other keys still apply as filters).
    """
    name = canonical(name)
    module = get_dataset(name).module()  # registered in pipeline/suite_datasets.py
    subset = dict(subset or {})
    params = {} if subset.pop("full", False) else dict(module.DEFAULT_SUBSET)
    params.update(subset)
    bench = module.load(root if root is not None else default_root(name), **params)
    bench.params = params
    return bench


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


def export_benchmark(bench: RetrievalBenchmark, out_dir: str | Path) -> dict:
    """Write ``trees/<doc_id>.json``, ``docs.csv``, ``queries.csv`` and ``gold.jsonl`` under ``out_dir``
    (tree files of documents not in ``bench`` are removed from ``trees/``).

    ``gold.jsonl`` rows: ``query_id, doc_id, start, end, grade`` in tree-text offsets, plus
    ``orig_start``/``orig_end``. A gold span with no surviving character is dropped and counted.
    Returns counts (docs, sentences, queries, gold, dropped gold, unaligned characters).
    """
    out = Path(out_dir)
    (out / "trees").mkdir(parents=True, exist_ok=True)
    by_doc: dict[str, list[dict]] = {}
    for g in bench.gold:
        by_doc.setdefault(g["doc_id"], []).append(g)
    gold_out: list[dict] = []
    counts: dict[str, Any] = {
        "name": bench.name,
        "docs": len(bench.docs),
        "sentences": 0,
        "queries": len(bench.queries),
        "gold": 0,
        "gold_dropped": 0,
        "unaligned_chars": 0,
    }
    for doc in bench.docs:
        tree = parse_text(doc["text"], doc["doc_id"], doc["title"] or doc["doc_id"])
        tree.metadata.update({"benchmark": bench.name, "source_id": doc["source_id"]})
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
    keep = {f"{d}.json" for d in bench.docs["doc_id"]}
    for stale in (out / "trees").glob("*.json"):  # an earlier, larger export must not leak into the index
        if stale.name not in keep:
            stale.unlink()
    gold_out.sort(key=lambda g: (g["query_id"], g["doc_id"], g["start"], g["end"]))
    counts["gold"] = len(gold_out)
    atomic_write_jsonl(out / "gold.jsonl", gold_out)
    docs = bench.docs.remove_columns("text").to_pandas()
    docs["n_chars"] = [len(t) for t in bench.docs["text"]]
    atomic_write_text(out / "docs.csv", docs.to_csv(index=False, lineterminator="\n"))
    queries = bench.queries.to_pandas()
    queries = queries[["id", "question"] + [c for c in queries.columns if c not in ("id", "question")]]
    atomic_write_text(out / "queries.csv", queries.to_csv(index=False, lineterminator="\n"))
    return counts


def read_gold(path: str | Path) -> list[dict]:
    """The projected gold written by :func:`export_benchmark`."""
    return read_jsonl(path)
