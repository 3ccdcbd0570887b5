"""retrieve: one split's questions against a retrieval variant's indexes (an LLM planner too)."""

from __future__ import annotations

from pathlib import Path

from pipeline.verbs.base import job_llm, json_arg, llm_job_args, verb


def cmd_retrieve(a) -> None:
    from pipeline.io import atomic_write_jsonl, read_csv_columns
    from pipeline.provenance import write_manifest
    from pipeline.retrieve.run import RetrieveJob, retrieve

    p = json_arg(a.params)
    job = RetrieveJob.from_params(p, a.index_dir, a.cache_dir)  # the params parsed once: the stage reads the job
    questions = read_csv_columns(a.questions)  # not pandas: its import is a third of a small job's CPU
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
    indexes = [Path(a.index_dir) / f"{n}.sqlite" for n in sorted(p["indexes"])]
    write_manifest(a.out, p, [*indexes, a.questions], **endpoint)


def add_verbs(sub) -> None:
    """retrieve: one split's questions against a retrieval variant's indexes (an LLM planner too)."""
    s = verb(
        sub,
        "retrieve",
        cmd_retrieve,
        "one split's questions against a retrieval variant's indexes, whatever their kind (its ranked hits)",
        "--index-dir",
        "--questions",
        "--params",
        "--cache-dir",
        "--out",
    )
    llm_job_args(s)
