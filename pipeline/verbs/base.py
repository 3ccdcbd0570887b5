"""What every verb module shares: argument parsing helpers and the help layout.

Rules pass the config slice that shapes an output as JSON (``--params``), so Snakemake tracks it
and a changed parameter reruns exactly that branch; files a report verb reads come as repeatable
``--KIND NAME=PATH`` arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

log = logging.getLogger("wattbench")

# Help of the flags many verbs take, used where a verb lists a flag as required without its own text.
COMMON_HELP = {
    "--params": "the config slice that shapes this output, as JSON (the Snakemake rule passes it; "
    "a changed value reruns exactly this branch)",
    "--cache-dir": "the content-addressed embedding and LLM cache folder (config cache_dir)",
    "--out": "the file to write (atomically, with a manifest beside it where it is a result)",
    "--out-csv": "the Kaggle-format submission CSV to write",
    "--out-dir": "the folder to write",
    "--questions": "the split's question CSV (id, question, ...)",
    "--metadata": "the WattBot metadata CSV (id, url, title, ...)",
    "--metadata-out": "the clean UTF-8 copy of --metadata to write",
    "--retrieval": "the retrieval run (JSONL) of this split",
    "--trees": "a folder of DocTree JSONs or a comma-separated list of them",
    "--index-dir": "the folder of the dataset's index files (<name>.sqlite)",
    "--gold": "the gold file (qrels) of the run",
    "--per-query": "the per-query scores CSV to write",
    "--export-dir": "the suite dataset's export (trees/, queries.csv, gold.jsonl): its cross-fitting folds",
    "--dataset": "the suite dataset (a suite.datasets name)",
    "--pairs": "the cached attention pairs the sprout-train-pairs verb wrote",
    "--work-dir": "a scratch folder for the per-dataset training data",
    "--status": "the download status JSON to write (one entry per document)",
    "--reports": "the reports folder (reports/ of the run)",
    "--sizes": "the dataset's document sizes (the doc-sizes verb's CSV): what its shards are cut from",
    "--windows": "the dataset's SproutRAG window plan (the sprout-windows verb's JSON)",
    "--shard": "a shard's id: <first>-<last> positions in the sizes file's document order (pipeline/shards.py)",
}

if TYPE_CHECKING:
    from pipeline.llm_models import LLMSpec

# Verbs renamed to the glossary's words (docs/architecture.md#glossary): old name -> new. The old name still
# works, with a one-line notice, so no script or habit breaks.
RENAMED_VERBS = {"parse-corpus": "quality-pdfs"}


def renamed_verbs_line() -> str:
    """The top-level ``--help``'s line on the renamed verbs."""
    pairs = ", ".join(f"{old} -> {new}" for old, new in RENAMED_VERBS.items())
    return f"Renamed verbs (the old name still works, with a notice): {pairs}."


def current_verb(argv: list[str]) -> list[str]:
    """``argv`` with a renamed verb's old name replaced by its new one, said on stderr in one line. The verb is
    the first argument that is no option (the top-level options, -h and -v, take no value)."""
    for i, arg in enumerate(argv):
        if arg.startswith("-"):
            continue
        if arg in RENAMED_VERBS:
            new = RENAMED_VERBS[arg]
            print(
                f"note: verb '{arg}' is now '{new}' (docs/architecture.md#glossary); the old name still works",
                file=sys.stderr,
            )
            return [*argv[:i], new, *argv[i + 1 :]]
        break
    return argv


def config_args(s: argparse.ArgumentParser) -> None:
    """``--config FILE...`` and ``--set k=v``: the config as Snakemake's ``--configfile FILE...`` and
    ``--config k=v`` give it (the files merged in order, the overrides on top)."""
    s.add_argument(
        "--config",
        nargs="+",
        default=[],
        metavar="FILE",
        help="config files merged in order, as snakemake --configfile (each with the files its extends: "
        "names; default: config.yaml)",
    )
    s.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override on top, as snakemake --config: a value as in a config file (YAML), a dotted key "
        "for a nested one, e.g. data_root=/my/copy, llm.concurrency=8, answering.llm-cf=null (repeatable)",
    )


