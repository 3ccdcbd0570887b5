"""Load, validate and slice the run configuration.

A run's config is assembled in one place, :func:`resolve_config` (the command-line files with the
files their ``extends:`` names, ``--config`` on top), and validated once at start-up (the Snakefile
calls :func:`snakemake_config`), so a typo fails before any work with a message that names the bad key
or file, not deep inside a rule.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import jsonschema
import yaml

from pipeline import answer_backends, config_schema, suite_datasets
from pipeline.config_schema import ConfigError, declared_schema, fill_and_check
from pipeline.index_kinds import IndexSpec, get_kind, kind_names, kind_of
from pipeline.provenance import stable_hash
from pipeline.retrieval_modes import FUSIONS, PLANNERS
from pipeline.specs import CorpusSpec, PlannerSpec, RetrievalSpec, SproutSpec

# The repo's larger grids, each extending the one before (`extends:`): the strong-encoder overlay
# (config.yaml + the mpnet encoder), then the full grid (`--configfile config.full.yaml` runs it all).
OVERLAY_CONFIGS = ("config.mpnet.yaml", "config.full.yaml")


def _schema() -> dict:
    """The config schema with the index kinds, planner kinds, fusion modes, answering backends and suite
    datasets that are registered (pipeline/index_kinds.py, retrieval_modes.py, answer_backends.py,
    suite_datasets.py), not lists kept in the YAML; built per validation, as a test may register a toy one."""
    schema = copy.deepcopy(config_schema.schema())
    props = schema["properties"]
    entry = props["indexes"]["additionalProperties"]["properties"]
    entry.update(declared_schema(IndexSpec, *(get_kind(n).spec for n in kind_names())))
    entry["kind"] = {"enum": kind_names()}
    variant = props["retrieval"]["additionalProperties"]["properties"]
    variant.update(declared_schema(*(s for s in (get_kind(n).search_spec for n in kind_names()) if s)))
    variant["planner"]["properties"]["kind"]["enum"] = PLANNERS.names()
    variant["hybrid"]["properties"]["mode"]["enum"] = FUSIONS.names()
    answering = props["answering"]["additionalProperties"]["properties"]
    answering.update(declared_schema(*(b.spec for b in answer_backends.BACKENDS.entries())))
    answering["backend"] = {"enum": answer_backends.names()}
    props["benchmarks"]["properties"]["datasets"]["propertyNames"] = {"enum": suite_datasets.names()}
    props["sprout"]["properties"]["train"]["properties"]["datasets"]["propertyNames"] = {
        "enum": suite_datasets.training_names()
    }
    return schema


def _key_path(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "<top level>"


# Keys that hold credentials. Secrets come only from the environment (declared in `llm.envvars`, which
# the Snakefile passes to `envvars:`), so they never reach config dumps, manifests, caches or reports.
SECRET_KEY = re.compile(r"(^|_)(api_?key|secret|password|passwd|access_token|auth_token|bearer_token)$", re.I)


def _secret_keys(obj, path: str = "") -> list[str]:
    if isinstance(obj, dict):
        found = [f"{path}{k}" for k in obj if SECRET_KEY.search(str(k))]
        return found + [p for k, v in obj.items() for p in _secret_keys(v, f"{path}{k}.")]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _secret_keys(v, f"{path}{i}.")]
    return []


def validate(cfg: dict) -> dict:
    """Check ``cfg`` against the schema and its cross-references; return it resolved.

    Resolution writes the schema's ``default:`` values in, then the defaults that depend on other
    entries (a retrieval variant's levels on its index kind, an ensemble's splits on its members, ...),
    and expands ``{data_root}`` in the paths. The input dict is not modified. The checks run section
    by section in a fixed order, so a config with several mistakes always reports the same one.
    """
    cfg = copy.deepcopy(dict(cfg))
    _check_secrets(cfg)
    errors = fill_and_check(cfg, _schema())
    if errors:
        e = errors[0]
        raise ConfigError.at(_key_path(e), e.message)
    sprout = SproutSpec.from_dict(cfg["sprout"])  # the block's own checks (windows that cover the text)
    for name, idx in cfg["indexes"].items():
        _check_index(cfg, name, idx, sprout)
    for name, variant in cfg["retrieval"].items():
        _resolve_planner(cfg, name, variant, _check_retrieval(cfg, name, variant).planner)
    resolve_answering(cfg)
    _check_per_model(cfg["llm"])
    for name, variant in cfg["answering"].items():
        _check_answering(cfg, name, variant)
    _check_splits(cfg)
    _check_index_embeddings(cfg)
    _resolve_benchmarks(cfg)
    check_report(cfg)
    _check_sprout(cfg)
    cfg["wattbot"]["dir"] = cfg["wattbot"]["dir"].format(data_root=cfg["data_root"])
    _resolve_corpora(cfg)
    return cfg


def corpus_specs(cfg: dict) -> dict[str, CorpusSpec]:
    """The ``corpora`` entries of a validated config, typed (their paths already resolved)."""
    return {name: CorpusSpec.from_dict(name, entry) for name, entry in sorted((cfg.get("corpora") or {}).items())}


def corpus_answer_variants(cfg: dict, name: str) -> list[str]:
    """Every answering variant corpus ``name`` runs: its listed ones and, for an ensemble, its members
    (and theirs), in that order."""
    out: list[str] = []
    todo = corpus_specs(cfg)[name].answering(cfg["default_variant"])
    while todo:
        v = todo.pop(0)
        if v not in out:
            out.append(v)
            todo += list(getattr(answer_backends.variant_spec(v, cfg["answering"][v]), "members", None) or [])
    return out


def _resolve_corpora(cfg: dict) -> None:
    """Each ``corpora.<name>`` parses (a bad name, an unknown or missing key is an error naming it), is no
    suite dataset's name, lists configured answering variants; ``{data_root}`` is expanded in its paths."""
    for name, entry in sorted(cfg["corpora"].items()):
        spec = CorpusSpec.from_dict(str(name), entry)
        if name in suite_datasets.names():
            raise ConfigError(f"config key 'corpora.{name}': '{name}' is a retrieval-suite dataset's name")
        unknown = [v for v in spec.answering(cfg["default_variant"]) if v not in cfg["answering"]]
        if unknown:
            raise ConfigError(f"config key 'corpora.{name}.variants': {unknown} not configured in 'answering'")
        resolved = spec.resolved(cfg["data_root"])
        cfg["corpora"][name] = {
            k: getattr(resolved, k) for k in ("pdf_dir", "questions", "solutions", "metadata", "variants")
        }


