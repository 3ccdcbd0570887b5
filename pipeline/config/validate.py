"""Validate a raw config: the schema (generated from the declared keys, pipeline/config/schema.py), then the
cross-references section by section, in a fixed order (a config with several mistakes always reports the
same one); the result is the resolved config, every declared default written in (the schema's filler for the
fixed sections, the entry's own kind here and in pipeline/config/resolve.py for a registered entry's keys)."""

from __future__ import annotations

import copy

import jsonschema

from pipeline.config.aliases import rename_keys
from pipeline.config.drops import DROPPED, drop_entries
from pipeline.config.resolve import (
    answer_splits,
    check_llm_model,
    resolve_answering,
    resolve_corpora,
    resolve_planner,
    resolve_suite,
)
from pipeline.config.schema import full_schema
from pipeline.config.secrets import check_credentials
from pipeline.config_schema import ConfigError, ConfigTree, fill_and_check
from pipeline.llm_models import serving_kind
from pipeline.registry import answer_backends, metrics
from pipeline.registry.index_kinds import get_kind, kind_names, kind_of
from pipeline.registry.retrieval_modes import FUSIONS
from pipeline.specs import RetrievalSpec, SproutSpec


def _key_path(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "<top level>"


def schema_error(error: jsonschema.ValidationError) -> ConfigError:
    """One line naming the key: an unknown or a missing key by its own dotted name (an unknown one with the keys
    its table takes), as the specs' parser names it (pipeline/config_schema.py ``parse_spec``)."""
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        takes = sorted(dict(error.schema).get("properties") or {})  # type: ignore[arg-type]
        unknown = sorted(set(error.instance) - set(takes))
        if unknown:
            table = where or "the config"
            return ConfigError.at(
                f"{where}.{unknown[0]}" if where else unknown[0], f"not a key of {table} (takes {takes})"
            )
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]  # type: ignore[union-attr]
        if missing:
            return ConfigError.at(f"{where}.{missing[0]}" if where else missing[0], "required")
    return ConfigError.at(_key_path(error), error.message)


def validate(cfg: ConfigTree) -> dict:
    """Check ``cfg`` against the schema and its cross-references; return it resolved.

    A key under its old name is renamed first (pipeline/config/aliases.py), an entry set to null in a named
    table is dropped (pipeline/config/drops.py). Resolution writes the declared defaults in, then the
    defaults that depend on other entries (a retrieval variant's levels on its index kind, an ensemble's
    splits on its members, ...), and expands ``{data_root}`` in the paths. The input dict is not modified. The checks run section
    by section in a fixed order, so a config with several mistakes always reports the same one.
    """
    cfg = copy.deepcopy(dict(cfg))
    rename_keys(cfg)
    check_credentials(cfg)  # keys and values that look like credentials (pipeline/config/secrets.py)
    dropped = drop_entries(cfg)  # `name: null` entries (pipeline/config/drops.py), before the schema sees them
    errors = fill_and_check(cfg, full_schema())
    if errors:
        raise schema_error(errors[0])
    sprout = SproutSpec.from_dict(cfg["sprout"])  # the block's own checks (windows that cover the text)
    for name, idx in cfg["indexes"].items():
        _check_index(cfg, name, idx, sprout)
    for name, variant in cfg["retrieval"].items():
        resolve_planner(cfg, name, variant, _check_retrieval(cfg, name, variant).planner)
    resolve_answering(cfg)
    _check_per_model(cfg["llm"])
    for name, variant in cfg["answering"].items():
        _check_answering(cfg, name, variant)
    _check_splits(cfg)
    _check_power_subsets(cfg)
    _check_index_embeddings(cfg)
    resolve_suite(cfg)
    check_report(cfg)
    _check_sprout(cfg)
    cfg["wattbot"]["dir"] = cfg["wattbot"]["dir"].format(data_root=cfg["data_root"])
    resolve_corpora(cfg)
    if dropped:
        cfg[DROPPED] = dropped
    return cfg


def _check_answering(cfg: ConfigTree, name: str, variant: ConfigTree) -> None:
    """One ``answering.<name>`` variant: a known retrieval, a usable model, splits that include the score split."""
    if variant["retrieval"] not in cfg["retrieval"]:
        raise ConfigError(
            f"config key 'answering.{name}.retrieval': unknown retrieval variant '{variant['retrieval']}'"
        )
    if answer_backends.calls_llm(variant["backend"]):
        check_llm_model(cfg, f"answering.{name}.model", variant.get("model"))
    bad = sorted(set(variant.get("splits", [])) - set(cfg["wattbot"]["splits"]))
    if bad:
        raise ConfigError(f"config key 'answering.{name}.splits': {bad} not in wattbot.splits")
    score_split = cfg["wattbot"]["score_split"]
    if variant.get("splits") and score_split in cfg["wattbot"]["splits"] and score_split not in variant["splits"]:
        raise ConfigError(f"config key 'answering.{name}.splits': must include the score split '{score_split}'")


def _check_splits(cfg: ConfigTree) -> None:
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


