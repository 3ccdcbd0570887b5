"""the retrieval suite's export, evaluate and report verbs."""

from __future__ import annotations

import json

from pipeline.verbs.base import add_named_args, json_arg, named_pairs, verb


def cmd_suite_export(a) -> None:
    from pipeline.parse.benchmark import export_dataset

    p = json_arg(a.params)
    print(json.dumps(export_dataset(p["dataset"], p["root"], p["subset"], a.out_dir)))


def cmd_suite_evaluate(a) -> None:
    from pipeline.score.suite_evaluate import evaluate_suite_run

    print(json.dumps(evaluate_suite_run(a.retrieval, a.gold, a.out, a.per_query, a.ks)))


def cmd_suite_report(a) -> None:
    from pipeline.report.pages.suite import build_suite_report
    from pipeline.workflow.report_settings import suite_report_params

    build_suite_report(suite_report_params(json_arg(a.params)), named_pairs(a.scores), a.reports)


def add_verbs(sub) -> None:
    """the retrieval suite's export, evaluate and report verbs."""

    verb(
        sub,
        "suite-export",
        cmd_suite_export,
        "retrieval suite: one benchmark -> trees, queries, projected gold",
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

    s = sub.add_parser("suite-report", help="retrieval suite: metrics.csv, a figure per dataset, index.md")
    s.add_argument("--params", required=True)
    add_named_args(s, ("scores", "DATASET:VARIANT=JSON: the suite-evaluate scores of every run"))
    s.add_argument("--reports", required=True)
    s.set_defaults(fn=cmd_suite_report)