def _check_secrets(cfg: dict) -> None:
    """No credential is written in the config (they come from the environment, see ``SECRET_KEY``)."""
    secrets = _secret_keys(cfg)
    if secrets:
        raise ConfigError(
            f"config key '{secrets[0]}': credentials must not be written in the config; put the "
            "value in an environment variable and list its name in llm.envvars"
        )


def _resolve_planner(cfg: dict, name: str, variant: dict, planner: PlannerSpec) -> None:
    """A planner kind that calls an LLM names a usable model, or inherits ``llm.model`` (written in)."""
    if planner.calls_llm:
        _check_llm_model(cfg, f"retrieval.{name}.planner.model", variant["planner"].get("model"))
        variant["planner"].setdefault("model", cfg["llm"].get("model"))


def _check_answering(cfg: dict, name: str, variant: dict) -> None:
    """One ``answering.<name>`` variant: a known retrieval, a usable model, splits that include the score split."""
    if variant["retrieval"] not in cfg["retrieval"]:
        raise ConfigError(
            f"config key 'answering.{name}.retrieval': unknown retrieval variant '{variant['retrieval']}'"
        )
    if answer_backends.calls_llm(variant["backend"]):
        _check_llm_model(cfg, f"answering.{name}.model", variant.get("model"))
    bad = sorted(set(variant.get("splits", [])) - set(cfg["wattbot"]["splits"]))
    if bad:
        raise ConfigError(f"config key 'answering.{name}.splits': {bad} not in wattbot.splits")
    score_split = cfg["wattbot"]["score_split"]
    if variant.get("splits") and score_split in cfg["wattbot"]["splits"] and score_split not in variant["splits"]:
        raise ConfigError(f"config key 'answering.{name}.splits': must include the score split '{score_split}'")


