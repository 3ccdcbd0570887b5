"""Lexical retrieval: BM25 (rank-bm25's Okapi) over tree nodes of chosen levels.

The index file is the tokenised documents in SQLite (the same node table as the dense
stores, plus a tokens column), so it is a real DAG output that a rerun reuses; the
BM25 statistics are rebuilt from it at load time in about a second.

Tokens: NFKC-folded ("CO₂" -> "co2"), lower-cased words and numbers; thousands separators
dropped ("5,842" -> "5842"), decimals kept whole ("4.3", "6.1b"); a hyphenated name is kept
whole *and* as its parts ("gshard-600b", "gshard", "600b"); a short English stopword list is
dropped; words get a light stem (Porter's step 1 plus its final-e rule: plurals, -ed, -ing).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from pipeline.index_structures.store import IndexReader, IndexWriter, StoredNode
from pipeline.ranking.fusion import rrf
from pipeline.specs import LEVEL_FUSIONS  # the config schema's list
from pipeline.tree import DocTree

# a word or number, optionally joined to more by hyphens; "4.3", "6.1b", "5,842", "llama-3.1"
TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+[a-z]*)*(?:-[a-z0-9]+(?:[.,][0-9]+[a-z]*)*)*")
STOPWORDS = frozenset(
    """
a an and are as at be been being but by can could did do does for from had has have how if in into is it
its may might of on or our so such than that the their them then there these they this those to too
was we were what when where which while who whom whose why will with would
""".split()
)


def _cons(w: str, i: int) -> bool:
    """Porter's consonant test ("y" after a consonant is a vowel)."""
    if w[i] in "aeiou":
        return False
    return w[i] != "y" or i == 0 or not _cons(w, i - 1)


