"""The ``sprout`` kind: SproutRAG's attention-built binary trees over two-sentence leaf chunks,
searched by beam search. Its building blocks (attention pass, head training, Kruskal trees, beam
search, store) are the ``pipeline.sprout`` package and the ``sprout_*`` rules; this module is what
makes it an index kind like the others."""

from __future__ import annotations

from pathlib import Path

from pipeline import layout as L
from pipeline.index_kinds import ConfigProblem, IndexKind, register
from pipeline.specs import BEAM_KEYS, BeamSpec, SproutSpec


def build(tree_paths: list[str], out: str, params: dict, inputs: dict, cache_dir: str) -> dict:
    """The index verb's driver: the hashed index slice -> one typed build job."""
    from pipeline.sprout.stage import SproutIndexJob, build_sprout_index

    job = SproutIndexJob(
        tree_paths=tree_paths,
        out=out,
        heads=params["index"]["heads"],  # validated: index_defaults below filled it
        attention_path=inputs["sprout_attention"],
        head_weights=inputs.get("head_weights"),
        params=params,
    )
    return build_sprout_index(job)


def searcher(path: Path, params: dict, cache_dir: str | Path):
    """The retrieve verb's driver: the variant's beam and the query encoder, typed."""
    from pipeline.sprout.searcher import SproutSearcher, query_encoder

    threads = (params.get("embedding") or {}).get("threads")  # None: the schema's default
    return SproutSearcher(path, BeamSpec.from_dict(params["retrieval"]), query_encoder(threads), cache_dir)


def check(name: str, idx: dict, cfg: dict) -> None:
    if idx["heads"] == "trained" and SproutSpec.from_dict(cfg.get("sprout") or {}).train is None:
        raise ConfigProblem(f"indexes.{name}.heads", "'trained' needs a sprout.train section")


def extra_inputs(cfg: dict, dataset: str, index: str) -> dict[str, str]:
    """The attention file, and the trained head weights when the index uses them."""
    trained = cfg["indexes"][index]["heads"] == "trained"  # validated: index_defaults filled it
    return {
        "sprout_attention": L.sprout_attention(dataset),
        **({"head_weights": L.SPROUT_HEAD_WEIGHTS} if trained else {}),
    }


def attention_slice(cfg: dict) -> dict:
    """Its own encoder pass (the attention settings), not the embedding backend, shapes the file."""
    return {"sprout": SproutSpec.from_dict(cfg["sprout"]).attention.hashed()}


KIND = register(
    IndexKind(
        name="sprout",
        build=build,
        searcher=searcher,
        source="sprout",
        levels=frozenset({"chunk"}),
        default_levels=("chunk",),
        default_expand="none",
        index_keys=frozenset({"heads"}),
        index_defaults={"heads": "uniform"},
        retrieval_keys=frozenset(BEAM_KEYS),
        no_expand="sprout nodes are their own context (use none)",
        parents_are_context=False,
        check_index=check,
        extra_inputs=extra_inputs,
        extra_slice=attention_slice,
    )
)
