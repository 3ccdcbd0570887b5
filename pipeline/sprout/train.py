"""Training the 72 head weights (SproutRAG §4), encoder frozen, on real co-relevance labels.

Objective (the paper's): a contrastive retrieval term, cross-entropy over [cos(q, p+), cos(q, p-)] / tau
(tau = 0.05; p+ = the mean of the query's gold leaf vectors, p- = the next example's p+, cyclically,
as the reference's MS MARCO loader), plus lambda * mean over co-relevant chunk pairs of -log M[i, j]
(lambda = 0.1), M the softmax-head-weighted mutual attention. With the encoder frozen the retrieval
term does not depend on the head weights (it is reported, constant); the attention term trains them.

Co-relevant pairs come from gold evidence: chunks inside the same gold span (LegalBench-RAG) and
chunks holding supporting facts of one question in the same paragraph (HotpotQA). Training
queries and documents exclude everything the retrieval suite evaluates (the held-out scheme), or, with
``sprout.train.folds`` (cross-fitting, pipeline/sprout/folds.py), the pairs are gathered once from the
whole training subsets and each fold's heads train on the examples outside that fold. Per-head attentions of
the labelled pairs are computed once (only the windows holding a pair run) and cached; the
optimisation over the cache then takes seconds.
"""

from __future__ import annotations

import csv
import json
import logging
import random
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from pipeline.io import atomic_write_bytes, atomic_write_json
from pipeline.provenance import write_manifest
from pipeline.registry.suite_datasets import get as get_dataset
from pipeline.specs import AttentionSpec, TrainSpec
from pipeline.sprout.attention import dataset_attention
from pipeline.sprout.chunks import leaf_chunks
from pipeline.sprout.heads import softmax
from pipeline.tree import DocTree

log = logging.getLogger(__name__)


def _ids(path: Path, column: str) -> set[str]:
    if not path.exists():
        return set()
    with open(path, encoding="utf-8", newline="") as fh:
        return {row[column] for row in csv.DictReader(fh)}


def training_subset(name: str, root: str, subset: dict | None, exclude_dir: str | None):
    """The suite dataset's subset to train on, minus every query and document of ``exclude_dir`` (the
    suite's export of that dataset): training never sees what is evaluated."""
    from pipeline.datasets.suite import dataset_root, load_suite_tables, make_suite_tables

    tables = load_suite_tables(name, dataset_root(root, name), subset or None)
    ex_q = _ids(Path(exclude_dir) / "queries.csv", "id") if exclude_dir else set()
    ex_d = _ids(Path(exclude_dir) / "docs.csv", "doc_id") if exclude_dir else set()
    gold = [g for g in tables.gold if g["query_id"] not in ex_q and g["doc_id"] not in ex_d]
    qids, dids = {g["query_id"] for g in gold}, {g["doc_id"] for g in gold}
    queries = [q for q in tables.queries if q["id"] in qids]
    docs = [d for d in tables.docs if d["doc_id"] in dids]
    excluded = {"queries": len(tables.queries) - len(queries), "docs": len(tables.docs) - len(docs)}
    return replace(make_suite_tables(tables.name, docs, queries, gold), params=tables.params), excluded


def corelevant_pairs(chunks_by_doc: dict, gold: list[dict], group_by: str, max_pairs: int) -> dict:
    """{(query_id, doc_id): (gold chunk indexes, [(i, j), ...])}, nearest pairs first, capped."""
    groups: dict[tuple, set[int]] = {}
    for g in gold:
        chunks = chunks_by_doc.get(g["doc_id"])
        if not chunks:
            continue
        hit = {c.index for c in chunks if c.start < g["end"] and g["start"] < c.end}
        key = (g["query_id"], g["doc_id"]) + ((g["start"], g["end"]) if group_by == "span" else ())
        groups.setdefault(key, set()).update(hit)
    out: dict[tuple, tuple[set[int], list]] = {}
    for key, idx in sorted(groups.items()):
        q = key[:2]
        gold_chunks, pairs = out.setdefault(q, (set(), []))
        gold_chunks.update(idx)
        s = sorted(idx)
        pairs += [(a, b) for k, a in enumerate(s) for b in s[k + 1 :]]
    for _gold_chunks, pairs in out.values():
        pairs[:] = sorted(set(pairs), key=lambda p: (p[1] - p[0], p))[:max_pairs]
    return out