def _check_splits(cfg: dict) -> None:
    """The default variant answers every split (its answers become the submission); the score split is one."""
    if cfg["default_variant"] not in cfg["answering"]:
        raise ConfigError(f"config key 'default_variant': '{cfg['default_variant']}' is not an answering variant")
    if set(answer_splits(cfg, cfg["default_variant"])) != set(cfg["wattbot"]["splits"]):
        raise ConfigError(
            f"config key 'default_variant': '{cfg['default_variant']}' must answer every split "
            f"(its answers become the submission)"
        )
    splits = cfg["wattbot"]["splits"]
    if cfg["wattbot"]["score_split"] not in splits:
        raise ConfigError(
            f"config key 'wattbot.score_split': '{cfg['wattbot']['score_split']}' is not in wattbot.splits"
        )


def _check_index_embeddings(cfg: dict) -> None:
    """An index's ``embedding`` names an ``embedding_models`` entry, on a kind that embeds."""
    for name, idx in cfg["indexes"].items():
        if idx.get("embedding") and idx["embedding"] not in (cfg.get("embedding_models") or {}):
            raise ConfigError(f"config key 'indexes.{name}.embedding': '{idx['embedding']}' is not in embedding_models")
        if idx.get("embedding") and not kind_of(idx).embeds:
            raise ConfigError(f"config key 'indexes.{name}.embedding': only {_kinds_with('embeds')} indexes embed")


def _resolve_benchmarks(cfg: dict) -> None:
    """The ``benchmarks`` block: ``{data_root}`` expanded in its root; its retrieval variants configured."""
    bench = cfg.get("benchmarks")
    if not bench:
        return
    bench["root"] = bench["root"].format(data_root=cfg["data_root"])
    for name in bench["retrieval"]:
        if name not in cfg["retrieval"]:
            raise ConfigError(f"config key 'benchmarks.retrieval': unknown retrieval variant '{name}'")


def _check_sprout(cfg: dict) -> None:
    """The ``sprout`` block: the beam sweep names sprout variants; windows cover the text."""
    sprout = cfg["sprout"]
    for name in sprout.get("beam_sweep", []):
        if name not in cfg["retrieval"] or not kind_of(cfg["indexes"][cfg["retrieval"][name]["index"]]).sweeps_beam:
            raise ConfigError(f"config key 'sprout.beam_sweep': '{name}' is not a retrieval variant of a sprout index")


def _kinds_with(attr: str) -> str:
    """'tree and chunks': the registered kinds with a true ``attr``, for messages."""
    return " and ".join(n for n in kind_names() if getattr(get_kind(n), attr))


def _check_index(cfg: dict, name: str, idx: dict, sprout: SproutSpec) -> None:
    """One ``indexes.<name>`` entry: only its kind's keys (its typed spec parses), their schema defaults
    written in (its hashed slice carries them), the kind's own checks."""
    kind = kind_of(idx)
    for other in kind_names():
        for key in sorted(get_kind(other).index_keys - kind.index_keys):
            if key in idx:
                raise ConfigError(f"config key 'indexes.{name}.{key}': only {other} indexes take it")
    for key, default in sorted(kind.index_defaults().items()):
        idx.setdefault(key, default)
    kind.check_index(kind.parse(name, idx), sprout)


