"""retrieve: one split's questions against a retrieval variant's indexes (an LLM planner too)."""

from __future__ import annotations

from pathlib import Path

from pipeline.verbs.base import job_llm, json_arg, llm_job_args, verb


def split_questions(a, verb: str) -> tuple[str, dict[str, list[str]], list[str]]:
    """``--questions QUESTIONS [BATCH...]`` of both retrieve verbs: the questions file, its rows (one
    ``--batch`` of them when given) and the batch files a whole job joins (none: it retrieves them itself)."""
    from pipeline.io import read_csv_columns
    from pipeline.shards import Shard, batch_rows

    questions_file, *batches = a.questions
    if batches and a.batch:
        raise SystemExit(f"{verb}: batches are joined by a whole job, without --batch")
    questions = read_csv_columns(questions_file)  # not pandas: its import is a third of a small job's CPU
    rows = batch_rows(questions, Shard.from_id(a.batch)) if a.batch else questions
    return questions_file, rows, batches


def cmd_retrieve(a) -> None:
    questions_file, questions, batches = split_questions(a, "retrieve")
    if batches:
        join_retrieval(a, questions_file, questions["id"], batches)
    else:
        retrieve_rows(a, questions_file, questions)


def join_retrieval(a, questions_file: str, ids: list[str], batches: list[str]) -> None:
    """A batched split's retrieval: its batches' rows joined in query order, with the whole job's manifest."""
    from pipeline.io import atomic_write_bytes
    from pipeline.provenance import write_manifest
    from pipeline.retrieve.batches import join_batches

    p = json_arg(a.params)
    if "llm" in p:
        raise SystemExit("retrieve: an LLM planner's retrieval is not batched")
    atomic_write_bytes(a.out, join_batches(ids, batches))
    write_manifest(a.out, p, [*index_files(a.index_dir, p), questions_file])


def index_files(index_dir: str, p: dict) -> list[Path]:
    """The index files a retrieval reads (its manifest's inputs, with its questions)."""
    return [Path(index_dir) / f"{n}.sqlite" for n in sorted(p["indexes"])]


def retrieve_rows(a, questions_file: str, questions: dict[str, list[str]]) -> None:
    """The split's retrieval (or, with ``--batch``, one batch of its queries, ``questions`` their rows: the
    batch noted in its manifest)."""
    from pipeline.io import atomic_write_jsonl
    from pipeline.provenance import write_manifest
    from pipeline.retrieve.run import RetrieveJob, retrieve

    p = json_arg(a.params)
    job = RetrieveJob.from_params(p, a.index_dir, a.cache_dir)  # the params parsed once: the stage reads the job
    gateway = None
    if "llm" in p:  # an LLM query planner: the same cached gateway, concurrency and limits as the answerers
        from pipeline.llm.gateway import LLMGateway

        llm = job_llm(p["llm"], json_arg(a.llm_exec), a.in_flight, job.spec.planner.model)
        gateway = LLMGateway(Path(a.cache_dir) / "llm.sqlite", llm, variant=f"retrieval.{p['name']}")
    try:
        rows = retrieve(questions, job, gateway=gateway)
    finally:
        if gateway is not None:  # stops a local LLM server it started
            gateway.close()
    atomic_write_jsonl(a.out, rows)
    endpoint = {}
    if "llm" in p:  # the ids the planner's endpoint served (pipeline/llm/endpoints.py)
        from pipeline.llm.endpoints import manifest_entry

        endpoint = manifest_entry(a.cache_dir, llm.resolve(job.spec.planner.model or llm.model or ""))
    batch = {"batch": a.batch} if a.batch else {}
    write_manifest(a.out, p, [*index_files(a.index_dir, p), questions_file], **endpoint, **batch)


def cmd_retrieve_crossfit(a) -> None:
    """Cross-fitted retrieval of a split, of one ``--batch`` of it, or its batches joined (``--questions
    QUESTIONS BATCH...``, as ``retrieve`` joins them): the whole job's manifest either way but the batch's."""
    from pipeline.io import atomic_write_bytes, atomic_write_jsonl
    from pipeline.provenance import write_manifest
    from pipeline.retrieve.batches import join_batches
    from pipeline.retrieve.crossfit import fold_jobs, retrieve_folds
    from pipeline.retrieve.run import RetrieveJob
    from pipeline.sprout.folds import export_folds

    p = json_arg(a.params)
    fold_files: dict[str, list[str]] = {}
    for name, path in (arg.split("=", 1) for arg in a.fold_index):  # repeated names: named_pairs keeps one
        fold_files.setdefault(name, []).append(path)
    if any(len(fs) != a.folds for fs in fold_files.values()):
        raise SystemExit(f"retrieve-crossfit: each --fold-index name needs {a.folds} files, in fold order")
    questions_file, questions, batches = split_questions(a, "retrieve-crossfit")
    folds = export_folds(a.export_dir, a.folds)
    if batches:
        atomic_write_bytes(a.out, join_batches(questions["id"], batches))
    else:
        jobs = fold_jobs(RetrieveJob.from_params(p, a.index_dir, a.cache_dir), fold_files, a.folds)
        atomic_write_jsonl(a.out, retrieve_folds(questions, jobs, folds))
    shared = [Path(a.index_dir) / f"{n}.sqlite" for n in sorted(p["indexes"]) if n not in fold_files]
    fold_paths = [Path(f) for fs in fold_files.values() for f in fs]
    gold = Path(a.export_dir) / "gold.jsonl"
    batch = {"batch": a.batch} if a.batch else {}
    write_manifest(
        a.out,
        p | {"cross_fit": {"folds": a.folds, "per_fold": folds.counts()}},
        [*shared, *fold_paths, questions_file, gold],
        **batch,
    )


def add_verbs(sub) -> None:
    """retrieve: one split's questions against a retrieval variant's indexes (an LLM planner too)."""
    s = verb(
        sub,
        "retrieve",
        cmd_retrieve,
        "one split's questions against a retrieval variant's indexes, whatever their kind (its ranked hits)",
        "--index-dir",
        "--params",
        "--cache-dir",
        "--out",
    )
    batch_args(s)
    llm_job_args(s)

    s = verb(
        sub,
        "retrieve-crossfit",
        cmd_retrieve_crossfit,
        "SproutRAG cross-fitting: each fold's questions against the indexes built with that fold's heads",
        "--index-dir",
        "--params",
        "--cache-dir",
        "--export-dir",
        "--out",
    )
    batch_args(s)
    s.add_argument("--folds", type=int, required=True, help="the number of folds (sprout.train.folds)")
    s.add_argument(
        "--fold-index",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a fold's index file for index NAME, repeated once per fold in fold order",
    )


def batch_args(s) -> None:
    """``--questions QUESTIONS [BATCH...]`` and ``--batch``: a split's retrieval whole, one batch of it, or its
    batches joined (both retrieve verbs, pipeline/workflow/query_batches.py)."""
    s.add_argument(
        "--questions",
        nargs="+",
        required=True,
        metavar=("QUESTIONS", "BATCH"),
        help="the split's question CSV (id, question, ...); after it, a batched split's batch retrievals "
        "(--batch), joined in query order instead of retrieving",
    )
    s.add_argument(
        "--batch",
        default=None,
        help="retrieve only this batch of the questions: <first>-<last> positions in file order (pipeline/shards.py)",
    )
