"""report, figures, readme, time-table, report-check, parse-quality: from results/ (and PDFs) to reports/."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.verbs.base import add_named_args, config_args, config_files, config_overrides, json_arg, named_pairs, verb


def cmd_report(a) -> None:
    from pipeline.report.pages.leaderboard import ReportInputs, build_reports
    from pipeline.workflow.report_settings import report_params

    inputs = ReportInputs(
        named_pairs(a.scores),
        named_pairs(a.per_question),
        named_pairs(a.submissions),
        named_pairs(a.retrieval),
        a.gold,
        named_pairs(a.split_scores),
        named_pairs(a.split_per_question),
    )
    build_reports(report_params(json_arg(a.params)), inputs, a.reports)


def cmd_corpus_report(a) -> None:
    from pipeline.report.pages.corpus import CorpusReportInputs, build_corpus_report
    from pipeline.workflow.report_settings import corpus_report_params

    inputs = CorpusReportInputs(
        named_pairs(a.answers), named_pairs(a.submissions), named_pairs(a.scores), named_pairs(a.per_question)
    )
    print(json.dumps(build_corpus_report(corpus_report_params(json_arg(a.params)), inputs, a.reports)))


def cmd_figures(a) -> None:
    from pipeline.report.pages.figures import SplitFiles, build_figures_stage
    from pipeline.report.pages.split_blocks import by_split
    from pipeline.report.stats.ablation import InputFiles
    from pipeline.workflow.report_settings import figures_params

    files = InputFiles(
        named_pairs(a.scores),
        named_pairs(a.per_question),
        named_pairs(a.answers),
        named_pairs(a.retrieval),
        named_pairs(a.suite),
        named_pairs(a.index),
        named_pairs(a.corpora),
        suite_run_of=named_pairs(a.suite_run),
        suite_gold_of=named_pairs(a.suite_gold),
    )
    params = figures_params({**json_arg(a.params), "gold": a.gold})  # the manifests record gold too
    labels, pq, ans, rv = (
        named_pairs(a.labels),
        by_split(named_pairs(a.split_per_question)),
        by_split(named_pairs(a.split_answers)),
        by_split(named_pairs(a.split_retrieval)),
    )
    splits = {
        s: SplitFiles(
            InputFiles(per_question_of=pq.get(s, {}), answers_of=ans.get(s, {}), retrieval_of=rv.get(s, {})), labels[s]
        )
        for s in labels
    }
    print(json.dumps(build_figures_stage(params, files, a.reports, a.leaderboard, a.claims, splits)))


def cmd_claims_register(a) -> None:
    from pipeline.provenance import git_commit
    from pipeline.report.claims.registration import write_registration

    reg = write_registration(a.claims, a.commit or git_commit(), a.out)
    print(json.dumps({"commit": reg["commit"], "claims_sha256": reg["claims_sha256"], "claims": len(reg["claims"])}))


def cmd_readme(a) -> None:
    from pipeline.publish.readme import write_run_readme

    if a.out:
        print(f"wrote {write_run_readme(Path(a.repo), Path(a.reports), Path(a.out))} (README.md and docs/ unchanged)")
        return
    from pipeline.publish.readme_check import check_docs
    from pipeline.publish.readme_runs import load_runs, render_docs, shared_commit

    runs = load_runs(named_pairs(a.run)) if a.run else {}
    if not a.check:
        if not runs and not a.bench:
            raise ValueError(
                'readme: name the kept runs: --run default=runs/<id> --run claims=runs/<id> (make readme RUNS="...")'
                "; --bench reports for the measurement blocks; make run writes its own blocks to reports/README.md"
            )
        done = render_docs(Path(a.repo), runs, Path(a.bench) if a.bench else None)
        print("\n".join(f"rendered {p}" for p in done.changed) or "generated blocks already up to date")
        if done.left:
            print("left as they are (no --run, no --bench, or not in the --bench folder): " + ", ".join(done.left))
    problems = check_docs(Path(a.repo), shared_commit(runs) if runs else None)
    print(
        "\n".join(problems)
        or 'readme check: every result block is stamped by a kept run of one commit; no "not run" row'
    )
    if problems:
        raise SystemExit(1)


def cmd_summary(a) -> None:
    from pipeline.report.summary import write_summary

    s = write_summary(a.root, a.reports)
    if a.keep and s.get("nothing_to_do"):  # the last run, kept when it ended, stays as it was
        print("Kept: nothing new (no job ran; python -m pipeline runs list shows the last run kept)")
    elif a.keep:  # make run / make resume: last, once every step has added to reports/
        from pipeline.config import load_config
        from pipeline.workflow.kept import keep_this_run

        kept = keep_this_run(load_config(config_files(a), config_overrides(a.set)), a.reports)
        print(
            f"Kept: {kept}/ (python -m pipeline compare <an earlier run> {kept.name})"
            if kept
            else "Kept: nothing (no logs/run.json)"
        )


def cmd_time_table(a) -> None:
    from pipeline.config import load_config
    from pipeline.report.pages.suite_power import write_power
    from pipeline.report.telemetry.energy import SUMMARY, energy_line, write_energy
    from pipeline.report.telemetry.time_table import PAGE, TABLE, write_time_table
    from pipeline.workflow.report_settings import energy_inputs, power_inputs

    table = write_time_table(Path(a.root), Path(a.reports))
    print(table.to_string(index=False) if len(table) else "no benchmark files")
    print(f"wrote {Path(a.reports) / TABLE} and {Path(a.reports) / PAGE}")
    cfg = load_config(config_files(a), config_overrides(a.set))
    energy = write_energy(Path(a.root), Path(a.reports), energy_inputs(cfg))
    print(f"{energy_line(energy)}; wrote {Path(a.reports) / SUMMARY}")
    power = write_power(power_inputs(cfg, a.root, config_files(a)), Path(a.reports))  # the suite by power (#33)
    print(f"suite power: {len(power)} datasets; wrote {Path(a.reports) / 'retrieval/power.telemetry.csv'}")
    from pipeline.workflow.dag_record import write_dag_report

    if dag := write_dag_report(Path(a.root), Path(a.reports)):  # kept with the run: `makespan` replays it
        print(f"wrote {dag}: the run's DAG with each job's wall seconds")


def cmd_job_lengths(a) -> None:
    from pipeline.workflow.critical_path import SHIPPED, write_shipped

    out = Path(a.out) if a.out else SHIPPED
    n = write_shipped(Path(a.root), out, a.source, a.keep)
    print(
        f"wrote {out}: the wall seconds of {n} jobs from {Path(a.root) / 'benchmarks'} (the critical path's expected lengths)"
    )


def cmd_track(a) -> None:
    from pipeline.config import load_config
    from pipeline.tracking import require_mlflow, track, tracked_line
    from pipeline.workflow.report_settings import track_settings

    cfg = load_config(config_files(a), config_overrides(a.set))
    if a.uri:
        cfg["tracking"] = {**(cfg.get("tracking") or {}), "mlflow": a.uri}
    if a.experiment:
        cfg["tracking"] = {**(cfg.get("tracking") or {}), "experiment": a.experiment}
    settings = track_settings(cfg)
    if settings.tracking is None:
        if not a.if_configured:
            print("no tracking configured (config key tracking.mlflow, or --uri): nothing logged")
        return
    tracking = require_mlflow(settings.tracking)
    assert tracking is not None
    print(tracked_line(*track(a.root, a.reports, settings, tracking), tracking))


def cmd_report_check(a) -> None:
    from pipeline.report.render.browser import VIEWPORT, inspect_page, problems

    found = problems(inspect_page(Path(a.html), Path(a.screenshot) if a.screenshot else None))
    print("\n".join(found) or f"{a.html}: reads well at {VIEWPORT[0]}x{VIEWPORT[1]} (screenshot: {a.screenshot})")
    if found:
        raise ValueError(f"{a.html}: {len(found)} problem(s) in the browser")


def cmd_parse_quality(a) -> None:
    """``quality.csv`` + ``quality_sources.csv`` over the manifest's documents (or every PDF in a folder)."""
    from pipeline.io import atomic_write_text
    from pipeline.parse.errors import errors_csv
    from pipeline.parse.quality_pdfs import Entry, load_manifest, select
    from pipeline.provenance import write_manifest
    from pipeline.report.pages.parse_quality import write_report

    folder = Path(a.pdfs)
    if a.manifest:
        entries = [e for e in select(load_manifest(a.manifest), a.scope) if (folder / f"{e.doc}.pdf").exists()]
    else:  # a folder of one's own PDFs: one source, measured against each PDF's outline
        entries = [Entry(p.stem, "local", "dev", "", "", p.name, "", 1, 0, False) for p in sorted(folder.glob("*.pdf"))]
    if not entries:
        raise ValueError(f"{a.pdfs}: no PDFs; run `make quality-pdfs` to download the parse-quality PDFs")
    summary = write_report(folder, entries, a.out, jobs=a.jobs)
    atomic_write_text(a.errors, errors_csv(summary.pop("errors")))
    pdfs = [folder / f"{e.doc}.pdf" for e in entries]
    write_manifest(a.out, {"scope": a.scope, "pdfs": [p.name for p in pdfs]}, [str(p) for p in pdfs])
    print(json.dumps({**summary, "out": a.out}))


