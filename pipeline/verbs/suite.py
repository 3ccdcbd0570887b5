"""the retrieval suite's export, evaluate and report verbs."""

from __future__ import annotations

import json

from pipeline.verbs.base import add_named_args, config_args, config_files, config_overrides, json_arg, named_pairs, verb


def cmd_suite_export(a) -> None:
    from pipeline.parse.suite_export import export_dataset

    p = json_arg(a.params)
    print(json.dumps(export_dataset(p["dataset"], p["root"], p["subset"], a.out_dir)))


def cmd_suite_evaluate(a) -> None:
    from pipeline.score.suite_evaluate import evaluate_suite_run

    print(json.dumps(evaluate_suite_run(a.retrieval, a.gold, a.out, a.per_query, a.ks)))


def cmd_suite_report(a) -> None:
    from pipeline.report.pages.suite import build_suite_report
    from pipeline.workflow.report_settings import suite_report_params

    build_suite_report(suite_report_params(json_arg(a.params)), named_pairs(a.scores), a.reports)


def cmd_suite_power(a) -> None:
    from pathlib import Path

    from pipeline.report.pages.suite_power import best_of_choices, write_power

    inputs = power_inputs(a)
    table = write_power(inputs, Path(a.reports))
    print(table.to_string(index=False) if len(table) else "no suite dataset with sprout and a baseline scored")
    choices = best_of_choices(inputs)
    if len(choices):  # on the pilot: each best_of claim's control per dataset (claims.yaml control.chosen)
        print("best_of controls on this run (claims.yaml control.chosen, when run on the pilot):")
        print(choices.to_string(index=False))


def power_inputs(a):
    """The power table's inputs from a verb's ``--root`` and ``--config`` (``suite-power``, ``time-table``)."""
    from pipeline.config import load_config
    from pipeline.workflow.report_settings import power_inputs as of_config

    files = config_files(a)
    return of_config(load_config(files, config_overrides(a.set)), a.root, files)


def add_verbs(sub) -> None:
    """the retrieval suite's export, evaluate and report verbs."""

    verb(
        sub,
        "suite-export",
        cmd_suite_export,
        "retrieval suite: one suite dataset -> trees, queries, projected gold",
        "--params",
        "--out-dir",
    )

    s = verb(
        sub,
        "suite-evaluate",
        cmd_suite_evaluate,
        "retrieval suite: IE@k and friends for one retrieval run",
        "--retrieval",
        "--gold",
        "--out",
        "--per-query",
    )
    s.add_argument("--ks", type=int, nargs="+", default=[1, 3, 5], help="the k of each @k metric")

    s = verb(
        sub,
        "suite-power",
        cmd_suite_power,
        "retrieval suite: per dataset, n, the spread of sprout - best baseline (claim sprout-ie), the n needed "
        "for the published effect at 80% power, the effect detectable at n, CPU-s: "
        "reports/retrieval/power.telemetry.csv (size the suite datasets from a pilot run: config.pilot.yaml)",
    )
    s.add_argument("--root", default=".", help="the Snakemake working directory (results/, benchmarks/)")
    s.add_argument("--reports", default="reports")
    config_args(s)  # the run's config: its suite datasets

    s = sub.add_parser("suite-report", help="retrieval suite: metrics.csv, a figure per dataset, index.md")
    s.add_argument("--params", required=True)
    add_named_args(s, ("scores", "DATASET:VARIANT=JSON: the suite-evaluate scores of every run"))
    s.add_argument("--reports", required=True)
    s.set_defaults(fn=cmd_suite_report)