@dataclass(frozen=True)
class TrainPairsJob:
    """The sprout_train_pairs job: what to train on, how the windows run, and where things go."""

    train: TrainSpec
    attention: AttentionSpec
    root: str  # the suite's data root (the training subsets are read from there)
    exclude: dict[str, str]  # dataset -> the suite export it evaluates (its queries and documents kept out)
    work_dir: str  # the training subsets' exports
    out: str


def _training_pairs(job: TrainPairsJob) -> tuple[list, list, dict, dict]:
    """Export each training subset and gather its co-relevant chunk pairs: (documents to run through
    the encoder, (dataset, query, document, gold chunks, pairs) wanted, provenance, question texts)."""
    from pipeline.parse.suite_export import export_suite_tables, read_gold

    docs: list = []
    wanted: list = []
    provenance: dict = {}
    questions: dict = {}
    k = job.attention.max_sentences_per_chunk
    for name, subset in sorted(job.train.datasets.items()):
        tables, excluded = training_subset(name, job.root, subset, job.exclude.get(name))
        ddir = Path(job.work_dir) / name
        counts = export_suite_tables(tables, ddir)
        trees = {p.stem: DocTree.load(p) for p in sorted((ddir / "trees").glob("*.json"))}
        chunks = {d: leaf_chunks(t, k) for d, t in trees.items()}
        group_by = get_dataset(name).train_group
        if group_by is None:  # the schema admits only datasets with a train_group
            raise ValueError(f"sprout training: dataset {name!r} has no train_group")
        pairs = corelevant_pairs(chunks, read_gold(ddir / "gold.jsonl"), group_by, job.train.max_pairs_per_query)
        questions.update({q["id"]: q["question"] for q in tables.queries})
        for (qid, doc_id), (gold_chunks, ps) in pairs.items():
            if ps:
                wanted.append((name, qid, doc_id, sorted(gold_chunks), ps))
        provenance[name] = {
            "subset": tables.params,
            "excluded_evaluated": excluded,
            "export": counts,
            "queries_with_pairs": len({w[1] for w in wanted if w[0] == name}),
            "pairs": sum(len(w[4]) for w in wanted if w[0] == name),
        }
        docs += [(f"{name}/{d}", trees[d].text, chunks[d]) for d in sorted({w[2] for w in wanted if w[0] == name})]
    return docs, wanted, provenance, questions


def prepare_pairs(job: TrainPairsJob, progress: bool = True) -> dict:
    """Export the training subsets, run the windows holding labelled pairs, cache per-head pair attention."""
    from safetensors.numpy import save

    from pipeline.embed import make_encoder
    from pipeline.sprout.searcher import query_encoder
    from pipeline.sprout.stage import attention_encoder

    encoder = attention_encoder(job.attention)
    qenc = make_encoder(query_encoder(job.attention.threads).as_dict())
    docs, wanted, provenance, questions = _training_pairs(job)
    index = {d[0]: i for i, d in enumerate(docs)}
    need: dict[int, set[tuple[int, int]]] = {}
    for name, _, doc_id, _, ps in wanted:
        need.setdefault(index[f"{name}/{doc_id}"], set()).update(ps)

    def keep(d: int, cids: np.ndarray) -> bool:
        present = set(cids.tolist())
        return any(a in present and b in present for a, b in need.get(d, ()))

    attn = dataset_attention(encoder, docs, job.attention, keep_window=keep, progress=progress)
    rows, vals, qtexts, pos, ids = [], [], [], [], []
    dropped = 0
    for name, qid, doc_id, gold_chunks, ps in wanted:
        da = attn[index[f"{name}/{doc_id}"]]
        lookup = {(int(a), int(b)): e for e, (a, b) in enumerate(da.pairs)}
        found = [lookup[p] for p in ps if p in lookup]
        dropped += len(ps) - len(found)
        vecs = da.leaf_vectors[[c for c in gold_chunks if da.chunk_windows[c] > 0]]
        if not found or not len(vecs):
            continue
        p = vecs.mean(0)
        pos.append(p / max(np.linalg.norm(p), 1e-12))
        qtexts.append(questions[qid])
        ids.append([name, qid, doc_id])
        rows += [len(pos) - 1] * len(found)
        vals.append(da.head_values[found])
    if not pos:
        raise ValueError(
            "sprout training: no co-relevant chunk pair shares an encoder window; nothing to train on (when the "
            "suite scores every training query or document, cross-fit instead: sprout.train.folds, docs/sproutrag.md)"
        )
    arrays: dict[str, np.ndarray] = {
        "pair_example": np.asarray(rows, dtype=np.int64),
        "pair_values": np.concatenate(vals).astype(np.float32),
        "query": qenc.encode(qtexts).astype(np.float32),
        "positive": np.stack(pos).astype(np.float32),
    }
    meta = {
        "datasets": provenance,
        "examples": len(pos),
        "pairs": len(rows),
        "pairs_without_window": dropped,
        "windows": sum(a.n_windows for a in attn),
        "layers": encoder.layers,
        "heads": encoder.heads,
        "model_id": encoder.model_id,
        "attention": job.attention.hashed(),  # the hashed slice it was given (no threads)
    }
    if job.train.folds:  # cross-fitting picks each fold's examples by (dataset, query, document)
        meta["example_ids"] = ids
    atomic_write_bytes(job.out, save(arrays, metadata={"meta": json.dumps(meta, sort_keys=True)}))
    write_manifest(job.out, {"train": job.train.as_dict(), "attention": job.attention.hashed()}, inputs=[], counts=meta)
    return meta