def config_files(a: argparse.Namespace) -> list[str]:
    """The ``--config`` files of a verb, ``config.yaml`` when none is named (as snakemake without --configfile)."""
    from pipeline.config import DEFAULT_CONFIG

    return list(a.config) or [DEFAULT_CONFIG]


def config_overrides(pairs: list[str]) -> dict:
    """``--set k=v`` pairs as the Snakefile reads ``--config k=v``: a value typed as in a config file (YAML),
    a dotted key (``llm.concurrency=8``) merged into its table (pipeline/config/overrides.py)."""
    from pipeline.config.overrides import parse_overrides

    return parse_overrides(pairs)


def json_arg(text: str) -> dict:
    return json.loads(text)


def named_pairs(pairs: list[str] | None) -> dict[str, str]:
    """``NAME=PATH`` arguments (repeatable) as a dict, in the order given."""
    return dict(p.split("=", 1) for p in pairs or [])


def tree_paths(arg: str) -> list[str]:
    return sorted(str(x) for x in Path(arg).glob("*.json")) if Path(arg).is_dir() else arg.split(",")


def verb(sub, name: str, fn, help: str, *required: str) -> argparse.ArgumentParser:
    """One subcommand: the function it runs, its help line (also its ``--help`` description) and
    its required flags (the other arguments are added to the parser it returns)."""
    s = sub.add_parser(name, help=help)
    for flag in required:
        s.add_argument(flag, required=True)
    s.set_defaults(fn=fn)
    return s


def add_named_args(parser: argparse.ArgumentParser, *named: tuple[str, str]) -> None:
    """Repeatable ``--KIND NAME=PATH`` arguments: the files a report verb reads, each with its name."""
    for kind, text in named:
        parser.add_argument(f"--{kind}", action="append", default=[], metavar="NAME=PATH", help=text)


class HelpFormatter(argparse.HelpFormatter):
    """Each option's default after its help, where it has a meaningful one (not None, False or an
    empty list, and not already named in the text): argparse's ArgumentDefaultsHelpFormatter would
    print "(default: None)" after every required flag."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            action.option_strings
            and not action.required
            and default not in (None, False, [], argparse.SUPPRESS)
            and "default" not in text
        ):
            text += " (default: %(default)s)"
        return text


class VerbParser(argparse.ArgumentParser):
    """A verb's parser: a flag added without a help text gets :data:`COMMON_HELP`'s, so the flags
    many verbs share (``--params``, ``--out``, ...) are explained once."""

    def add_argument(self, *args, **kwargs):
        if kwargs.get("help") is None:
            kwargs["help"] = next((COMMON_HELP[a] for a in args if a in COMMON_HELP), None)
        return super().add_argument(*args, **kwargs)


class VerbsAction(argparse._SubParsersAction):
    """``add_subparsers`` whose verbs take their help line as their ``--help`` description and
    show option defaults: a verb declared with a help line explains itself."""

    def add_parser(self, name, **kwargs):
        kwargs.setdefault("description", kwargs.get("help"))
        kwargs.setdefault("formatter_class", HelpFormatter)
        return super().add_parser(name, **kwargs)


def llm_job_args(s: argparse.ArgumentParser) -> None:
    """What a job calling an LLM (answer, retrieve with an LLM planner) takes beside its params."""
    s.add_argument("--llm-exec", default="{}", help="execution-only llm settings as JSON (concurrency, limits, ...)")
    s.add_argument("--in-flight", type=int, default=None, help="this job's share of LLM calls in flight (llm_api)")


def job_llm(hashed: dict, execution: dict, in_flight: int | None, model: str | None) -> LLMSpec:
    """The gateway settings of one job calling ``model`` (default ``llm.model``; None: no model), parsed
    once: the computed slice plus the execution-only settings, the model's calls in flight capped by the
    job's ``llm_api`` share and its servers fitted to the threads Snakemake granted (pipeline/cores.py)."""
    from pipeline.cores import granted_threads
    from pipeline.llm_models import LLMSpec

    llm = LLMSpec.from_slices(hashed, execution)
    model = model or llm.model
    return llm.for_job(model, in_flight, granted_threads()) if model else llm
