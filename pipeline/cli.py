"""python -m pipeline <verb>: one verb per stage, used by the Snakemake rules and by people.

The verbs live in pipeline/verbs/, one module per group; this module assembles them into one
parser whose ``--help`` lists the verbs people run first and the verbs the rules call apart.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import textwrap

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pipeline.register_builtins  # noqa: E402, F401 - registers the built-in index and planner kinds
from pipeline.verbs import (  # noqa: E402
    answer,
    grid,
    index,
    inputs,
    kept_runs,
    models,
    report,
    retrieve,
    score,
    spend,
    suite,
    tools,
)
from pipeline.verbs.base import VerbParser, VerbsAction, current_verb, named_pairs, renamed_verbs_line  # noqa: E402

_named = named_pairs  # the name tests and older callers use

# Each group's add_verbs registers its verbs; a new verb goes into the module of its group.
GROUPS = (inputs, index, retrieve, answer, models, spend, score, report, kept_runs, suite, tools, grid)

# The verbs people run by hand, in the order --help lists them; every other verb is listed apart,
# as one the Snakemake rules (pipeline/rules/*.smk) or the Makefile call.
USER_VERBS = (
    "vote",
    "score",
    "estimate",
    "cost",
    "export-replay",
    "parse",
    "corpus-ingest",
    "list",
    "config",
    "plugins",
    "fetch",
    "bench",
    "readme",
    "summary",
    "compare",
    "runs",
    "time-table",
    "job-lengths",
    "track",
    "report-check",
    "quality-pdfs",
    "standin",
)


def _verb_list(title: str, names: list[str], helps: dict[str, str]) -> str:
    width = max(len(n) for n in names) + 4
    lines = [f"{title}:"]
    for n in names:
        text = textwrap.wrap(helps[n], 100 - width) or [""]
        lines += [f"  {n.ljust(width - 2)}{text[0]}", *(" " * width + t for t in text[1:])]
    return "\n".join(lines)


def verb_sections(sub: argparse._SubParsersAction) -> str:
    """The two verb lists of the top-level ``--help``: people's verbs, then the rules' verbs."""
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    user = [n for n in USER_VERBS if n in helps]
    rules = [n for n in helps if n not in user]
    return (
        _verb_list("verbs to run by hand", user, helps)
        + "\n\n"
        + _verb_list("steps the Snakemake rules call (one DAG job each; rarely run by hand)", rules, helps)
        + "\n\n`python -m pipeline <verb> --help` explains a verb and its options. "
        + renamed_verbs_line()
    )


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m pipeline",
        usage="python -m pipeline [-h] [-v] <verb> [options]",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.register("action", "parsers", VerbsAction)
    ap.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    sub = ap.add_subparsers(
        dest="verb",
        required=True,
        metavar="<verb>",
        help=argparse.SUPPRESS,
        parser_class=VerbParser,
        prog="python -m pipeline",
    )
    for group in GROUPS:
        group.add_verbs(sub)
    ap.epilog = verb_sections(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(current_verb(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        args.fn(args)
    except (ValueError, FileNotFoundError) as exc:  # bad input: one clear line, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