def load_pairs(path: str | Path) -> tuple[dict, dict]:
    from safetensors import safe_open
    from safetensors.numpy import load_file

    with safe_open(str(path), "np") as fh:
        meta = json.loads(fh.metadata()["meta"])
    return meta, load_file(str(path))


def losses(alpha, arrays: dict, examples, lam: float, tau: float):
    """(total, retrieval, attention) for the given examples (torch tensors; alpha [L, H] logits)."""
    import torch

    ex = torch.as_tensor(examples)
    q, p = torch.from_numpy(arrays["query"]), torch.from_numpy(arrays["positive"])
    neg = torch.roll(p, -1, dims=0)  # the next example's positive, cyclically (the reference's loader)
    logits = torch.stack([(q[ex] * p[ex]).sum(1), (q[ex] * neg[ex]).sum(1)], dim=1) / tau
    retrieval = torch.nn.functional.cross_entropy(logits, torch.zeros(len(ex), dtype=torch.long))
    w = torch.softmax(alpha.reshape(-1), dim=0)
    pe = torch.from_numpy(arrays["pair_example"])
    sel = torch.isin(pe, ex)
    m = torch.from_numpy(arrays["pair_values"][sel.numpy()]).double() @ w
    nll = -torch.log(m.clamp(1e-12, 1.0))
    # mean over each example's pairs, then over examples
    owner = torch.unique(pe[sel], return_inverse=True)[1]
    per_ex = torch.zeros(int(owner.max()) + 1, dtype=nll.dtype).index_add(0, owner, nll)
    per_ex = per_ex / torch.bincount(owner).to(nll.dtype)
    attention = per_ex.mean()
    return retrieval.double() + lam * attention, retrieval.double(), attention


def subset_pairs(arrays: dict, keep: list[int]) -> dict:
    """The pairs cache restricted to the examples ``keep`` (in that order), its pairs renumbered."""
    new = np.full(len(arrays["query"]), -1, dtype=np.int64)
    new[np.asarray(keep, dtype=np.int64)] = np.arange(len(keep))
    sel = new[arrays["pair_example"]] >= 0
    return {
        "pair_example": new[arrays["pair_example"][sel]],
        "pair_values": arrays["pair_values"][sel],
        "query": arrays["query"][keep],
        "positive": arrays["positive"][keep],
    }


@dataclass(frozen=True)
class FoldJob:
    """One cross-fitted head training: the examples left after holding out ``fold`` of ``dataset``."""

    dataset: str
    fold: int
    export_dir: str  # the dataset's suite export (its folds are computed from it)


