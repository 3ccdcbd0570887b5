"""Snakemake's ``onsuccess`` and ``onerror`` hooks: parse failures repeated last, the run telemetry
beside the leaderboard, the run's summary, the run kept under runs/<id>/; or the failed jobs and the
command that resumes."""

from __future__ import annotations

from pathlib import Path

from pipeline import paths


def after_run(cfg: dict) -> None:
    """Snakemake's ``onsuccess`` hook (not in a dry run): the run's header on every report page, also those
    whose rule was up to date (pipeline/report/header.py), documents that could not be parsed, repeated
    last, the run telemetry beside the leaderboard, once the figures rule has written cost.csv, and the
    run's summary (pipeline/report/summary.py: printed last and written to reports/summary.json), and
    the run kept under runs/<id>/, except under make run / make resume (``LATER``), whose last step keeps it."""
    import os

    from pipeline.report.header import RunHeader, restamp
    from pipeline.report.summary import LATER, write_summary

    restamp(paths.reports.root, RunHeader.of("."))

    for dataset in [paths.WATTBOT, *sorted(cfg.get("corpora") or {})]:
        report_parse_failures(paths.parse_errors(dataset))
    if Path(paths.reports.cost).exists():
        from pipeline.report.telemetry.cost import leaderboard_telemetry

        split = cfg["wattbot"]["score_split"]
        avs = sorted(cfg["answering"])
        leaderboard_telemetry(
            paths.reports.cost,
            {v: paths.answers(v, split) for v in avs},
            {v: paths.answer_benchmark(v, split) for v in avs},
            paths.reports.leaderboard_telemetry,
        )
    write_summary(".", paths.reports.root, show=not os.environ.get(LATER))
    if os.environ.get(LATER):  # make run / make resume keep the run last (`summary --keep`), with every step's reports
        return
    from pipeline.workflow.kept import keep_this_run

    kept = keep_this_run(cfg, paths.reports.root, this_process=True)
    if kept:
        print(f"Kept: {kept}/ (python -m pipeline compare <an earlier run> {kept.name})")


def after_error(snakemake_log: str | list | None) -> None:
    """Snakemake's ``onerror`` hook: the failed jobs, their logs' last lines, and the command that resumes."""
    import os
    import sys

    from pipeline.report.summary import LATER, failure_message, resume_command

    resume = resume_command(sys.argv, under_make=bool(os.environ.get(LATER)))
    print(failure_message(snakemake_log, resume=resume), file=sys.stderr)


def report_parse_failures(errors_csv: str) -> list[str]:
    """The end-of-run report: one line per document that could not be parsed (printed, and returned)."""
    import csv
    import sys

    path = Path(errors_csv)
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        lines = [f"parse failed: {r['doc']} ({r['source']}): {r['reason']}" for r in csv.DictReader(fh)]
    if lines:
        print(f"{len(lines)} document(s) could not be parsed (see {errors_csv}):", *lines, sep="\n", file=sys.stderr)
    return lines