def add_verbs(sub) -> None:
    """report, figures, readme, time-table, report-check, parse-quality: from results/ (and PDFs) to reports/."""
    from pipeline.paths import CLAIMS_FILE, reports

    s = sub.add_parser("report", help="leaderboard, submissions, figures, reports/index.md")
    s.add_argument("--params", required=True)
    add_named_args(
        s,
        ("scores", "VARIANT=JSON: the evaluate stage's scores, per answering variant"),
        ("per-question", "VARIANT=CSV: its per-question scores (the score intervals)"),
        ("submissions", "VARIANT=CSV: the test split's answers, copied as Kaggle submissions"),
        ("retrieval", "VARIANT=JSONL: retrieval runs of the scored split (for retrieval.csv)"),
        ("split-scores", "SPLIT:VARIANT=JSON: scores on another labelled split (wattbot.solutions: a block each)"),
        ("split-per-question", "SPLIT:VARIANT=CSV: their per-question scores (the block's intervals)"),
    )
    s.add_argument("--reports", required=True)
    s.add_argument("--gold", help="the labelled split's CSV")
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("figures", help="ablations with intervals, attribution, cost, embedding map, reports/index.html")
    s.add_argument("--params", required=True)
    s.add_argument("--gold", required=True, help="the labelled split's CSV")
    add_named_args(
        s,
        ("scores", "VARIANT=JSON per answering variant"),
        ("per-question", "VARIANT=CSV per answering variant"),
        ("answers", "VARIANT=JSONL per answering variant (the scored split)"),
        ("retrieval", "VARIANT=JSONL per retrieval variant (the scored split)"),
        ("suite", "DATASET:VARIANT=CSV: the retrieval suite's per-query scores"),
        ("suite-run", "DATASET:VARIANT=JSONL: the retrieval suite's runs (identical outputs in the claims table)"),
        ("suite-gold", "DATASET=JSONL: a suite dataset's gold spans (each query's documents: the claims' units)"),
        ("index", "NAME=SQLITE: the index the embedding map draws"),
        ("corpora", "NAME=CSV: a corpus's leaderboard (a section of the page each; corpora: in the config)"),
        ("split-per-question", "SPLIT:VARIANT=CSV: per-question scores on another labelled split (its claims rows)"),
        ("split-answers", "SPLIT:VARIANT=JSONL: answers on another labelled split (identical outputs there)"),
        ("split-retrieval", "SPLIT:VARIANT=JSONL: retrieval runs on another labelled split"),
        ("labels", "SPLIT=CSV: that split's labels (wattbot.solutions)"),
    )
    s.add_argument("--leaderboard", default=None, help="the report rule's leaderboard.csv (the page's table)")
    s.add_argument("--claims", default=str(CLAIMS_FILE), help="the published claims to measure")
    s.add_argument("--reports", default=reports.root)
    s.set_defaults(fn=cmd_figures)

    _add_claims_register(sub)

    s = sub.add_parser(
        "readme",
        help="fill the generated blocks of README.md and docs/*.md from kept runs of one commit, or check them",
    )
    s.add_argument(
        "--run",
        action="append",
        metavar="ROLE=RUN",
        help="a kept run (runs/<id>, its id, or latest) per role: default (make run: README.md) and claims "
        "(make run CONFIG=config.claims.yaml: docs/results.md); made at one commit",
    )
    s.add_argument("--bench", help="a reports folder whose bench/ and parsing/ files render the measurement blocks")
    s.add_argument("--check", action="store_true", help="only check README.md and docs/ (exit 1 on a problem)")
    s.add_argument("--reports", default=reports.root, help="with --out: the reports folder of the run")
    s.add_argument("--repo", default=".", help="the checkout whose README.md and docs/*.md to update")
    s.add_argument(
        "--out",
        default=None,
        help="write the blocks the run of --reports renders to this file instead (make run: reports/README.md)",
    )
    s.set_defaults(fn=cmd_readme)
    _add_run_end(sub)

    s = sub.add_parser("report-check", help="open reports/index.html in headless Chromium, check it, screenshot it")
    s.add_argument("--html", default=reports.index_html, help="the report page to check")
    s.add_argument("--screenshot", default=reports.screenshot, help="PNG of the first screen (1400x900)")
    s.set_defaults(fn=cmd_report_check)
    _add_parse_quality(sub)
    _add_corpus_report(sub)


