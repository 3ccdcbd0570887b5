"""What the Snakefile needs to expand the grid: document ids, variant names, rule params.

Kept here (not in the Snakefile) so the DAG file stays declarative and this logic is tested.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from pipeline import layout as L
from pipeline.answer_backends import calls_llm, variant_spec
from pipeline.answer_backends import get as get_backend
from pipeline.config import (  # noqa: F401
    answer_splits,
    answering_slice,
    config_hash,
    index_embedding,
    index_slice,
    local_models,
    retrieval_indexes,
    retrieval_slice,
)
from pipeline.config_schema import spec_defaults
from pipeline.datasets.wattbot import document_source, load_metadata
from pipeline.index_kinds import kind_of
from pipeline.specs import BeamSpec

NamedFiles = dict[str, dict[str, str]]  # a report verb's files: argument (kind) -> name -> path
SPROUT_DIR = L.SPROUT_DIR  # named in rule sprout_train_pairs' shell text (a changed text reruns the rule)


def doc_ids(cfg: dict) -> list[str]:
    """All documents of the metadata, or the configured subset (an unknown id is an error)."""
    known = sorted(load_metadata(Path(cfg["wattbot"]["dir"]) / "metadata.csv")["id"])
    subset = cfg["wattbot"].get("docs")
    if not subset:
        return known
    unknown = sorted(set(subset) - set(known))
    if unknown:
        raise ValueError(f"config key 'wattbot.docs': unknown document id(s) {', '.join(unknown)}")
    return sorted(subset)


def tree_source(cfg: dict, doc: str) -> str:
    wb = cfg["wattbot"]
    pdf_dir = Path(wb["pdf_dir"]) if wb.get("pdf_dir") else None
    return str(document_source(doc, Path(wb["dir"]) / "corpus", pdf_dir))


def split_source(cfg: dict, split: str) -> str:
    return str(Path(cfg["wattbot"]["dir"]) / cfg["wattbot"]["splits"][split])


def as_json(obj) -> str:
    """Canonical JSON of a params value. A shell command takes it through ``{params.x:q}`` (Snakemake's
    shlex quoting) or :func:`shell_arg`, never inside hand-written quotes (a ``'`` in a value would end them)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def shell_arg(value: str) -> str:
    """One shell word, whatever ``value`` holds (quotes, spaces, ``$``): for arguments a helper assembles."""
    return shlex.quote(str(value))


def index_params(cfg: dict, index: str) -> str:
    return as_json(index_slice(cfg, index))


def retrieval_params(cfg: dict, variant: str) -> str:
    return as_json(retrieval_slice(cfg, variant))


def answering_params(cfg: dict, variant: str) -> str:
    return as_json(answering_slice(cfg, variant))


def with_hash(params: dict) -> str:
    """Params plus the hash of exactly what they contain: a report reruns (and its hash changes)
    only when something it shows changed, not when an unrelated part of the config did."""
    return as_json({**params, "config_hash": config_hash(params)})


def report_params(cfg: dict) -> str:
    return with_hash(
        {
            "default_variant": cfg["default_variant"],
            "score_split": cfg["wattbot"]["score_split"],
            "variants": {v: answering_slice(cfg, v) for v in sorted(cfg["answering"])},
            "report": {k: cfg["report"][k] for k in ("seed", "bootstrap")},
        }
    )


def answer_spec(cfg: dict, variant: str):
    """The typed spec of an answering variant: its backend's (pipeline/answer_backends.py)."""
    return variant_spec(variant, cfg["answering"][variant])


def uses_llm(cfg: dict, variant: str) -> int:
    return int(calls_llm(answer_spec(cfg, variant).backend))


def llm_share(cfg: dict, variant: str, total: int | None) -> int:
    """The ``llm_api`` units an answering job takes: its model's ``concurrency`` (calls in flight),
    at most the run's total (``--resources llm_api=K``); 0 for a variant without an LLM. Jobs
    whose shares fit in the total run side by side."""
    if not uses_llm(cfg, variant):
        return 0
    return model_share(cfg, answer_spec(cfg, variant).resolved_model((cfg.get("llm") or {}).get("model")), total)


def planner_share(cfg: dict, variant: str, total: int | None) -> int:
    """The ``llm_api`` units a retrieval job takes: its LLM query planner's model's ``concurrency``,
    as an answering job of that model (:func:`llm_share`); 0 without an LLM planner."""
    return model_share(cfg, planner_model(cfg, variant), total) if uses_llm_planner(cfg, variant) else 0


def model_share(cfg: dict, model: str, total: int | None) -> int:
    """A job's calls in flight to ``model``: its ``concurrency``, at most the run's ``llm_api`` total."""
    from pipeline.llm.limits import model_limits

    share = model_limits(cfg.get("llm") or {}, model).concurrency
    total = getattr(total, "value", total)  # Snakemake 9 wraps global resources in Resource objects
    return max(1, min(share, int(total))) if total else share


def answer_threads(cfg: dict, variant: str) -> int:
    """The ``threads:`` of an answering job: the cores its local LLM servers keep busy (servers x
    ``n_threads``: 2 for the default Gemma), 1 for the extractive backend and hosted models. Snakemake
    scales it down to ``--cores``; the job fits its servers to what it got (pipeline/cores.py)."""
    if not uses_llm(cfg, variant):
        return 1
    from pipeline.answer_backends import variant_model
    from pipeline.llm.local_server import local_llm_threads

    llm = cfg.get("llm") or {}
    return local_llm_threads(llm, variant_model(answer_spec(cfg, variant), llm.get("model")))


def planner_threads(cfg: dict, variant: str) -> int:
    """The ``threads:`` of a retrieval job: its local LLM planner's servers x ``n_threads`` (as
    :func:`answer_threads`), else 1 (a retrieval embeds only its queries, on one core)."""
    if not uses_llm_planner(cfg, variant):
        return 1
    from pipeline.llm.local_server import local_llm_threads

    return local_llm_threads(cfg.get("llm") or {}, planner_model(cfg, variant))


def encoder_threads(cfg: dict) -> int:
    """The ``threads:`` of an embedding job (index): ``embedding.threads``; the encoder uses at most
    what Snakemake granted (pipeline/cores.py)."""
    return int(cfg["embedding"].get("threads", 2))


def sprout_threads(cfg: dict) -> int:
    """The ``threads:`` of the SproutRAG attention and training-pair jobs: ``sprout.threads`` (default 2)."""
    from pipeline.config import SPROUT_ATTENTION_DEFAULTS

    return int(cfg["sprout"].get("threads", SPROUT_ATTENTION_DEFAULTS["threads"]))


def default_llm_api(cfg: dict) -> int:
    """The default total of LLM calls in flight across jobs: the largest share of any answering
    variant or LLM query planner (so by default one LLM job runs at a time, at its full concurrency)."""
    planners = [planner_share(cfg, v, None) for v in cfg["retrieval"]]
    return max([llm_share(cfg, v, None) for v in cfg["answering"]] + planners + [1])


def llm_exec_json(cfg: dict) -> str:
    """Execution-only LLM settings for the answer rule (not params: changing them reruns nothing)."""
    from pipeline.config import llm_execution

    return as_json(llm_execution(cfg))


# --- ensembles: a DAG node over their members' answer files ---


def answer_variants(cfg: dict, ensemble: bool) -> str:
    """Wildcard pattern of the answering variants the ``answer`` rule (False) or the ``ensemble``
    rule (True) makes, so the two rules never claim the same file."""
    names = [
        v for v in sorted(cfg["answering"]) if get_backend(cfg["answering"][v]["backend"]).votes_members == ensemble
    ]
    return "|".join(map(re.escape, names)) or "(?!)"


def ensemble_inputs(cfg: dict, variant: str, split: str) -> list[str]:
    return [L.answers(m, split) for m in answer_spec(cfg, variant).members]


def ensemble_args(cfg: dict, variant: str, split: str) -> str:
    """``--member NAME=PATH`` per member, in vote order."""
    members = answer_spec(cfg, variant).members
    return " ".join(f"--member {shell_arg(f'{m}={p}')}" for m, p in zip(members, ensemble_inputs(cfg, variant, split)))


# --- LLM variants: which splits they answer, which local model files they need ---


def answer_targets(cfg: dict, split: str) -> list[str]:
    """Answer CSVs of ``split`` for every variant that answers it (LLM variants may be train-only)."""
    return [L.answers_csv(v, split) for v in split_variants(cfg, split)]


def split_variants(cfg: dict, split: str) -> list[str]:
    return [v for v in sorted(cfg["answering"]) if split in answer_splits(cfg, v)]


def _model_files(cfg: dict, model: str | None) -> list[str]:
    """GGUF files a job needs for ``model`` (none for hosted models)."""
    return [m["gguf"] for m in local_models(cfg, model).values()]


def answer_models(cfg: dict, variant: str) -> list[str]:
    spec = answer_spec(cfg, variant)
    return _model_files(cfg, spec.model) if calls_llm(spec.backend) else []


def retrieval_models(cfg: dict, variant: str) -> list[str]:
    """Model files a retrieval job reads: a local LLM planner's GGUF, an index's packaged encoder."""
    planner = cfg["retrieval"][variant].get("planner") or {}
    llm = _model_files(cfg, planner.get("model")) if uses_llm_planner(cfg, variant) else []
    return llm + [m for n in retrieval_indexes(cfg, variant) for m in encoder_model_inputs(cfg, n)]


def encoder_model_inputs(cfg: dict, index: str) -> list[str]:
    """The assembled folder of an index's packaged encoder (rule embedding_model), or the file-built
    int8/fp32 MiniLM exports (rule minilm_qint8) of an ``onnx-qint8`` index, if it has either."""
    name = cfg["indexes"][index].get("embedding")
    model = (cfg.get("embedding_models") or {}).get(name) or {}
    if kind_of(cfg["indexes"][index]).embeds and index_embedding(cfg, index).get("backend") == "onnx-qint8":
        return qint8_model_files(index_embedding(cfg, index).get("model"))
    return [model["model"]] if model.get("package") else []


def qint8_model_files(folder: str | None) -> list[str]:
    """Both files the minilm_qint8 rule writes into ``folder`` (default data/models/minilm-onnx)."""
    from pipeline.embed.quantize import FP32_FILE, QINT8_DIR, QINT8_FILE

    return [f"{folder or QINT8_DIR}/{FP32_FILE}", f"{folder or QINT8_DIR}/{QINT8_FILE}"]


def qint8_model_folders(cfg: dict) -> list[str]:
    """Folders the minilm_qint8 rule must build: those of every ``onnx-qint8`` dense index."""
    return sorted(
        {str(Path(f).parent) for n in cfg["indexes"] for f in encoder_model_inputs(cfg, n) if f.endswith(".onnx")}
    )


def packaged_encoders(cfg: dict) -> dict[str, str]:
    """Assembled folder -> PyPI package prefix, for every embedding model an index uses."""
    used = {idx.get("embedding") for idx in cfg["indexes"].values()}
    return {
        m["model"]: m["package"]
        for n, m in sorted((cfg.get("embedding_models") or {}).items())
        if n in used and m.get("package")
    }


def uses_llm_planner(cfg: dict, variant: str) -> int:
    return int((cfg["retrieval"][variant].get("planner") or {}).get("kind") == "llm")


def planner_model(cfg: dict, variant: str) -> str:
    """The model of a retrieval variant's LLM query planner: its ``model``, else ``llm.model``."""
    model = (cfg["retrieval"][variant].get("planner") or {}).get("model") or (cfg.get("llm") or {}).get("model")
    if not model:
        raise ValueError(f"config key 'retrieval.{variant}.planner.model': required when planner.kind is 'llm'")
    return model


def retrieval_variants(cfg: dict, llm_planner: bool) -> str:
    """Wildcard pattern of the retrieval variants the ``retrieve`` rule (False) or the ``retrieve_llm``
    rule (True, an LLM query planner) makes, so the two rules never claim the same file."""
    names = [v for v in sorted(cfg["retrieval"]) if bool(uses_llm_planner(cfg, v)) == llm_planner]
    return "|".join(map(re.escape, names)) or "(?!)"


def local_model_for_file(cfg: dict, path: str) -> str:
    """The ``llm.local`` config (as JSON) whose ``gguf`` is ``path``."""
    for name, m in sorted(((cfg.get("llm") or {}).get("local") or {}).items()):
        if m["gguf"] == path:
            return as_json({**m, "name": name})
    raise ValueError(f"no llm.local model has gguf '{path}'")


# --- which trees and questions a dataset's index and retrieval rules read ---


def suite_datasets(cfg: dict) -> list[str]:
    return sorted((cfg.get("benchmarks") or {}).get("datasets", {}))


def suite_variants(cfg: dict) -> list[str]:
    return list((cfg.get("benchmarks") or {}).get("retrieval", []))


def trees_input(cfg: dict, dataset: str) -> list[str]:
    if dataset == L.WATTBOT:
        return [L.tree(d) for d in doc_ids(cfg)]
    return [L.export_trees(dataset)]


def trees_arg(cfg: dict, dataset: str) -> str:
    """What ``python -m pipeline index --trees`` takes: a comma list of files, or a folder."""
    return ",".join(trees_input(cfg, dataset))


def questions_path(dataset: str, split: str) -> str:
    return L.ingest_split(split) if dataset == L.WATTBOT else L.export_split(dataset, split)


def suite_targets(cfg: dict) -> list[str]:
    return [L.reports.suite_metrics] if suite_datasets(cfg) and suite_variants(cfg) else []


def suite_export_params(cfg: dict, dataset: str) -> str:
    b = cfg["benchmarks"]
    return as_json({"dataset": dataset, "root": b["root"], "subset": b["datasets"][dataset] or {}})


def suite_ks(cfg: dict) -> list[int]:
    """The suite's cutoffs: ``benchmarks.ks`` (the schema's default when the suite is not configured)."""
    return (cfg.get("benchmarks") or spec_defaults("benchmarks"))["ks"]


def suite_report_inputs(cfg: dict) -> NamedFiles:
    """The suite report's scores, named DATASET:VARIANT."""
    return {"scores": {f"{d}:{rv}": L.suite_scores(d, rv) for d in suite_datasets(cfg) for rv in suite_variants(cfg)}}


def suite_report_params(cfg: dict) -> str:
    b = cfg.get("benchmarks") or {}
    return with_hash(
        {
            "ks": suite_ks(cfg),
            "datasets": b.get("datasets", {}),
            "variants": {v: retrieval_slice(cfg, v) for v in suite_variants(cfg)},
        }
    )


# --- the figures rule (reports/index.html): ablations, attribution, cost, embedding map ---


def claims_file() -> str:
    """claims.yaml, an input of the figures rule (a changed claim redraws the claims table)."""
    return str(L.CLAIMS_FILE)


def ablations_in_other_configs() -> dict[str, list[str]]:
    """Ablation names of the repo's larger configs (config.mpnet.yaml, config.full.yaml), so a claim
    that did not run can say where it would."""
    import yaml

    from pipeline.config import OVERLAY_CONFIGS
    from pipeline.datasets.paths import REPO

    out = {}
    for name in OVERLAY_CONFIGS:
        path = REPO / name
        if path.exists():
            out[name] = sorted(((yaml.safe_load(path.read_text()) or {}).get("report") or {}).get("ablations") or {})
    return out


def figures_params(cfg: dict) -> str:
    b = cfg.get("benchmarks") or {}
    suite = {"datasets": suite_datasets(cfg), "variants": suite_variants(cfg), "ks": suite_ks(cfg)} if b else {}
    return with_hash(
        {
            "report": cfg["report"],
            "score_split": cfg["wattbot"]["score_split"],
            "default_variant": cfg["default_variant"],
            "answering": {v: cfg["answering"][v] for v in sorted(cfg["answering"])},
            "retrieval": {v: cfg["retrieval"][v] for v in sorted(cfg["retrieval"])},
            "suite": suite,
            "parse_quality": (parse_quality_report(cfg) or [""])[0],
            "claims_elsewhere": ablations_in_other_configs(),
        }
    )


def figure_stems(cfg: dict) -> list[str]:
    from pipeline.report.stems import figure_stems as stems

    return stems(json.loads(figures_params(cfg)))


def embedding_index_input(cfg: dict) -> list[str]:
    name = cfg["report"].get("embedding_index")
    return [L.index(L.WATTBOT, name)] if name else []


# --- what the report verbs read: every file by name, declared as the rule's input and passed to the verb ---


def report_inputs(cfg: dict) -> NamedFiles:
    """The report rule's files: scores of every answering variant, the test submissions, the retrieval runs."""
    avs, split = sorted(cfg["answering"]), cfg["wattbot"]["score_split"]
    tests = split_variants(cfg, "test") if "test" in cfg["wattbot"]["splits"] else []
    return {
        "scores": {av: L.scores(av) for av in avs},
        "per_question": {av: L.per_question(av) for av in avs},
        "submissions": {av: L.answers_csv(av, "test") for av in tests},
        "retrieval": {rv: L.retrieval(L.WATTBOT, rv, split) for rv in sorted(cfg["retrieval"])},
    }


def figures_inputs(cfg: dict) -> NamedFiles:
    """The figures rule's files: per answering variant its scores and answers, per retrieval variant its
    run, the suite's per-query tables (named DATASET:VARIANT) and the index the embedding map draws."""
    avs, split = sorted(cfg["answering"]), cfg["wattbot"]["score_split"]
    name = cfg["report"].get("embedding_index")
    return {
        "scores": {av: L.scores(av) for av in avs},
        "per_question": {av: L.per_question(av) for av in avs},
        "answers": {av: L.answers(av, split) for av in avs},
        "retrieval": {rv: L.retrieval(L.WATTBOT, rv, split) for rv in sorted(cfg["retrieval"])},
        "suite": {f"{d}:{rv}": L.suite_per_query(d, rv) for d in suite_datasets(cfg) for rv in suite_variants(cfg)},
        "index": {name: L.index(L.WATTBOT, name)} if name else {},
    }


def input_lists(files: NamedFiles) -> dict[str, list[str]]:
    """A rule's named inputs: one list per kind."""
    return {kind: list(named.values()) for kind, named in files.items()}


def named_args(files: NamedFiles) -> str:
    """``--<kind> NAME=PATH`` per file: a report verb is told which file is which, never derives it from a path."""
    return " ".join(
        f"--{kind.replace('_', '-')} {shlex.quote(f'{name}={path}')}"
        for kind, named in files.items()
        for name, path in named.items()
    )


# --- the parse stage: vision captioning args, failure report, quality report ---


def tree_args(cfg: dict, source: str = "") -> str:
    """Extra ``tree`` verb arguments: the heading method for a PDF source (JSON and text trees do not use
    it, so their params, and Snakemake's rerun check, stay as they were), and the vision model when set."""
    parsing = cfg["parsing"]
    headings = f"--headings {parsing['headings']}" if source.lower().endswith(".pdf") else ""
    vision = parsing["vision"]
    if not vision["model"]:
        return headings
    return f"{headings} ".lstrip() + " ".join(
        [
            "--vision-model",
            shell_arg(vision["model"]),
            "--vision-params",
            shell_arg(as_json(vision["params"])),
            "--cache-dir",
            shell_arg(cfg["cache_dir"]),
            "--llm-mode",
            cfg["llm"]["mode"],
        ]
    )


def parse_quality_pdfs(cfg: dict, scope: str = "all") -> list[str]:
    """The corpus PDFs of ``scope`` (``sample``: the default DAG's few; ``all``: `make parse-quality`) on disk."""
    from pipeline.parse.corpus import MANIFEST, load_manifest, select

    folder = Path(cfg["parsing"]["quality_dir"])
    if not MANIFEST.exists():
        return []
    return [
        str(folder / f"{e.doc}.pdf")
        for e in select(load_manifest(MANIFEST), scope)
        if (folder / f"{e.doc}.pdf").exists()
    ]


PARSE_SCOPES = {"sample": "sample/", "all": ""}  # the {scope} wildcard of rule parse_quality


def parse_quality_report(cfg: dict) -> list[str]:
    """The source table the report page draws: the full corpus once `make parse-quality` made it, else the sample."""
    full = L.reports.parse_quality_sources(PARSE_SCOPES["all"])
    if Path(full).exists():
        return [full]
    return [L.reports.parse_quality_sources(PARSE_SCOPES["sample"])] if parse_quality_pdfs(cfg, "sample") else []


def parse_targets(cfg: dict) -> list[str]:
    """The parse failure check always; the sample quality report when its PDFs are there (`make parse-corpus`)."""
    sample = [L.reports.parse_quality(PARSE_SCOPES["sample"])] if parse_quality_pdfs(cfg, "sample") else []
    return [L.PARSE_CHECK] + sample


def after_run(cfg: dict) -> None:
    """Snakemake's ``onsuccess`` hook (not in a dry run): documents that could not be parsed, repeated
    last, the run telemetry beside the leaderboard, once the figures rule has written cost.csv, and the
    run's summary (pipeline/report/summary.py: printed last and written to reports/summary.json)."""
    import os

    from pipeline.report.summary import LATER, write_summary

    report_parse_failures(L.PARSE_ERRORS)
    if Path(L.reports.cost).exists():
        from pipeline.report.cost import leaderboard_telemetry

        split = cfg["wattbot"]["score_split"]
        avs = sorted(cfg["answering"])
        leaderboard_telemetry(
            L.reports.cost,
            {v: L.answers(v, split) for v in avs},
            {v: L.answer_benchmark(v, split) for v in avs},
            L.reports.leaderboard_telemetry,
        )
    write_summary(".", L.reports.root, show=not os.environ.get(LATER))


def after_error(snakemake_log: str | list | None) -> None:
    """Snakemake's ``onerror`` hook: the failed jobs, their logs' last lines, and the command that resumes."""
    import sys

    from pipeline.report.summary import failure_message

    print(failure_message(snakemake_log), file=sys.stderr)


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


# --- SproutRAG: the attention pass, head training, and what a sprout index reads ---


def index_inputs(cfg: dict, dataset: str, index: str) -> list[str]:
    """The trees, a dense index's packaged encoder files, and the kind's extra inputs (a sprout
    index: the attention file and, with trained heads, the head weights)."""
    kind = kind_of(cfg["indexes"][index])
    models = encoder_model_inputs(cfg, index) if kind.embeds else []
    return trees_input(cfg, dataset) + models + list(kind.extra_inputs(cfg, dataset, index).values())


def index_extra_args(cfg: dict, dataset: str, index: str) -> str:
    """``--input NAME=PATH`` for each of the kind's extra inputs (the ``index`` verb hands them to its builder)."""
    extra = kind_of(cfg["indexes"][index]).extra_inputs(cfg, dataset, index)
    return " ".join(f"--input {name}={path}" for name, path in extra.items())


def sprout_attention_params(cfg: dict) -> str:
    from pipeline.config import sprout_attention_slice

    return as_json(sprout_attention_slice(cfg))


def sprout_train_params(cfg: dict) -> str:
    from pipeline.config import sprout_attention_slice

    b = cfg.get("benchmarks") or {}
    return as_json(
        {
            "train": cfg["sprout"]["train"],
            "attention": sprout_attention_slice(cfg),
            "root": b.get("root", f"{cfg['data_root']}/retrieval"),
        }
    )


def sprout_train_excludes(cfg: dict) -> dict[str, str]:
    """Suite exports whose queries and documents training must not see (the evaluated ones)."""
    return {d: L.export_dir(d) for d in sorted(cfg["sprout"]["train"]["datasets"]) if d in suite_datasets(cfg)}


def uses_trained_heads(cfg: dict) -> bool:
    return any(i.get("heads") == "trained" for i in cfg["indexes"].values())  # only sprout indexes take heads


def sprout_report_params(cfg: dict) -> str:
    sweep = cfg["sprout"].get("beam_sweep", [])
    return with_hash(
        {
            "sweep": {v: BeamSpec.from_dict(cfg["retrieval"][v]).beam_width for v in sweep},
            "datasets": [d for d in suite_datasets(cfg) if set(sweep) <= set(suite_variants(cfg))],
            "ks": suite_ks(cfg),
        }
    )


def sprout_report_inputs(cfg: dict) -> NamedFiles:
    """The beam sweep's suite scores (DATASET:VARIANT) and WattBot retrieval runs of the scored split."""
    sweep = cfg["sprout"].get("beam_sweep", [])
    datasets = json.loads(sprout_report_params(cfg))["datasets"]
    return {
        "scores": {f"{d}:{v}": L.suite_scores(d, v) for d in datasets for v in sweep},
        "wattbot": {v: L.retrieval(L.WATTBOT, v, cfg["wattbot"]["score_split"]) for v in sweep},
    }


def sprout_report_index(cfg: dict) -> list[str]:
    """The WattBot index of the sweep's first variant (one document's tree is drawn from it)."""
    sweep = cfg["sprout"].get("beam_sweep", [])
    return [L.index(L.WATTBOT, cfg["retrieval"][sweep[0]]["index"])] if sweep else []


def sprout_targets(cfg: dict) -> list[str]:
    return [L.reports.sprout_beam_png] if cfg["sprout"].get("beam_sweep") else []


def local_scheduler_without_rate_limit(workflow) -> bool:
    """Switch off Snakemake's job-submission rate limit for a local run (the ``--max-jobs-per-timespan``
    default, ``100/1s``, is meant for cluster submission); True when it did. Called from ``onstart:``,
    when the scheduler exists and the executor is known (neither is while the Snakefile is parsed).

    Why: with the limit set, every scheduling pass that leaves ready jobs waiting (for cores, ``llm_api``)
    starts a 1 s timer that triggers another pass, and every finished job adds one more such timer chain,
    so while the LLM jobs held both cores of this machine ~150 chains ran ~150 passes a second: Snakemake
    itself took a quarter of a core (5 min 23 s of CPU in the first 22 min of the default grid; py-spy:
    the scheduler loop and its ILP solves). Without the limit a pass runs when a job finishes. Cluster
    executors keep Snakemake's behaviour."""
    scheduler = getattr(workflow, "scheduler", None)
    try:
        local = bool(workflow.local_exec)
    except AttributeError:  # no executor yet: not a run
        return False
    if not local or scheduler is None or not hasattr(scheduler, "job_rate_limiter"):
        return False
    scheduler.job_rate_limiter = None
    return True
