"""Resolution: the defaults of a config that depend on other entries (an ensemble's splits, a planner's
model, a corpus's paths), written into the validated config, and the lookups over it (a variant's splits,
a corpus's variants, the configured encoders)."""

from __future__ import annotations

from pipeline.config_schema import ConfigError, ConfigTree, fill_defaults
from pipeline.llm_models import serving_kind
from pipeline.registry import answer_backends, suite_datasets
from pipeline.specs import CorpusSpec, EncoderSpec, PlannerSpec


def corpus_specs(cfg: ConfigTree) -> dict[str, CorpusSpec]:
    """The ``corpora`` entries of a validated config, typed (their paths already resolved)."""
    return {name: CorpusSpec.from_dict(name, entry) for name, entry in sorted((cfg.get("corpora") or {}).items())}


def corpus_answer_variants(cfg: ConfigTree, name: str) -> list[str]:
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


def resolve_corpora(cfg: ConfigTree) -> None:
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


def resolve_planner(cfg: ConfigTree, name: str, variant: ConfigTree, planner: PlannerSpec) -> None:
    """The planner's kind's declared defaults written in; a kind that calls an LLM names a usable model, or
    inherits ``llm.model`` (written in)."""
    fill_defaults(type(planner), variant["planner"])
    if planner.calls_llm:
        check_llm_model(cfg, f"retrieval.{name}.planner.model", variant["planner"].get("model"))
        variant["planner"].setdefault("model", cfg["llm"].get("model"))


def resolve_suite(cfg: ConfigTree) -> None:
    """The ``suite`` block: ``{data_root}`` expanded in its root; its retrieval variants configured. (Each
    dataset's subset keys are the schema's: its loader's ``Subset``, pipeline/config/schema.py.)"""
    suite = cfg.get("suite")
    if not suite:
        return
    suite["root"] = suite["root"].format(data_root=cfg["data_root"])
    for name in suite["retrieval"]:
        if name not in cfg["retrieval"]:
            raise ConfigError(f"config key 'suite.retrieval': unknown retrieval variant '{name}'")


def resolve_answering(cfg: ConfigTree) -> None:
    """Each answering variant checked by its backend's spec (a key the backend does not take is an
    error naming it), its declared defaults written in, then resolved by it (an ensemble's splits and
    retrieval: its members')."""
    for name, variant in cfg["answering"].items():
        spec = answer_backends.get(variant["backend"]).spec
        spec.from_dict(name, variant)  # a key its backend does not take names itself before any is written
        fill_defaults(spec, variant)
        spec.resolve(name, variant, cfg)
        if "retrieval" not in variant:
            raise ConfigError(f"config key 'answering.{name}.retrieval': required by backend {variant['backend']}")


def check_llm_model(cfg: ConfigTree, key: str, model: str | None) -> None:
    """An LLM variant names a model, or inherits ``llm.model``; a model whose serving kind starts its server
    (``local_server``: ``local/<name>``) needs that server's config (``llm.local.<name>``)."""
    llm = cfg.get("llm") or {}
    model = model or llm.get("model")
    if not model:
        raise ConfigError(f"config key '{key}': required when the backend is llm (or set llm.model)")
    kind = serving_kind(model)
    name = kind.local_name(model)
    if kind.local_server and name not in (llm.get("local") or {}):
        raise ConfigError(
            f"config key '{key}': '{model}' needs a server config under llm.local."
            f"{name} (have {sorted(llm.get('local') or {})})"
        )


def model_encoders(cfg: ConfigTree) -> list[EncoderSpec]:
    """Every ``embedding_models`` entry over the global ``embedding`` (by name), as the encoder an index
    naming it builds (:func:`~pipeline.config.slices.index_embedding`)."""
    return [
        EncoderSpec.from_dict(
            {**cfg["embedding"], **{k: v for k, v in m.items() if k != "package"}}, f"embedding_models.{n}"
        )
        for n, m in sorted((cfg.get("embedding_models") or {}).items())
    ]


def answer_splits(cfg: ConfigTree, variant: str) -> list[str]:
    """The splits an answering variant answers: its ``splits`` or every split."""
    return sorted(cfg["answering"][variant].get("splits") or cfg["wattbot"]["splits"])
