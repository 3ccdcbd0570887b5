"""A local model's context size, snippets and retry policy, chosen on the WattBot train folds only (#48 item 4).

Why: the answering variants' ``context_k``/``snippet_chars`` were set for Gemma 3 270M, a model that
mostly abstains; a model that reads may want more context, and more context costs prompt tokens, which on
2 cores are most of a question's seconds. The choice must not look at a test label.

How: each candidate (snippets shown, characters per snippet, blank-retries) answers every train question
through the project's own answer path (context-first prompt, the answer schema as a grammar, greedy
decoding: a reply is a function of its request, so contention changes seconds, never scores), its
replies cached in ``data/cache/llm-choice.sqlite`` (a stopped run resumes; a retry's deeper attempt is the
very request of the candidate with twice the snippets). Each question gets its WattBot 2025 score against
train_QA.csv. Then ``n_folds`` seeded folds of the train questions: for each fold the candidate with the best
mean on the other folds (a tie: fewer prompt tokens a question) is scored on the held-out fold, and the mean
of those held-out scores is what the choosing is worth on questions it did not see; the choice itself is the
best on all train questions, by the same rule. Question by question, every candidate, written after each
question: a run stopped early is a result on the questions it reached, every candidate on the same ones.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from pipeline.answer.run import AnswerJob, answer_split
from pipeline.answer.submission import submission_frame
from pipeline.config import load_config
from pipeline.datasets.wattbot import load_metadata
from pipeline.io import atomic_write_json, read_jsonl
from pipeline.llm.gateway import LLMGateway
from pipeline.llm_models import LLMSpec
from pipeline.registry.answer_backends import variant_spec
from pipeline.score.wattbot import per_question
from pipeline.workflow.wattbot import labels_source, split_source

PARAMS = {"temperature": 0, "max_tokens": 160}  # the default grid's LLM variants' (config.yaml llm-cf)
CACHE = "data/cache/llm-choice.sqlite"


@dataclass(frozen=True)
class Candidate:
    """One setting of the answering variant's reading knobs."""

    context_k: int
    snippet_chars: int
    max_retries: int = 0

    @property
    def name(self) -> str:
        return f"k{self.context_k}-c{self.snippet_chars}-r{self.max_retries}"

    def variant(self, model: str) -> dict:
        return {
            "backend": "llm",
            "model": model,
            "prompt": "context_first",
            "context_k": self.context_k,
            "snippet_chars": self.snippet_chars,
            "max_retries": self.max_retries,
            "params": PARAMS,
        }


# Most informative first, so a run stopped early still compares what matters: the default grid's setting,
# the survey's (docs local-llm: top 5 x 1,200 characters), one between; the retry of each (cheap: only
# blanks ask again); then the two that tell snippets from characters apart.
CANDIDATES = (
    Candidate(2, 400),
    Candidate(5, 1200),
    Candidate(3, 800),
    Candidate(2, 400, 1),
    Candidate(5, 1200, 1),
    Candidate(3, 800, 1),
    Candidate(5, 400),
    Candidate(2, 1200),
)