def _measure(w: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``w``."""
    form = re.sub(r"v+", "v", re.sub(r"c+", "c", "".join("c" if _cons(w, i) else "v" for i in range(len(w)))))
    return form.count("vc")


def _cvc(w: str) -> bool:
    n = len(w)
    return n >= 3 and _cons(w, n - 3) and not _cons(w, n - 2) and _cons(w, n - 1) and w[-1] not in "wxy"


def stem(t: str) -> str:
    """Light stemming: Porter (1980) step 1a/1b/1c and 5a, so "emissions"/"emission",
    "trained"/"training"/"train" and "measure"/"measured" meet; derivational suffixes
    ("-ation", "-ness") are left alone. Tokens with digits lose only a plural "s" ("h100s")."""
    if not t.isalpha():
        return t[:-1] if re.fullmatch(r"[a-z]*[0-9]+s", t) else t
    if len(t) <= 2:
        return t
    return _step5a(_step1c(_step1b(_step1a(t))))


def _step1a(t: str) -> str:
    """Plurals: "-sses"/"-ies" lose "es", a final "s" (not "ss") goes."""
    if t.endswith(("sses", "ies")):
        return t[:-2]
    if t.endswith("s") and not t.endswith("ss"):
        return t[:-1]
    return t


def _step1b(t: str) -> str:
    """ "-eed" -> "-ee" (measure > 0); "-ed"/"-ing" go after a vowel, then the ending is tidied."""
    if t.endswith("eed"):
        return t[:-1] if _measure(t[:-3]) > 0 else t
    for suffix in ("ed", "ing"):
        base = t[: -len(suffix)]
        if t.endswith(suffix) and any(not _cons(base, i) for i in range(len(base))):
            return _tidy_1b(base)
    return t


def _tidy_1b(t: str) -> str:
    if t.endswith(("at", "bl", "iz")):
        return t + "e"
    if len(t) > 1 and t[-1] == t[-2] and _cons(t, len(t) - 1) and t[-1] not in "lsz":
        return t[:-1]
    if _measure(t) == 1 and _cvc(t):
        return t + "e"
    return t


def _step1c(t: str) -> str:
    """A final "y" after a vowel becomes "i"."""
    return t[:-1] + "i" if t.endswith("y") and any(not _cons(t, i) for i in range(len(t) - 1)) else t


def _step5a(t: str) -> str:
    """A final "e" goes where the measure allows."""
    if t.endswith("e"):
        m = _measure(t[:-1])
        if m > 1 or (m == 1 and not _cvc(t[:-1])):
            return t[:-1]
    return t


def _number(t: str) -> str:
    """Thousands separators go ("5,842" -> "5842"); trailing decimal zeros too ("2.50" -> "2.5")."""
    t = t.replace(",", "")
    return re.sub(r"^(\d+)\.(\d*?)0+$", lambda m: m[1] + ("." + m[2] if m[2] else ""), t)


def tokenize(text: str) -> list[str]:
    """BM25 terms of ``text`` (see the module docstring); the same function for documents and queries."""
    out = []
    for word in TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        for t in [word, *word.split("-")] if "-" in word else [word]:
            if t and t not in STOPWORDS:
                out.append(stem(_number(t)))
    return out


def build_bm25_index(trees: list[DocTree], levels: list[str], writer: IndexWriter) -> dict:
    """Store every node (so hits can be expanded to their parents); tokens only on ``levels``."""
    counts: dict[str, int] = {}
    for tree in trees:
        nodes = list(tree.nodes.values())
        writer.add(
            [StoredNode.from_node(n) for n in nodes],
            tokens=[tokenize(n.text) if n.level in levels else None for n in nodes],
        )
        for n in nodes:
            if n.level in levels:
                counts[n.level] = counts.get(n.level, 0) + 1
    return counts


class OkapiScores:
    """rank-bm25's ``BM25Okapi.get_scores``, bit for bit, from an inverted index: only the documents
    that hold a query term are touched. Why: ``get_scores`` builds each term's frequency array with a
    Python loop over every document (18k WattBot nodes x every term of every planned query: minutes
    per retrieval job); here each term costs a few numpy operations on its postings. The same float
    operations in the same order on the same elements (a document without the term adds an exact 0
    in rank-bm25), so the scores are identical, not close (tests/index/test_bm25_scores.py)."""

    def __init__(self, bm25: BM25Okapi):
        self.bm25, self.n = bm25, bm25.corpus_size
        doc_len = np.array(bm25.doc_len)
        self.denominator = bm25.k1 * (1 - bm25.b + bm25.b * doc_len / bm25.avgdl)  # rank-bm25's expression
        docs: dict[str, list[int]] = {}
        freqs: dict[str, list[int]] = {}
        for i, frequencies in enumerate(bm25.doc_freqs):
            for term, tf in frequencies.items():
                docs.setdefault(term, []).append(i)
                freqs.setdefault(term, []).append(tf)
        self.postings = {t: (np.array(docs[t], dtype=np.intp), np.array(freqs[t])) for t in docs}

    def __call__(self, query: list[str]) -> np.ndarray:
        k1, score = self.bm25.k1, np.zeros(self.n)
        for q in query:
            if q not in self.postings:
                continue  # rank-bm25 adds 0 * (an all-zero frequency array): nothing
            rows, tf = self.postings[q]
            score[rows] += (self.bm25.idf.get(q) or 0) * (tf * (k1 + 1) / (tf + self.denominator[rows]))
        return score


class BM25Searcher:
    """Top-k BM25 search, restricted to ``levels``. Each level is its own collection (long
    paragraphs and short sentences do not share length statistics); ``search`` merges them."""

    def __init__(self, path: str | Path, levels: list[str]):
        self.reader = IndexReader(path)
        self.by_level: dict[str, tuple[list[int], OkapiScores]] = {}
        for level in levels:
            rows = self.reader.db.execute(
                "SELECT rowid, tokens FROM nodes WHERE level = ? AND tokens IS NOT NULL ORDER BY rowid", (level,)
            ).fetchall()
            if not rows:
                raise ValueError(
                    f"{path}: no '{level}' nodes in this BM25 index (built for {self.reader.meta.get('levels')})"
                )
            tokenised = [json.loads(r[1]) or ["<empty>"] for r in rows]
            self.by_level[level] = ([r[0] for r in rows], OkapiScores(BM25Okapi(tokenised)))

    def search(self, query: str, k: int, fusion: str = "score") -> list[tuple[StoredNode, float]]:
        """Top ``k`` nodes over all levels. ``fusion`` merges the per-level top-k lists:
        ``score`` by raw BM25 score (a paragraph that matches query terms spread over several
        of its sentences outranks each of them: broader evidence, which finds the right
        document more often on WattBot train), ``rrf`` by reciprocal rank (levels count
        equally; the rank-1 nodes of the levels tie, the first level in ``levels`` wins)."""
        q = tokenize(query)
        lists = []
        for rowids, okapi in self.by_level.values():
            scores = okapi(q)
            top = np.argsort(-scores, kind="stable")[:k]
            lists.append([(rowids[i], float(scores[i])) for i in top if scores[i] > 0])
        if fusion == "score":
            merged = sorted((x for ranked in lists for x in ranked), key=lambda x: (-x[1], x[0]))[:k]
        elif fusion == "rrf":
            merged = rrf(lists, k)
        else:
            raise ValueError(f"unknown level fusion {fusion!r} (have {LEVEL_FUSIONS})")
        return [(self.reader.node_by_rowid(r), s) for r, s in merged]