def _fold_examples(meta: dict, ids: list | None, arrays: dict, train: TrainSpec, fold: FoldJob) -> tuple[dict, dict]:
    """The pairs cache and its meta restricted to the examples ``fold`` may learn from, the fold recorded."""
    from pipeline.sprout.folds import export_folds, kept_examples

    if not train.folds or ids is None:
        raise ValueError("cross-fitting needs sprout.train.folds and a pairs file with example ids")
    folds = export_folds(fold.export_dir, train.folds)
    keep = kept_examples(ids, fold.dataset, folds, fold.fold)
    if not keep:
        raise ValueError(f"sprout training: fold {fold.fold} of {fold.dataset} leaves no training example")
    arrays = subset_pairs(arrays, keep)
    record = {
        "dataset": fold.dataset,
        "fold": fold.fold,
        "folds": train.folds,
        "held_out": folds.counts()[fold.fold],
        "examples_kept": len(keep),
        "examples_all": len(ids),
    }
    return meta | {"pairs": len(arrays["pair_example"]), "cross_fit": record}, arrays


def train_heads(pairs_path: str, train: TrainSpec, out: str, fold: FoldJob | None = None) -> dict:
    """Optimise the head logits (AdamW, warmup 5%, clip 1.0) and write them with their provenance;
    with ``fold``, on the examples that fold may learn from (pipeline/sprout/folds.py)."""
    import torch

    meta, arrays = load_pairs(pairs_path)
    ids = meta.pop("example_ids", None)  # cross-fitting's; not copied into the head file
    inputs = [pairs_path]
    if fold is not None:
        meta, arrays = _fold_examples(meta, ids, arrays, train, fold)
        inputs += [str(Path(fold.export_dir) / f) for f in ("queries.csv", "gold.jsonl")]
    torch.manual_seed(train.seed)
    L, H = meta["layers"], meta["heads"]
    alpha = torch.zeros((L, H), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.AdamW([alpha], lr=train.lr, weight_decay=0.0)
    n = len(arrays["query"])
    lam, tau, bs = train.lam, train.temperature, train.batch_size
    steps = train.epochs * ((n + bs - 1) // bs)
    warm = max(1, int(0.05 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    everything = np.arange(n)
    with torch.no_grad():
        start = [float(x) for x in losses(alpha, arrays, everything, lam, tau)]
    rng = random.Random(train.seed)
    history = []
    for _ in range(train.epochs):
        order = list(range(n))
        rng.shuffle(order)
        epoch = []
        for b in range(0, n, bs):
            opt.zero_grad()
            total, _, _ = losses(alpha, arrays, np.asarray(order[b : b + bs]), lam, tau)
            total.backward()
            torch.nn.utils.clip_grad_norm_([alpha], 1.0)
            opt.step()
            sched.step()
            epoch.append(float(total.detach()))
        history.append(round(float(np.mean(epoch)), 6))
    with torch.no_grad():
        end = [float(x) for x in losses(alpha, arrays, everything, lam, tau)]
    a = alpha.detach().numpy()
    w = softmax(a)
    result = {
        "alpha": np.round(a, 8).tolist(),
        "weights": np.round(w.reshape(L, H), 8).tolist(),
        "objective": "paper: CE(retrieval)/tau + lambda * mean -log M[i,j] over co-relevant pairs (encoder frozen)",
        "hyperparameters": {k: v for k, v in train.as_dict().items() if k not in ("datasets", "max_pairs_per_query")},
        "loss": {
            "start": dict(zip(("total", "retrieval", "attention"), np.round(start, 6).tolist())),
            "end": dict(zip(("total", "retrieval", "attention"), np.round(end, 6).tolist())),
            "per_epoch": history,
        },
        "top_heads": [
            {"layer": int(i // H), "head": int(i % H), "weight": round(float(w[i]), 6)}
            for i in np.argsort(-w, kind="stable")[:5]
        ],
        "data": meta,
    }
    atomic_write_json(out, result)
    write_manifest(out, {"train": train.as_dict()}, inputs=inputs, counts={"examples": n, "pairs": meta["pairs"]})
    return {"loss": result["loss"], "examples": n, "pairs": meta["pairs"]}