def folds(ids: Sequence[str], n_folds: int, seed: int) -> dict[str, int]:
    """Each question's fold: a seeded shuffle dealt round-robin (fold sizes differ by at most one)."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    return {q: i % n_folds for i, q in enumerate(order)}


def best(means: dict[str, float], cost: dict[str, float]) -> str:
    """The candidate with the highest mean score; a tie goes to the cheaper (fewer prompt tokens)."""
    return min(means, key=lambda n: (-round(means[n], 9), cost[n], n))


def choose(scores: dict[str, pd.Series], cost: dict[str, float], fold_of: dict[str, int]) -> dict:
    """The choice and what it is worth: per fold, the best candidate on the other folds and its held-out
    mean; then the best on every question. ``scores``: candidate -> per-question score (indexed by id)."""
    n_folds = max(fold_of.values()) + 1
    per_fold: list[dict] = []
    held_scores: list[float] = []  # every held-out question's score under its fold's choice
    for f in range(n_folds):
        inner = [q for q, g in fold_of.items() if g != f]
        held = [q for q, g in fold_of.items() if g == f]
        if not held or not inner:  # a partial run: this fold has no question yet, or nothing else has
            continue
        pick = best({n: float(s[inner].mean()) for n, s in scores.items()}, cost)
        held_scores += [float(v) for v in scores[pick][held]]
        per_fold.append(
            {
                "fold": f,
                "questions": len(held),
                "chosen": pick,
                "held_out_score": round(float(scores[pick][held].mean()), 4),
            }
        )
    overall = best({n: float(s.mean()) for n, s in scores.items()}, cost)
    held_out = round(sum(held_scores) / len(held_scores), 4) if held_scores else None
    return {"chosen": overall, "folds": per_fold, "held_out_score": held_out}


def train_inputs(
    questions_csv: str, labels_csv: str, retrieval: str | Path, limit: int | None
) -> tuple[pd.DataFrame, list[dict], pd.DataFrame]:
    """The train questions (the first ``limit``), their retrieval records, their labels (train only)."""
    questions = pd.read_csv(questions_csv, dtype=str, keep_default_na=False)
    questions = questions.head(limit) if limit else questions
    gold = pd.read_csv(labels_csv)
    return questions, read_jsonl(retrieval), gold[gold["id"].astype(str).isin(set(questions["id"]))]


def candidate_scores(records: list[dict], questions: pd.DataFrame, gold: pd.DataFrame, urls: dict) -> pd.Series:
    """Each question's WattBot 2025 score, indexed by id."""
    table = per_question(gold, submission_frame(questions, records, urls), "wattbot2025")
    return table.set_index(table["id"].astype(str))["score"]


def run_candidate(gw: LLMGateway, model: str, cand: Candidate, questions, retrieval, known) -> tuple[list, dict]:
    """Answer the questions with one candidate: its records and the sums of what its calls cost (seconds
    as measured here: contended on a shared machine)."""
    telemetry: list[dict] = []
    t0 = time.monotonic()
    job = AnswerJob(gw.settings, "", known, False, telemetry=telemetry, gateway=gw)
    records = answer_split(retrieval, questions, variant_spec(cand.name, cand.variant(model)), job)
    calls = [c for r in records for c in r["call"]["calls"]]
    live = [t for t in telemetry if not t["cached"]]
    return records, {
        "calls": len(calls),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "blank": sum(bool(r["is_blank"]) for r in records),
        "failures": sum(bool(r.get("failure")) for r in records),
        "live_calls": len(live),
        "live_call_s": sum(t["latency_s"] for t in live),
        "wall_s": time.monotonic() - t0,
    }


def summary(sums: dict, n: int) -> dict:
    """A candidate's costs over its ``n`` answered questions: totals, and tokens per question."""
    return {
        **{k: round(v, 1) if isinstance(v, float) else v for k, v in sums.items()},
        "prompt_tokens_per_question": round(sums["prompt_tokens"] / n, 1),
        "completion_tokens_per_question": round(sums["completion_tokens"] / n, 1),
    }


def replies(records: list[dict], retrieval: list[dict], cand: Candidate) -> list[dict]:
    """Each call's raw reply with what it was shown (the documents its schema allowed): the fixtures of
    tests/answer/test_contradictory_replies.py are these, for Qwen2.5-Coder-0.5B."""
    from pipeline.answer.llm_answer import select_snippets

    hits = {r["id"]: r["hits"] for r in retrieval}
    return [
        {
            "id": r["id"],
            "question": r["question"],
            "answer_unit": r["answer_unit"],
            "attempt": c["attempt"],
            "shown_docs": sorted(
                {h["doc_id"] for h in select_snippets(hits[r["id"]], cand.context_k * (c["attempt"] + 1))}
            ),
            "raw": c["raw"],
        }
        for r in records
        for c in r["call"]["calls"]
    ]


