"""Your own corpora in the DAG (``corpora:``): their documents, the checks run when the Snakefile is
parsed, the variants each lists, the ingest and report rules' arguments, and
the targets; and which of WattBot's targets a run without WattBot's data leaves out.

A corpus shares WattBot's rules (tree, index, retrieve, answer, ensemble, evaluate, parse_errors,
parse_check) through its registry entry (pipeline/workflow/datasets.py); only its ingest and its report
are its own (its files are a user's, its report has no figures of WattBot's)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pipeline import paths
from pipeline.config import answering_slice, corpus_answer_variants, corpus_specs, retrieval_root, wattbot_present
from pipeline.workflow.named_files import NamedFiles
from pipeline.workflow.params import limit_param, metrics_param, shell_arg, with_hash
from pipeline.workflow.sprout import trained_head_indexes


class CorpusError(ValueError):
    """A corpus that cannot run; the message is one line naming the key or file."""


def corpus_names(cfg: dict, labelled: bool | None = None) -> list[str]:
    """The corpora; only those with (``labelled=True``) or without (False) a solutions file when set."""
    corpora = cfg.get("corpora") or {}
    return sorted(n for n, c in corpora.items() if labelled is None or bool(c.get("solutions")) == labelled)


def corpus_source(cfg: dict, name: str):
    """The ``CorpusSource`` (pipeline/datasets/corpus.py) of ``corpora.<name>``: its resolved files."""
    from pipeline.datasets.corpus import CorpusSource

    c = cfg["corpora"][name]
    opt = {k: Path(c[k]) for k in ("solutions", "metadata") if c.get(k)}
    return CorpusSource(name, Path(c["pdf_dir"]), Path(c["questions"]), **opt)


@cache
def _documents(pdf_dir: str) -> dict[str, str]:
    from pipeline.datasets.corpus import discover_documents

    return {doc: str(path) for doc, path in discover_documents(Path(pdf_dir)).items()}


def corpus_documents(cfg: dict, name: str) -> dict[str, str]:
    """``doc_id -> file`` of the corpus's folder (read once per parse of the Snakefile)."""
    return _documents(cfg["corpora"][name]["pdf_dir"])


def corpus_variants(cfg: dict, name: str) -> list[str]:
    """The answering variants the corpus's report lists: its ``variants`` (default: ``default_variant``)."""
    return corpus_specs(cfg)[name].answering(cfg["default_variant"])


def submission_variant(cfg: dict, name: str) -> str:
    """Whose answers become reports/<name>/submission.csv: ``default_variant`` when the corpus runs it,
    else its first variant."""
    variants = corpus_variants(cfg, name)
    return cfg["default_variant"] if cfg["default_variant"] in variants else variants[0]


def check_corpora(cfg: dict) -> dict[str, dict[str, int]]:
    """Every corpus's input checks (pipeline/datasets/corpus.py ``check_corpus``: one line naming the file,
    row or column) and, when one of its variants needs SproutRAG's trained heads, the training data's
    folder: run when the Snakefile is parsed, before any job. Its counts per corpus."""
    from pipeline.datasets.corpus import check_corpus
    from pipeline.datasets.wattbot import InputError

    counts = {}
    for name in corpus_names(cfg):
        try:
            counts[name] = check_corpus(corpus_source(cfg, name))
        except InputError as e:
            raise CorpusError(f"corpora.{name}: {e}") from None
        variants = corpus_answer_variants(cfg, name)
        trained = trained_head_indexes(cfg, [cfg["answering"][v]["retrieval"] for v in variants])
        root = retrieval_root(cfg)
        if trained and not Path(root).is_dir():
            raise CorpusError(
                f"config key 'corpora.{name}.variants': index {trained[0]} needs SproutRAG's trained heads, whose "
                f"training data folder {root} is not there (use an index with heads: uniform, or set data_root)"
            )
    return counts


def corpus_ingest_args(cfg: dict, name: str) -> str:
    """The ``corpus-ingest`` verb's file arguments (the optional ones only when configured)."""
    c = cfg["corpora"][name]
    args = ["--pdf-dir", shell_arg(c["pdf_dir"]), "--questions", shell_arg(c["questions"])]
    for key in ("solutions", "metadata"):
        if c.get(key):
            args += [f"--{key}", shell_arg(c[key])]
    return " ".join(args)


def corpus_ingest_inputs(cfg: dict, name: str) -> list[str]:
    """The user's CSVs and every document: a document added to (or changed in) the folder re-ingests, so
    metadata.csv (the ids an answer may cite, their titles and urls) follows the folder."""
    c = cfg["corpora"][name]
    return [c[k] for k in ("questions", "solutions", "metadata") if c.get(k)] + list(
        corpus_documents(cfg, name).values()
    )


def corpus_report_inputs(cfg: dict, name: str) -> NamedFiles:
    """The corpus report's files: every variant's answers (and, labelled, scores and per-question
    scores), the submission variant's CSV, and the parse check (parsing.strict fails the run there)."""
    split, labelled = paths.CORPUS_SPLIT, bool(cfg["corpora"][name].get("solutions"))
    avs = corpus_variants(cfg, name)
    return {
        "answers": {av: paths.answers(av, split, name) for av in avs},
        "submissions": {av: paths.answers_csv(av, split, name) for av in avs},
        "scores": {av: paths.scores(av, name) for av in avs} if labelled else {},
        "per_question": {av: paths.per_question(av, name) for av in avs} if labelled else {},
        "parse_check": {name: paths.parse_check(name)},
    }


def corpus_ablations(cfg: dict, name: str) -> dict:
    """The answering ablations a labelled corpus can draw: those whose reference (first variant) it runs,
    with the other variants it runs (at least one)."""
    if not cfg["corpora"][name].get("solutions"):
        return {}
    avs, out = set(corpus_variants(cfg, name)), {}
    for ab_name, ab in sorted((cfg["report"].get("ablations") or {}).items()):
        ran = [v for v in ab["variants"] if v in avs]
        if ab["stage"] == "answering" and ab["variants"][0] in avs and len(ran) > 1:
            out[ab_name] = {"variants": ran, "note": ab["note"]}
    return out


def corpus_report_params(cfg: dict, name: str) -> str:
    avs = corpus_variants(cfg, name)
    ablations = corpus_ablations(cfg, name)
    return with_hash(
        {
            "corpus": name,
            "labelled": bool(cfg["corpora"][name].get("solutions")),
            "submission_variant": submission_variant(cfg, name),
            "variants": {v: answering_slice(cfg, v) for v in avs},
            "report": {k: cfg["report"][k] for k in ("seed", "bootstrap")},
            **({"ablations": ablations} if ablations else {}),  # none: the params as before
            **limit_param(cfg),  # a smoke run's page says so (a full run's params as before)
            **metrics_param(cfg),  # the measures report.metrics picks (none picked: the params as before)
        }
    )


def corpus_targets(cfg: dict) -> list[str]:
    """Every corpus's leaderboard and submission (``rule all``)."""
    return [
        f for n in corpus_names(cfg) for f in (paths.reports.corpus_leaderboard(n), paths.reports.corpus_submission(n))
    ]


def wattbot_targets(cfg: dict) -> list[str]:
    """WattBot's reports in ``rule all``; none when its data folder is missing (a corpora-only run,
    pipeline/config/folders.py ``check_paths``)."""
    if not wattbot_present(cfg):
        return []
    r = paths.reports
    return [r.index_md, r.leaderboard, r.submission, r.retrieval_table, r.index_html]