def _add_claims_register(sub) -> None:
    from pipeline.paths import CLAIMS_FILE, REGISTRATION_FILE

    s = verb(
        sub,
        "claims-register",
        cmd_claims_register,
        "register the claims: the commit, the claims file's sha256 and one fingerprint per claim "
        "(pipeline/report/claims/registration.yaml); a later change reads 'deviates from registration'",
    )
    s.add_argument("--claims", default=str(CLAIMS_FILE), help="the claims file as committed")
    s.add_argument("--commit", default=None, help="the commit it is registered at (default: HEAD)")
    s.add_argument("--out", default=str(REGISTRATION_FILE), help="the registration file to write")


def _add_corpus_report(sub) -> None:
    s = sub.add_parser("corpus-report", help="a corpus's leaderboard and Kaggle submission (reports/<name>/)")
    s.add_argument("--params", required=True, help="the rule's params: corpus, labelled, variants, report")
    add_named_args(
        s,
        ("answers", "VARIANT=JSONL: its answers on the corpus's questions (answered and blank counts)"),
        ("submissions", "VARIANT=CSV: its Kaggle-format answers (the submission variant's is copied)"),
        ("scores", "VARIANT=JSON: the evaluate stage's scores (labelled corpora)"),
        ("per-question", "VARIANT=CSV: its per-question scores (the score intervals)"),
        ("parse-check", "NAME=JSON: the corpus's parse check (a rule input: parsing.strict fails there)"),
    )
    s.add_argument("--reports", required=True)
    s.set_defaults(fn=cmd_corpus_report)


