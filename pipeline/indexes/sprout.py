"""The ``sprout`` kind: SproutRAG's attention-built binary trees over two-sentence leaf chunks,
searched by beam search. Its building blocks (attention pass, head training, Kruskal trees, beam
search, store) are the ``pipeline.sprout`` package and the ``sprout_*`` rules; this module is what
makes it an index kind like the others."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline import paths
from pipeline.config_schema import key
from pipeline.registry.index_kinds import ConfigError, IndexJob, IndexKind, IndexSpec, SearchJob, register
from pipeline.specs import BeamSpec, SproutSpec


@dataclass(frozen=True)
class SproutIndexSpec(IndexSpec):
    heads: str = key(
        "head weights (trained: the sprout_train rule's file)", choices=("uniform", "trained"), default="uniform"
    )


def build(job: IndexJob) -> dict:
    """The index verb's job -> one typed sprout build job."""
    from pipeline.sprout.stage import SproutIndexJob, build_sprout_index

    assert isinstance(job.spec, SproutIndexSpec)
    return build_sprout_index(
        SproutIndexJob(
            tree_paths=job.trees,
            out=job.out,
            heads=job.spec.heads,
            attention_path=job.inputs["sprout_attention"],
            head_weights=job.inputs.get("head_weights"),
            params=job.provenance,
        )
    )


def searcher(job: SearchJob):
    """The variant's beam (its searcher settings) and the query encoder, typed."""
    from pipeline.sprout.searcher import SproutSearcher, query_encoder

    # its query encoder runs on embedding.threads' default: the threads are not in the hashed slice
    threads = job.embedding.threads if job.embedding else None
    return SproutSearcher(job.path, job.settings, query_encoder(threads), job.cache_dir)


def check(spec: SproutIndexSpec, sprout: SproutSpec) -> None:
    if spec.heads == "trained" and sprout.train is None:
        raise ConfigError.at(f"indexes.{spec.name}.heads", "'trained' needs a sprout.train section")


def extra_inputs(spec: SproutIndexSpec, dataset: str) -> dict[str, str]:
    """The attention file, and the trained head weights when the index uses them."""
    trained = spec.heads == "trained"
    return {
        "sprout_attention": paths.sprout_attention(dataset),
        **({"head_weights": paths.SPROUT_HEAD_WEIGHTS} if trained else {}),
    }


def attention_slice(sprout: SproutSpec) -> dict:
    """Its own encoder pass (the attention settings), not the embedding backend, shapes the file."""
    return {"sprout": sprout.attention.hashed()}


KIND = register(
    IndexKind(
        name="sprout",
        build=build,
        searcher=searcher,
        source="sprout",
        levels=frozenset({"chunk"}),
        default_levels=("chunk",),
        default_expand="none",
        spec=SproutIndexSpec,
        search_spec=BeamSpec,
        no_expand="sprout nodes are their own context (use none)",
        parents_are_context=False,
        sweeps_beam=True,
        check_index=check,
        extra_inputs=extra_inputs,
        extra_slice=attention_slice,
    )
)