@dataclass(frozen=True)
class ChoiceRun:
    """What one choice run asks: the model, its inputs and outputs, the candidates and the folds."""

    model: str
    retrieval: str | Path  # the train questions' retrieval records (hier-convex's)
    out: str | Path  # the fold results and the choice (JSON)
    candidates: Sequence[Candidate] = CANDIDATES
    n_folds: int = 3
    seed: int = 0
    limit: int | None = None  # the first N train questions only
    replies_out: str | Path | None = None  # every raw reply too (:func:`replies`)


def run_choice(config_path: str | Sequence[str], run: ChoiceRun) -> dict:
    """Every candidate on each question in turn, writing ``run.out`` (per-question scores, costs, the fold
    choice on the questions answered so far) after each question."""
    model, retrieval, out, replies_out = run.model, run.retrieval, run.out, run.replies_out
    candidates, n_folds, seed, limit = run.candidates, run.n_folds, run.seed, run.limit
    cfg = load_config(config_path)
    questions, records_in, gold = train_inputs(
        split_source(cfg, "train"), labels_source(cfg, "train"), retrieval, limit
    )
    meta = load_metadata(Path(cfg["wattbot"]["dir"]) / "metadata.csv").astype(str)
    urls, known = dict(zip(meta["id"], meta["url"])), set(meta["id"])
    llm = LLMSpec.from_dict(
        {**cfg["llm"], "mode": "live", "timeout_s": 1800, "max_failure_rate": 1.0, "malformed_retries": 0}
    )
    fold_of = folds(list(questions["id"]), n_folds, seed)
    result: dict = {
        "model": model,
        "split": "train",
        "questions": len(questions),
        "retrieval": str(retrieval),
        "params": PARAMS,
        "n_folds": n_folds,
        "seed": seed,
        "how": __doc__.split("How: ", 1)[1].strip() if __doc__ else "",
        "seconds": "wall time of the live calls on the machine as it was (contended on a shared one; cached calls"
        " count 0): what a question costs idle is the LLM bench's rows (make bench-llm-models)",
        "candidates": {},
    }
    records: dict[str, list[dict]] = {c.name: [] for c in candidates}
    sums: dict[str, dict] = {}
    with LLMGateway(Path(CACHE), llm) as gw:
        gw.open(model)  # its server started before the first question's clock
        # question by question, every candidate: a run stopped early has every candidate on the same questions
        for i in range(len(questions)):
            one = questions.iloc[[i]]
            for cand in candidates:
                recs, cost = run_candidate(gw, model, cand, one, records_in, known)
                records[cand.name] += recs
                sums[cand.name] = {k: sums.get(cand.name, {}).get(k, 0) + v for k, v in cost.items()}
            done = questions.head(i + 1)
            result["answered"] = i + 1
            scores = {
                c.name: candidate_scores(records[c.name], done, gold[gold["id"].isin(set(done["id"]))], urls)
                for c in candidates
            }
            for c in candidates:
                result["candidates"][c.name] = {
                    **asdict(c),
                    **summary(sums[c.name], i + 1),
                    "score": round(float(scores[c.name].mean()), 4),
                    "per_question": {q: round(float(v), 4) for q, v in scores[c.name].items()},
                }
            tokens = {n: c["prompt_tokens_per_question"] for n, c in result["candidates"].items()}
            result["choice"] = choose(scores, tokens, {q: fold_of[q] for q in done["id"]})
            atomic_write_json(Path(out), result)
            if replies_out:
                raw = {c.name: replies(records[c.name], records_in, c) for c in candidates}
                atomic_write_json(Path(replies_out), {"model": model, "params": PARAMS, "replies": raw})
            line = {n: c["score"] for n, c in result["candidates"].items()}
            print(f"{i + 1}/{len(questions)} {done['id'].iloc[-1]}: {json.dumps(line)}", flush=True)
    return result