def _add_run_end(sub) -> None:
    """summary, time-table, job-lengths, track: what make run calls once the DAG is done (run telemetry, tracking)."""
    from pipeline.paths import reports

    s = verb(
        sub,
        "summary",
        cmd_summary,
        "the run's summary: leaderboard top, submission, claims, what needs a look, time; reports/summary.json",
    )
    s.add_argument("--root", default=".", help="the Snakemake working directory (benchmarks/, results/)")
    s.add_argument("--reports", default=reports.root, help="the run's reports folder")
    s.add_argument(
        "--keep",
        action="store_true",
        help="then keep the run of logs/run.json under runs/<id>/: its reports and per-question scores "
        "(make run and make resume do, last)",
    )
    config_args(s)  # with --keep: the run's config (what it scored, against which gold files)

    s = verb(
        sub,
        "time-table",
        cmd_time_table,
        "wall and CPU seconds per rule from benchmarks/*.tsv: reports/time.telemetry.{csv,png,html}, and the "
        "energy estimate per variant: reports/energy.telemetry.{csv,json} (run telemetry)",
    )
    s.add_argument("--root", default=".", help="the Snakemake working directory holding benchmarks/")
    s.add_argument("--reports", default=reports.root)
    config_args(s)  # the run's config: its energy constants and which model each answering variant calls

    s = verb(
        sub,
        "job-lengths",
        cmd_job_lengths,
        "refresh the expected job lengths the critical-path priorities start from "
        "(pipeline/workflow/job_lengths.json) from a cold run's benchmarks/*.tsv",
    )
    s.add_argument(
        "--root", default=".", help="the Snakemake working directory holding benchmarks/ (a cold default run)"
    )
    s.add_argument("--out", default=None, help="where to write (default: the shipped table)")
    s.add_argument("--source", required=True, help="what run this is: the config, commit and CPU (kept in the file)")
    s.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="JOB",
        help="keep this job's length from the table being replaced (a job the run found done, e.g. llm_runtime "
        "with the llama-cpp-python wheel cached); repeatable",
    )

    s = verb(
        sub,
        "track",
        cmd_track,
        "log the run to MLflow (config tracking.mlflow): one run per answering and retrieval variant with its "
        "params, scores and intervals, cost, time and the report; nothing without a tracking config",
    )
    s.add_argument("--root", default=".", help="the Snakemake working directory (results/, benchmarks/, logs/run.json)")
    s.add_argument("--reports", default=reports.root, help="the run's reports folder")
    config_args(s)  # the run's config: its tracking block, score split, variants and bootstrap settings
    s.add_argument("--uri", default=None, help="MLflow tracking URI, instead of the config's tracking.mlflow")
    s.add_argument("--experiment", default=None, help="MLflow experiment, instead of tracking.experiment")
    s.add_argument(
        "--if-configured",
        action="store_true",
        help="say nothing when the config has no tracking block (make run and make resume call it so)",
    )


def _add_parse_quality(sub) -> None:
    """parse-quality: the parse stage measured on real PDFs, reported (pipeline/report/pages/parse_quality.py)."""
    from pipeline.parse.quality_pdfs import SCOPES

    s = sub.add_parser("parse-quality", help="parse-quality report (per document and per source) over real PDFs")
    s.add_argument("--pdfs", required=True, help="folder of <doc>.pdf (+ <doc>.toc.json), as `quality-pdfs` writes it")
    s.add_argument(
        "--manifest",
        default=None,
        help="the parse-quality PDFs' manifest (sources, roles); without it every PDF in --pdfs",
    )
    s.add_argument("--scope", default="all", choices=SCOPES, help="manifest rows to measure")
    s.add_argument("--out", required=True, help="the quality CSV to write (per document and per source)")
    s.add_argument("--errors", required=True, help="the errors.csv of the documents that failed to parse")
    s.add_argument("--jobs", type=int, default=1, help="documents parsed in parallel")
    s.set_defaults(fn=cmd_parse_quality)