def _check_power_subsets(cfg: ConfigTree) -> None:
    """``power_subsets``: a labelled split besides the score split; each group's variants answer it, each in
    one group only, the default variant in none (it answers every question: the submission), and no
    ensemble votes a sampled member on it (the members' ids would differ)."""
    ps = cfg.get("power_subsets")
    if not ps:
        return
    wb, split = cfg["wattbot"], ps["split"]
    if split not in (wb.get("solutions") or {}) or split == wb["score_split"]:
        raise ConfigError(
            f"config key 'power_subsets.split': '{split}' is not a labelled split besides the score split "
            "(wattbot.solutions)"
        )
    seen: dict[str, str] = {}
    for group, spec in ps["groups"].items():
        for v in spec["variants"]:
            where = f"power_subsets.groups.{group}.variants"
            if v not in cfg["answering"] or split not in answer_splits(cfg, v):
                raise ConfigError(f"config key '{where}': '{v}' is not an answering variant that answers '{split}'")
            if v in seen or v == cfg["default_variant"]:
                why = f"also in group '{seen[v]}'" if v in seen else "the default variant answers every question"
                raise ConfigError(f"config key '{where}': '{v}': {why}")
            seen[v] = group
    for name, variant in cfg["answering"].items():
        sampled = [m for m in variant.get("members") or [] if m in seen]
        if sampled and split in answer_splits(cfg, name):
            raise ConfigError(
                f"config key 'answering.{name}.splits': it votes {sampled[0]}, which answers a power-sized "
                f"sample of '{split}' (power_subsets): leave '{split}' out of its splits"
            )


def _check_index_embeddings(cfg: ConfigTree) -> None:
    """An index's ``embedding`` names an ``embedding_models`` entry, on a kind that embeds."""
    for name, idx in cfg["indexes"].items():
        if idx.get("embedding") and idx["embedding"] not in (cfg.get("embedding_models") or {}):
            raise ConfigError(f"config key 'indexes.{name}.embedding': '{idx['embedding']}' is not in embedding_models")
        if idx.get("embedding") and not kind_of(idx).embeds:
            raise ConfigError(f"config key 'indexes.{name}.embedding': only {_kinds_with('embeds')} indexes embed")


def _check_sprout(cfg: ConfigTree) -> None:
    """The ``sprout`` block: the beam sweep names sprout variants; windows cover the text."""
    sprout = cfg["sprout"]
    for name in sprout.get("beam_sweep", []):
        if name not in cfg["retrieval"] or not kind_of(cfg["indexes"][cfg["retrieval"][name]["index"]]).sweeps_beam:
            raise ConfigError(f"config key 'sprout.beam_sweep': '{name}' is not a retrieval variant of a sprout index")


def _kinds_with(attr: str) -> str:
    """'tree and chunks': the registered kinds with a true ``attr``, for messages."""
    return " and ".join(n for n in kind_names() if getattr(get_kind(n), attr))


def _check_index(cfg: ConfigTree, name: str, idx: ConfigTree, sprout: SproutSpec) -> None:
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


def _check_retrieval(cfg: ConfigTree, name: str, variant: ConfigTree) -> RetrievalSpec:
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
    for searcher in (kind, kind_of(other)) if other else (kind,):
        for key, default in sorted(searcher.search_defaults().items()):
            variant.setdefault(key, default)
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


def _check_searcher_keys(name: str, variant: ConfigTree, takes: frozenset[str]) -> None:
    """A key of another kind's searcher names the kind that takes it."""
    for owner in kind_names():
        for key in sorted(get_kind(owner).retrieval_keys - takes):
            if key in variant:
                raise ConfigError(
                    f"config key 'retrieval.{name}.{key}': only variants that use a {owner} index take it"
                )


def _roles(role: str) -> str:
    return "/".join(n for n in kind_names() if get_kind(n).hybrid_role == role)


def check_report(cfg: ConfigTree) -> None:
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
    _check_metrics(cfg)


def _check_metrics(cfg: ConfigTree) -> None:
    """``report.metrics``: registered measures (pipeline/registry/metrics.py), each cutoff one it is computed at."""
    picked = cfg["report"].get("metrics")
    if picked:
        ks = (cfg.get("suite") or {}).get("ks")
        try:
            metrics.check_picks(picked, ks)
        except (KeyError, ValueError) as e:
            raise ConfigError(f"config key 'report.metrics': {e.args[0]}") from None


def _check_per_model(llm: ConfigTree) -> None:
    """A model whose serving kind starts its server (``local_server``: ``local/<name>``) runs on the server
    the job starts: no endpoint or key of its own."""
    for model, entry in (llm.get("per_model") or {}).items():
        kind = serving_kind(model)
        for key in ("api_base", "api_key_env"):
            if kind.local_server and key in (entry or {}):
                raise ConfigError(
                    f"config key 'llm.per_model.{model}.{key}': a {kind.prefix} model is served by the job itself "
                    f"(llm.local.{kind.local_name(model)}); for a server of your own use openai/<served name>"
                )