def _check_retrieval(cfg: dict, name: str, variant: dict) -> RetrievalSpec:
    """One ``retrieval.<name>`` variant against its index's kind (and its hybrid partner's); its spec."""
    index = variant["index"]
    if index not in cfg["indexes"]:
        raise ConfigError(
            f"config key 'retrieval.{name}.index': unknown index '{index}' (have {sorted(cfg['indexes'])})"
        )
    entry = cfg["indexes"][index]
    kind = kind_of(entry)
    variant.setdefault("levels", list(kind.default_levels))
    variant.setdefault("expand", kind.default_expand)
    hybrid = variant.get("hybrid")
    other = cfg["indexes"].get(hybrid["index"]) if hybrid else None
    if hybrid and (kind.hybrid_role != "dense" or other is None or kind_of(other).hybrid_role != "lexical"):
        raise ConfigError(
            f"config key 'retrieval.{name}.hybrid.index': a hybrid pairs a dense index "
            f"({_roles('dense')}) with a lexical one ({_roles('lexical')}) "
            f"(got {index}:{kind.name} + {hybrid['index']})"
        )
    _check_searcher_keys(name, variant, kind.retrieval_keys | (kind_of(other).retrieval_keys if other else frozenset()))
    if kind.no_expand and variant["expand"] != "none":
        raise ConfigError(f"config key 'retrieval.{name}.expand': {kind.no_expand}")
    allowed = kind.searchable_levels(entry)
    if other:
        allowed &= kind_of(other).searchable_levels(other)
    bad = set(variant["levels"]) - allowed
    if bad:
        raise ConfigError(f"config key 'retrieval.{name}.levels': {sorted(bad)} not in a '{kind.name}' index")
    if hybrid and "weight" in hybrid and not FUSIONS.get(hybrid["mode"]).takes_weight:
        weighted = " and ".join(m.name for m in FUSIONS.entries() if m.takes_weight)
        raise ConfigError(f"config key 'retrieval.{name}.hybrid.weight': only {weighted} take a weight")
    return RetrievalSpec.from_dict(name, variant, cfg["indexes"])  # parsed here: a bad key fails validation


def _check_searcher_keys(name: str, variant: dict, takes: frozenset[str]) -> None:
    """A key of another kind's searcher names the kind that takes it."""
    for owner in kind_names():
        for key in sorted(get_kind(owner).retrieval_keys - takes):
            if key in variant:
                raise ConfigError(
                    f"config key 'retrieval.{name}.{key}': only variants that use a {owner} index take it"
                )


def _roles(role: str) -> str:
    return "/".join(n for n in kind_names() if get_kind(n).hybrid_role == role)


def resolve_answering(cfg: dict) -> None:
    """Each answering variant checked by its backend's spec (a key the backend does not take is an
    error naming it), then resolved by it (an ensemble's splits and retrieval: its members')."""
    for name, variant in cfg["answering"].items():
        spec = answer_backends.get(variant["backend"]).spec
        spec.from_dict(name, variant)
        spec.resolve(name, variant, cfg)
        if "retrieval" not in variant:
            raise ConfigError(f"config key 'answering.{name}.retrieval': required by backend {variant['backend']}")


def data_folders(cfg: dict) -> dict[str, str]:
    """The shared data folders the grid reads, by config key: WattBot's, and the suite's when configured."""
    folders = {"wattbot.dir": cfg["wattbot"]["dir"]}
    if cfg.get("benchmarks") and cfg["benchmarks"].get("datasets"):
        folders["benchmarks.root"] = cfg["benchmarks"]["root"]
    return folders


def missing_data(cfg: dict) -> list[str]:
    """The keys of :func:`data_folders` whose folder is not there."""
    return [key for key, folder in data_folders(cfg).items() if not Path(folder).is_dir()]


def wattbot_present(cfg: dict) -> bool:
    """WattBot's data folder is there (without it, a config with corpora runs only them)."""
    return "wattbot.dir" not in missing_data(cfg)


def suite_present(cfg: dict) -> bool:
    return "benchmarks.root" not in missing_data(cfg)


def check_paths(cfg: dict) -> list[str]:
    """The data folders a run reads exist: a wrong data_root is one clear line before any job starts,
    not a failure deep inside the DAG. Kept out of ``validate`` so configs can be checked anywhere.

    With ``corpora`` configured, a missing WattBot or suite folder is no error: that part of the grid is
    left out of the DAG (its targets, the run's summary of it) and the returned notices say so, so a user
    without the shared data runs their own documents. Without corpora it is an error, as before."""
    notices = []
    for key in missing_data(cfg):
        folder = data_folders(cfg)[key]
        if not cfg.get("corpora"):
            raise ConfigError(
                f"config key '{key}': folder {folder} not found (check data_root, now {cfg['data_root']})"
            )
        notices.append(
            f"note: config key '{key}': folder {folder} not found: its part of the grid is skipped, "
            f"the corpora ({', '.join(sorted(cfg['corpora']))}) run"
        )
    return notices


