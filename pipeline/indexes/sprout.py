"""The ``sprout`` kind: SproutRAG's attention-built binary trees over two-sentence leaf chunks,
searched by beam search. Its building blocks (attention pass, head training, Kruskal trees, beam
search, store) are the ``pipeline.sprout`` package and the ``sprout_*`` rules; this module is what
makes it an index kind like the others."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline import layout as L
from pipeline.config_schema import spec_defaults
from pipeline.index_kinds import ConfigProblem, IndexJob, IndexKind, IndexSpec, SearchJob, register
from pipeline.specs import BeamSpec


@dataclass(frozen=True)
class SproutSpec(IndexSpec):
    heads: str  # uniform | trained (the sprout_train rule's weights)


def build(job: IndexJob) -> dict:
    from pipeline.sprout.stage import build_sprout_index

    params = job.provenance
    return build_sprout_index(
        job.trees, job.out, params["index"], job.inputs["sprout_attention"], job.inputs.get("head_weights"), params
    )


def searcher(job: SearchJob):
    from pipeline.sprout.searcher import SproutSearcher

    # its query encoder runs on embedding.threads' default: the threads are not in the hashed slice
    threads = job.embedding.threads if job.embedding else spec_defaults("embedding")["threads"]
    beam = {"top_k": job.retrieval.top_k, **asdict(job.settings)}
    return SproutSearcher(job.path, beam, job.cache_dir, threads)


def check(spec: SproutSpec, cfg: dict) -> None:
    if spec.heads == "trained" and not (cfg.get("sprout") or {}).get("train"):
        raise ConfigProblem(f"indexes.{spec.name}.heads", "'trained' needs a sprout.train section")


def extra_inputs(cfg: dict, dataset: str, index: str) -> dict[str, str]:
    """The attention file, and the trained head weights when the index uses them."""
    trained = cfg["indexes"][index].get("heads") == "trained"
    return {
        "sprout_attention": L.sprout_attention(dataset),
        **({"head_weights": L.SPROUT_HEAD_WEIGHTS} if trained else {}),
    }


def attention_slice(cfg: dict) -> dict:
    """Its own encoder pass (the attention settings), not the embedding backend, shapes the file."""
    from pipeline.config import sprout_attention_slice

    return {"sprout": sprout_attention_slice(cfg)}


KIND = register(
    IndexKind(
        name="sprout",
        build=build,
        searcher=searcher,
        source="sprout",
        levels=frozenset({"chunk"}),
        default_levels=("chunk",),
        default_expand="none",
        spec=SproutSpec,
        search_spec=BeamSpec,
        no_expand="sprout nodes are their own context (use none)",
        parents_are_context=False,
        check_index=check,
        extra_inputs=extra_inputs,
        extra_slice=attention_slice,
    )
)
