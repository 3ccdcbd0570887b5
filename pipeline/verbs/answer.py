"""answer and what acts on answers: the ensemble's vote over its members, vote over submissions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pipeline.verbs.base import job_llm, json_arg, llm_job_args, log, named_pairs, verb

if TYPE_CHECKING:
    from pipeline.llm_models import LLMSpec
    from pipeline.registry.answer_backends import VariantSpec


def answer_job_llm(llm: dict, execution: dict, in_flight: int | None, spec: VariantSpec) -> LLMSpec:
    """The gateway settings of one answering job: :func:`job_llm` of the variant's model; the computed
    slice plus the execution-only settings for a backend without an LLM."""
    from pipeline.llm_models import LLMSpec
    from pipeline.registry.answer_backends import LLMCallsSpec, calls_llm

    if not isinstance(spec, LLMCallsSpec) or not calls_llm(spec.backend):
        return LLMSpec.from_slices(llm, execution)
    return job_llm(llm, execution, in_flight, spec.model)


def cmd_answer(a) -> None:
    import pandas as pd

    from pipeline.answer.run import AnswerJob, answer_split
    from pipeline.answer.submission import submission_frame, write_submission
    from pipeline.io import atomic_write_jsonl, read_jsonl
    from pipeline.paths import answers_telemetry
    from pipeline.provenance import write_manifest
    from pipeline.registry.answer_backends import calls_llm, variant_model, variant_spec

    p = json_arg(a.params)
    spec = variant_spec(p.get("name", "answering"), p["answering"])  # parsed once: the stage reads typed fields
    questions = pd.read_csv(a.questions, dtype=str, keep_default_na=False)
    meta = pd.read_csv(a.metadata, dtype=str, keep_default_na=False)
    job = AnswerJob(
        answer_job_llm(p.get("llm", {}), json_arg(a.llm_exec), a.in_flight, spec), a.cache_dir, set(meta["id"])
    )
    model = job.llm.resolve(variant_model(spec, job.llm.model)) if calls_llm(spec.backend) else None  # once
    answers = answer_split(read_jsonl(a.retrieval), questions, spec, job)
    if model is not None:
        from pipeline.answer.failures import check_failure_rate

        check_failure_rate(answers, model)  # raises before any output is written
    atomic_write_jsonl(a.out, answers)
    if job.telemetry:  # run-dependent (latency, cache hits): beside the results, like the manifest
        from pipeline.answer.llm_answer import telemetry_summary

        atomic_write_jsonl(answers_telemetry(a.out), job.telemetry)
        log.info("LLM telemetry: %s", json.dumps(telemetry_summary(job.telemetry)))
    write_submission(submission_frame(questions, answers, dict(zip(meta["id"], meta["url"]))), a.out_csv)
    failures = [r["id"] for r in answers if r.get("failure")]
    endpoint = {}
    if model is not None:  # the ids the model's endpoint served (pipeline/llm/endpoints.py)
        from pipeline.llm.endpoints import manifest_entry

        endpoint = manifest_entry(a.cache_dir, model)
    write_manifest(a.out, p, [a.retrieval, a.questions], failures=failures, **endpoint)
    if failures:
        log.warning("%d question(s) failed (recorded with reasons in %s): %s", len(failures), a.out, failures[:10])


def cmd_ensemble(a) -> None:
    """The ``ensemble`` backend: the members' answer records of one split voted into one."""
    import pandas as pd

    from pipeline.answer.ensemble import (
        EnsembleSpec,
        ensemble_records,
        ensemble_submission,
        member_from_records,
        vote_config,
        vote_members,
    )
    from pipeline.answer.submission import write_submission
    from pipeline.io import atomic_write_jsonl, read_jsonl
    from pipeline.provenance import write_manifest

    p = json_arg(a.params)
    spec = EnsembleSpec.from_dict(p["name"], p["answering"])
    members = named_pairs(a.member)
    if tuple(members) != spec.members:
        raise ValueError(f"ensemble members given {list(members)}, configured {list(spec.members)}")
    questions = pd.read_csv(a.questions, dtype=str, keep_default_na=False)
    meta = pd.read_csv(a.metadata, dtype=str, keep_default_na=False)
    urls = dict(zip(meta["id"], meta["url"]))
    runs = [member_from_records(n, read_jsonl(path), urls) for n, path in members.items()]
    voted = vote_members(runs, vote_config(spec.vote))
    records = ensemble_records(runs, voted)
    atomic_write_jsonl(a.out, records)
    write_submission(ensemble_submission(questions, records, voted, urls), a.out_csv)
    write_manifest(a.out, p, [*members.values(), a.questions])