def check_report(cfg: dict) -> None:
    """The ``report`` block's cross-references: every ablation variant must be configured (a report
    never skips an ablation silently) and the embedding map needs an index with vectors at every tree level."""
    rep = cfg["report"]
    trees = sorted(n for n, idx in cfg["indexes"].items() if kind_of(idx).tree_vectors)
    rep.setdefault("embedding_index", trees[0] if trees else None)
    if rep["embedding_index"] is not None and rep["embedding_index"] not in trees:
        raise ConfigError(
            f"config key 'report.embedding_index': '{rep['embedding_index']}' is not a 'tree' index (have {trees})"
        )
    for name, ab in rep["ablations"].items():
        missing = [v for v in ab["variants"] if v not in cfg[ab["stage"]]]
        if missing:
            raise ConfigError(
                f"config key 'report.ablations.{name}.variants': {missing} not configured in '{ab['stage']}'"
            )


def _check_per_model(llm: dict) -> None:
    """A ``local/<name>`` model runs on the server the job starts: no endpoint or key of its own."""
    for model, entry in (llm.get("per_model") or {}).items():
        for key in ("api_base", "api_key_env"):
            if model.startswith("local/") and key in (entry or {}):
                raise ConfigError(
                    f"config key 'llm.per_model.{model}.{key}': a local/ model is served by the job itself "
                    f"(llm.local.{model[len('local/') :]}); for a server of your own use openai/<served name>"
                )


def _check_llm_model(cfg: dict, key: str, model: str | None) -> None:
    """An LLM variant names a model, or inherits ``llm.model``; ``local/<name>`` needs ``llm.local.<name>``."""
    llm = cfg.get("llm") or {}
    model = model or llm.get("model")
    if not model:
        raise ConfigError(f"config key '{key}': required when the backend is llm (or set llm.model)")
    if model.startswith("local/") and model[len("local/") :] not in (llm.get("local") or {}):
        raise ConfigError(
            f"config key '{key}': '{model}' needs a server config under llm.local."
            f"{model[len('local/') :]} (have {sorted(llm.get('local') or {})})"
        )


def answer_splits(cfg: dict, variant: str) -> list[str]:
    """The splits an answering variant answers: its ``splits`` or every split."""
    return sorted(cfg["answering"][variant].get("splits") or cfg["wattbot"]["splits"])


def local_models(cfg: dict, model: str | None) -> dict[str, dict]:
    """``{name: server config}`` of the local model ``model`` names (empty for hosted models)."""
    llm = cfg.get("llm") or {}
    model = model or llm.get("model") or ""
    name = model[len("local/") :] if model.startswith("local/") else None
    return {name: llm["local"][name]} if name else {}


# The grid of a run given no config file (Snakemake without --configfile, the CLI verbs' default).
DEFAULT_CONFIG = "config.yaml"
# Top-level key of a config file naming the file its grid extends (a path relative to the file).
EXTENDS = "extends"


def resolve_config(configfiles: Sequence[str | Path] = (), overrides: Mapping | None = None) -> dict:
    """The raw (unvalidated) config of a run: the files in ``configfiles`` (``config.yaml`` when none)
    merged key by key in order, each over the chain of files its ``extends:`` names, then ``overrides``
    (Snakemake's ``--config k=v``) on top.

    The one place a run's config is assembled: the Snakefile (and so every cluster job, which Snakemake
    starts with the same ``--configfile``/``--config`` arguments), ``estimate``, ``bench`` and the make
    targets all come through here, so a file means one grid everywhere. ``extends`` is removed; a cycle
    or a missing file is a one-line :class:`ConfigError` naming the file."""
    cfg: dict = {}
    for path in configfiles or (DEFAULT_CONFIG,):
        deep_merge(cfg, _read_extended(Path(path), ()))
    return deep_merge(cfg, copy.deepcopy(dict(overrides or {})))


