"""The retrieval suite's datasets (LegalBench-RAG, HotpotQA, DragonBall, MS MARCO TREC-DL) in one schema.

Every loader returns a :class:`SuiteTables` of three ``datasets.Dataset`` tables:

* ``docs``: ``doc_id, title, text, source_id`` (+ extras). ``doc_id`` is filesystem-safe and stable;
  ``source_id`` is the dataset's own name for the document (file path, title, passage id).
* ``queries``: ``id, question`` (+ extras such as ``language``/``domain``).
* ``gold``: ``query_id, doc_id, start, end, grade``: a character span ``[start, end)`` in the
  ORIGINAL ``docs.text`` (a whole-document label is ``0, len(text)``); grade 1 unless graded.

The parse stage turns a suite dataset into what the pipeline reads (pipeline/parse/suite_export.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pipeline.config_schema import key
from pipeline.datasets.paths import data_root
from pipeline.registry.suite_datasets import SuiteSubset, canonical
from pipeline.registry.suite_datasets import get as get_dataset

if TYPE_CHECKING:  # Hugging Face datasets is imported where a table is made: the loaders register at start-up
    import datasets

GOLD_COLUMNS = ("query_id", "doc_id", "start", "end", "grade")
Unit = TypeVar("Unit", str, int)  # a loader's sampling unit: a question or document id


@dataclass
class SuiteTables:
    """A suite dataset loaded: its documents, queries and gold spans, in the shared schema."""

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


def make_suite_tables(name: str, docs: list[dict], queries: list[dict], gold: list[dict]) -> SuiteTables:
    """Check the shared schema once (ids unique, gold inside its document) and build the tables (the subset
    that produced them is recorded by whoever chose it: :func:`load_suite_tables`)."""
    import datasets

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
    return SuiteTables(
        name,
        datasets.Dataset.from_list(docs),
        datasets.Dataset.from_list(queries),
        datasets.Dataset.from_dict({c: [g[c] for g in gold] for c in GOLD_COLUMNS}, features),
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
    import datasets

    return list(datasets.load_dataset(str(root), split=split, **hub_kwargs))


@dataclass(frozen=True, kw_only=True)
class PilotSubset(SuiteSubset):
    """The seed and pilot keys of a loader that draws its subset (a sampling unit: a question, a query or a
    document, as its ``Subset`` says)."""

    seed: int = key("seed of the subset's draws", type="integer", default=0)
    pilot: int | None = key(
        "instead, this many sampling units no final draw of up to this subset's size takes (pilot_draw)",
        type=("integer", "null"),
        default=None,
        schema={"minimum": 1},
    )
    pilot_seed: int = key("seed of the pilot's draw", type="integer", default=1)


def pilot_draw(pool: list[Unit], final: Callable[[int], Iterable[Unit]], cap: int, size: int, seed: int) -> list[Unit]:
    """A pilot's sampling units (questions, queries or documents): up to ``size`` of ``pool``, seeded by
    ``seed``, among those that no final selection ``final(k)`` of ``k <= cap`` units takes.

    Why: a pilot sizes the final subset from its paired variance (#33); on queries a final run also
    scores, the sizing and the verdict would share data. The final's size is chosen after the pilot, so
    the pilot avoids every size up to ``cap`` (a seeded draw of k is not always a prefix of a draw of k+1)."""
    taken: set[Unit] = set().union(*(set(final(k)) for k in range(1, cap + 1)))
    rest = sorted(set(pool) - taken)
    return random.Random(seed).sample(rest, min(size, len(rest)))


def default_root(name: str) -> Path:
    """``<data root>/retrieval/<folder>`` (see :func:`pipeline.datasets.paths.data_root`)."""
    return data_root() / "retrieval" / get_dataset(name).folder


def dataset_root(root: str | Path, name: str) -> Path:
    """``<suite.root>/<the dataset's folder>``."""
    return Path(root) / get_dataset(name).folder


def load_suite_tables(name: str, root: str | Path | None = None, subset: dict | None = None) -> SuiteTables:
    """Load ``name`` from ``root`` (its data folder, or a hub name; default :func:`default_root`).

    ``subset=None`` uses the loader's ``DEFAULT_SUBSET`` (small, seeded, deterministic); keys given
    override it; ``{"full": True}`` starts from everything instead (other keys still apply as filters).
    ``pilot: M`` (with ``pilot_seed``, default 1) loads instead up to M of the loader's sampling units
    (questions, queries, documents per domain, documents) that no final selection of at most this subset's
    size takes (:func:`pilot_draw`): a pilot disjoint from the final queries of any run with the same seed
    and a size up to it, for sizing them by power.
    """
    name = canonical(name)
    module = get_dataset(name).module()  # registered in pipeline/registry/suite_datasets.py
    subset = dict(subset or {})
    pilot = subset.pop("exclude_pilot", None)
    fraction = subset.pop("doc_fraction", None)
    params = {} if subset.pop("full", False) else dict(module.DEFAULT_SUBSET)
    params.update(subset)
    tables = module.load(root if root is not None else default_root(name), **params)
    if "pilot" in params and not len(tables.queries):
        raise ValueError(f"{name}: the pilot {params} has no query: every unit is in a final selection of its size")
    if pilot is not None:
        tables = without_queries(tables, pilot_query_ids(name, root, pilot))
        params["exclude_pilot"] = pilot
    if fraction is not None:
        tables = doc_share(tables, fraction)
        params["doc_fraction"] = fraction
    tables.params = params
    return tables


def pilot_query_ids(name: str, root: str | Path | None, pilot: dict) -> set[str]:
    """The query ids of a pilot subset (``exclude_pilot``: config.pilot.yaml's entry, the loader's defaults
    under it as the pilot run resolved them)."""
    if "pilot" not in pilot:
        raise ValueError(f"{name}: exclude_pilot {pilot} is not a pilot's subset (it has no `pilot` key)")
    return set(load_suite_tables(name, root, pilot).queries["id"])


def suite_sizes(name: str, root: str | Path | None, subset: dict | None) -> dict:
    """What a subset scores: its documents and queries, and the pilot's queries it leaves out (the
    ``suite-sizes`` verb: the counts a config's comment or the docs name, computed, never typed)."""
    tables = load_suite_tables(name, root, subset)
    pilot = (subset or {}).get("exclude_pilot")
    return {
        "dataset": name,
        "documents": len(tables.docs),
        "queries": len(tables.queries),
        "pilot_queries_left_out": len(pilot_query_ids(name, root, pilot)) if pilot else 0,
    }


def without_queries(tables: SuiteTables, drop: set[str]) -> SuiteTables:
    """``tables`` less the queries ``drop`` and their gold; every document stays (a distractor now)."""
    queries = [q for q in tables.queries if q["id"] not in drop]
    gold = [g for g in tables.gold if g["query_id"] not in drop]
    return make_suite_tables(tables.name, list(tables.docs), queries, gold)


def doc_order(doc_ids: Iterable[str]) -> list[str]:
    """The documents in a fixed order that depends on each id alone (its SHA-1), not on the others: a share of a
    larger subset keeps the same first documents, so the shares of :func:`doc_share` are nested."""
    return sorted(doc_ids, key=lambda d: (hashlib.sha1(d.encode("utf-8")).hexdigest(), d))


def doc_share(tables: SuiteTables, fraction: float) -> SuiteTables:
    """``tables`` with the first ``ceil(fraction x documents)`` of :func:`doc_order` (at least one), whole, and
    the queries whose gold spans all lie in them (a loader's rule for a document draw), with their gold. Why: a
    scale measurement needs corpora of one dataset at several sizes, each inside the next (`make bench-scale`)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"{tables.name}: doc_fraction must be in (0, 1], got {fraction}")
    order = doc_order(tables.docs["doc_id"])
    keep = set(order[: max(1, math.ceil(fraction * len(order) - 1e-9))])
    outside = {g["query_id"] for g in tables.gold if g["doc_id"] not in keep}
    queries = [q for q in tables.queries if q["id"] not in outside]
    if not queries:  # an export needs one (its queries.csv has the columns of a row)
        raise ValueError(f"{tables.name}: doc_fraction {fraction} keeps no query; take a larger share or subset")
    kept = {q["id"] for q in queries}
    gold = [g for g in tables.gold if g["query_id"] in kept]
    return make_suite_tables(tables.name, [d for d in tables.docs if d["doc_id"] in keep], queries, gold)