def cmd_vote(a) -> None:
    """Any Kaggle submission CSVs voted into one (members in the order given)."""
    from pipeline.answer.ensemble import read_submission, vote_config, voted_submission
    from pipeline.answer.submission import write_submission
    from pipeline.answer.vote import VoteSettings

    settings = VoteSettings(a.mode, a.ignore_blank, a.tiebreak, a.normalise, True if a.kohaku_compat else None)
    cfg = vote_config(settings)
    df = voted_submission([read_submission(p) for p in a.csvs], cfg)
    write_submission(df, a.out)
    how = f"{cfg.mode}, KohakuRAG's vote" if a.kohaku_compat else cfg.mode
    print(
        f"{a.out}: {len(df)} questions voted from {len(a.csvs)} submissions ({how}), "
        f"{int((df['answer_value'] == 'is_blank').sum())} blank"
    )


def add_verbs(sub) -> None:
    """answer and what acts on answers: the ensemble's vote over its members, vote over submissions."""

    s = verb(
        sub,
        "answer",
        cmd_answer,
        "answer one split with one answering variant",
        "--retrieval",
        "--questions",
        "--metadata",
        "--params",
        "--cache-dir",
        "--out",
        "--out-csv",
    )
    llm_job_args(s)

    s = verb(
        sub,
        "ensemble",
        cmd_ensemble,
        "vote the answer files of an ensemble variant's members (the DAG's node)",
        "--questions",
        "--metadata",
        "--params",
        "--out",
        "--out-csv",
    )
    s.add_argument("--member", action="append", required=True, help="VARIANT=ANSWERS.jsonl, in member order")

    _add_vote_verb(sub)


def _add_vote_verb(sub) -> None:
    """vote: any submission CSVs voted into one, wattbench's rules or KohakuRAG's."""
    from pipeline.answer.vote import TIEBREAKS, VOTE_MODES, VoteSettings
    from pipeline.config_schema import declared_defaults

    vote = declared_defaults(VoteSettings)  # a variant's vote defaults, as declared

    s = verb(sub, "vote", cmd_vote, "vote Kaggle submission CSVs into one (cross-run ensemble, KohakuRAG's modes)")
    s.description = (
        "Vote Kaggle submission CSVs (any runs, yours or other people's) into one per question id. By "
        "default with wattbench's rules; with --kohaku-compat with KohakuRAG's scripts/wattbot_aggregate.py, "
        "whose rows it gives (docs/ensembles.md)."
    )
    s.add_argument("--out", required=True, help="the voted submission CSV to write (9 Kaggle columns)")
    s.add_argument("csvs", nargs="+", metavar="CSV", help="submissions, in member order (ties go to the first)")
    s.add_argument(
        "--mode",
        default=vote["mode"],
        choices=VOTE_MODES,
        help="how the refs are chosen (docs/ensembles.md): majority over every row (independent), the ref "
        "list first (ref_priority), among the winning value's rows (answer_priority), their "
        "union or intersection",
    )
    s.add_argument(
        "--ignore-blank", action="store_true", help="drop is_blank votes when any member answered (default: keep)"
    )
    s.add_argument(
        "--tiebreak",
        default=vote["tiebreak"],
        choices=TIEBREAKS,
        help="first: a tie goes to the earliest member; blank: every member differs -> blank",
    )
    s.add_argument(
        "--normalise",
        action="store_true",
        help="compare normalised values (13900 == 13900.0) instead of exact stripped strings",
    )
    s.add_argument(
        "--kohaku-compat",
        action="store_true",
        help="KohakuRAG's own vote (scripts/wattbot_aggregate.py): its values, refs and base rows, the refs of "
        "all-blank questions combined too, ids sorted (default: wattbench's vote)",
    )