def config_chain(path: str | Path, seen: tuple[Path, ...] = ()) -> list[Path]:
    """The files ``path`` is made of, the base of its ``extends`` chain first, ``path`` last."""
    path = Path(os.path.abspath(path))
    if path in seen:
        loop = " -> ".join(p.name for p in (*seen[seen.index(path) :], path))
        raise ConfigError(f"config file {seen[-1]}: 'extends' makes a cycle ({loop})")
    raw = _read_file(path, seen[-1] if seen else None)
    parent = raw.get(EXTENDS)
    if parent is None:
        return [path]
    if not isinstance(parent, str) or not parent:
        raise ConfigError(f"config file {path}: 'extends' must be one file path (relative to {path.parent})")
    return [*config_chain(path.parent / parent, (*seen, path)), path]


def _read_extended(path: Path, seen: tuple[Path, ...]) -> dict:
    """One command-line file with the files it extends under it, ``extends`` removed."""
    cfg: dict = {}
    for p in config_chain(path, seen):
        raw = _read_file(p, None)
        raw.pop(EXTENDS, None)
        deep_merge(cfg, raw)
    return cfg


def _read_file(path: Path, extended_by: Path | None) -> dict:
    """A config file's mapping (``{}`` for an empty file)."""
    if not path.is_file():
        if extended_by is not None:
            raise ConfigError(f"config file {extended_by}: 'extends' names {path}, which does not exist")
        raise ConfigError(f"config file {path} does not exist")
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {path}: must be a mapping of keys, not {type(raw).__name__}")
    return raw


def load_config(configfiles: str | Path | Sequence[str | Path] = (), overrides: Mapping | None = None) -> dict:
    """:func:`resolve_config` then :func:`validate`: the config a run of these files uses."""
    files = [configfiles] if isinstance(configfiles, str | Path) else list(configfiles)
    return validate(resolve_config(files, overrides))


def snakemake_config(workflow, config: dict) -> dict:
    """Inside the Snakefile: the run's validated config from Snakemake's command line (``--configfile``
    files, else config.yaml; ``--config`` on top) through :func:`resolve_config`.

    Snakemake has already merged the command-line files as written (``extends`` unresolved) into
    ``config``; it is replaced by the resolved dict. The files read are registered as the workflow's
    config files (Snakemake's metadata, and the source archive of non-shared-filesystem executors)."""
    settings = workflow.config_settings
    files = [Path(f) for f in settings.configfiles] or [Path(DEFAULT_CONFIG)]
    raw = resolve_config(files, dict(settings.config))
    config.clear()
    config.update(copy.deepcopy(raw))
    known = {os.path.abspath(f) for f in workflow.configfiles}
    for path in (p for f in files for p in config_chain(f)):
        if str(path) not in known:
            known.add(str(path))
            workflow.configfiles.append(path)
    return validate(raw)


def deep_merge(base: dict, over: dict) -> dict:
    """``over`` into ``base`` in place: nested mappings merge, anything else replaces."""
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = v
    return base


# --- slices: the part of the config that shapes one output (for params: and manifests) ---


def index_embedding(cfg: dict, index: str) -> dict:
    """The encoder of a dense index: the global ``embedding``, or its ``embedding_models`` entry over
    it. An index with its own encoder has its own vectors and cache keys; the default indexes' slices
    (and so their hashes and cached vectors) are unchanged."""
    name = cfg["indexes"][index].get("embedding")
    if not name:
        return cfg["embedding"]
    return {**cfg["embedding"], **{k: v for k, v in cfg["embedding_models"][name].items() if k != "package"}}


# How many threads a job uses says how it runs, not what it computes: ``threads`` stays out of the hashed
# slices (a changed thread count reruns nothing). Under Snakemake a job takes the threads it was granted
# (the rule's ``threads:``, from these same config keys; pipeline/cores.py).
EXECUTION_ONLY_THREADS = frozenset({"threads"})


def hashed_embedding(cfg: dict, index: str) -> dict:
    """:func:`index_embedding` as the slices carry it: without the execution-only ``threads``."""
    return {k: v for k, v in index_embedding(cfg, index).items() if k not in EXECUTION_ONLY_THREADS}


def index_slice(cfg: dict, index: str) -> dict:
    idx = cfg["indexes"][index]
    kind = kind_of(idx)
    return {
        "index": idx,
        "name": index,
        **({"embedding": hashed_embedding(cfg, index)} if kind.embeds else {}),
        **(kind.extra_slice(SproutSpec.from_dict(cfg["sprout"])) if kind.extra_slice else {}),
    }


def sprout_attention_slice(cfg: dict) -> dict:
    """The attention pass's keys of ``sprout`` (its ``threads`` are execution-only, as the encoders')."""
    return SproutSpec.from_dict(cfg["sprout"]).attention.hashed()


def retrieval_indexes(cfg: dict, variant: str) -> list[str]:
    r = cfg["retrieval"][variant]
    return [r["index"]] + ([r["hybrid"]["index"]] if r.get("hybrid") else [])


# LLM settings that say how a run executes, not what it computes: they stay out of the slices (and
# hashes) that decide what reruns. The answer rule passes them apart (``--llm-exec``, see
# ``llm_execution``): a changed concurrency or rate limit reruns nothing.
EXECUTION_ONLY = {
    "envvars",
    "concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "per_model",
    "max_failure_rate",
    "max_cost_usd",
    "cache_journal",
    "malformed_retries",
    "prices",
    "confirm_spend",
}


def llm_execution(cfg: dict) -> dict:
    """The execution-only LLM settings (and the cache mode) an answering job needs; the LLM cache's
    journal is the top-level ``cache_journal`` unless ``llm.cache_journal`` sets its own."""
    llm = cfg.get("llm") or {}
    out = {k: v for k, v in llm.items() if k in (EXECUTION_ONLY - {"envvars"}) | {"mode"}}
    if cfg.get("cache_journal") and "cache_journal" not in out:
        out["cache_journal"] = cfg["cache_journal"]
    return out


def model_endpoint_slice(cfg: dict, model: str | None) -> dict:
    """The hashed part of ``llm.per_model.<model>``: its ``api_base`` (a new endpoint reruns the jobs
    that call the model; its key variable, timeout and limits do not). Empty when none is set, so the
    slices of models without one are those of before."""
    llm = cfg.get("llm") or {}
    base = ((llm.get("per_model") or {}).get(model or llm.get("model") or "") or {}).get("api_base")
    return {"per_model": {model or llm.get("model"): {"api_base": base}}} if base else {}


def retrieval_slice(cfg: dict, variant: str) -> dict:
    indexes = {n: cfg["indexes"][n] for n in retrieval_indexes(cfg, variant)}
    dense = [n for n, idx in indexes.items() if kind_of(idx).embeds]
    out = {
        "retrieval": cfg["retrieval"][variant],
        "name": variant,
        "indexes": indexes,
        "embedding": hashed_embedding(cfg, dense[0]) if dense else None,
    }
    planner = cfg["retrieval"][variant].get("planner") or {}
    if PlannerSpec.from_dict(planner).calls_llm:
        out["llm"] = {k: v for k, v in cfg["llm"].items() if k not in EXECUTION_ONLY}
        out["llm"].update(model_endpoint_slice(cfg, planner.get("model")))
    return out


def answering_slice(cfg: dict, variant: str) -> dict:
    a = cfg["answering"][variant]
    out = {"answering": a, "name": variant, "upstream": retrieval_slice(cfg, a["retrieval"])}
    if answer_backends.calls_llm(a["backend"]):
        out["llm"] = {k: v for k, v in cfg["llm"].items() if k not in EXECUTION_ONLY | {"mode"}}
        out["llm"].update(model_endpoint_slice(cfg, a.get("model")))
    return out


def config_hash(cfg: dict) -> str:
    return stable_hash(cfg)
