"""index and SproutRAG's attention, training and report verbs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from pipeline.verbs.base import add_named_args, json_arg, named_pairs, tree_paths, verb

if TYPE_CHECKING:
    from pipeline.registry.index_kinds import IndexJob


def index_job(params: dict, trees: list[str], out: str, inputs: list[str], cache_dir: str) -> IndexJob:
    """The typed job of one ``index`` (or ``index_part``) rule: its params (the hashed index slice) parsed once."""
    from pipeline.registry.index_kinds import IndexJob, kind_of
    from pipeline.specs import EncoderSpec

    kind = kind_of(params["index"])
    return IndexJob(
        spec=kind.parse(params.get("name", ""), params["index"]),
        trees=trees,
        out=out,
        inputs=dict(s.split("=", 1) for s in inputs),
        cache_dir=cache_dir,
        embedding=EncoderSpec.from_dict(params["embedding"]) if kind.embeds else None,
        provenance=params,
    )


def _sharded_kind(job: IndexJob):
    from pipeline.registry.index_kinds import get_kind

    kind = get_kind(job.spec.kind)
    if (job.part or job.parts) and not kind.shards:
        raise SystemExit(f"index kind '{kind.name}' is not built in shards (its build needs the whole corpus)")
    return kind


def cmd_index(a) -> None:
    job = index_job(json_arg(a.params), tree_paths(a.trees), a.out, a.input, a.cache_dir)
    job = replace(job, parts=tuple(a.part))
    print(json.dumps(_sharded_kind(job).build(job)))


def cmd_index_part(a) -> None:
    from pipeline.shards import Shard, read_sizes, select

    docs = Shard.from_id(a.shard).docs(read_sizes(a.sizes))
    job = replace(index_job(json_arg(a.params), select(tree_paths(a.trees), docs), a.out, [], a.cache_dir), part=True)
    print(json.dumps(_sharded_kind(job).build(job)))


def cmd_doc_sizes(a) -> None:
    from pipeline.io import atomic_write_text
    from pipeline.provenance import write_manifest
    from pipeline.shards import doc_id_of, sizes_text
    from pipeline.tree import DocTree

    paths = tree_paths(a.trees)
    atomic_write_text(a.out, sizes_text((doc_id_of(p), len(DocTree.load(p).text)) for p in paths))
    write_manifest(a.out, {}, inputs=sorted(paths))
    print(json.dumps({"documents": len(paths)}))


def cmd_sprout_attention(a) -> None:
    from pipeline.specs import AttentionSpec
    from pipeline.sprout.stage import compute_attention, merge_attention

    spec = AttentionSpec.from_dict(json_arg(a.params))
    if a.part:
        print(json.dumps(merge_attention(tree_paths(a.trees), spec, a.part, a.out)))
    else:
        print(json.dumps(compute_attention(tree_paths(a.trees), spec, a.out)))


def cmd_sprout_windows(a) -> None:
    from pipeline.specs import AttentionSpec
    from pipeline.sprout.stage import plan_attention_windows

    spec = AttentionSpec.from_dict(json_arg(a.params))
    print(json.dumps(plan_attention_windows(tree_paths(a.trees), spec, a.out)))


def cmd_sprout_attention_part(a) -> None:
    from pipeline.shards import Shard, read_sizes, select
    from pipeline.specs import AttentionSpec
    from pipeline.sprout.stage import compute_attention_part

    trees = select(tree_paths(a.trees), Shard.from_id(a.shard).docs(read_sizes(a.sizes)))
    spec = AttentionSpec.from_dict(json_arg(a.params))
    print(json.dumps(compute_attention_part(trees, spec, a.windows, a.out)))


def cmd_sprout_train_pairs(a) -> None:
    from pipeline.specs import AttentionSpec, TrainSpec
    from pipeline.sprout.train import TrainPairsJob, prepare_pairs

    p = json_arg(a.params)
    job = TrainPairsJob(
        train=TrainSpec.from_dict(p["train"]),
        attention=AttentionSpec.from_dict(p["attention"]),
        root=p["root"],
        exclude=named_pairs(a.exclude),
        work_dir=a.work_dir,
        out=a.out,
    )
    print(json.dumps(prepare_pairs(job)))


def cmd_sprout_train(a) -> None:
    from pipeline.specs import TrainSpec
    from pipeline.sprout.train import train_heads

    print(json.dumps(train_heads(a.pairs, TrainSpec.from_dict(json_arg(a.params)["train"]), a.out)))


def cmd_sprout_train_fold(a) -> None:
    from pipeline.specs import TrainSpec
    from pipeline.sprout.train import FoldJob, train_heads

    fold = FoldJob(a.dataset, a.fold, a.export_dir)
    print(json.dumps(train_heads(a.pairs, TrainSpec.from_dict(json_arg(a.params)["train"]), a.out, fold)))


def cmd_sprout_report(a) -> None:
    from pipeline.report.pages.sprout import build_sprout_report
    from pipeline.workflow.report_settings import sprout_report_params

    params = sprout_report_params(json_arg(a.params))
    build_sprout_report(params, named_pairs(a.scores), named_pairs(a.wattbot), a.gold, a.index, a.reports)


def add_verbs(sub) -> None:
    """index and SproutRAG's attention, training and report verbs."""

    s = verb(sub, "index", cmd_index, "build one index variant", "--params", "--cache-dir", "--out")
    s.add_argument("--trees", required=True, help="a folder of tree JSONs or a comma-separated list")
    s.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="an extra input of the index kind (sprout: sprout_attention=, head_weights=)",
    )
    s.add_argument(
        "--part",
        action="append",
        default=[],
        metavar="PATH",
        help="a shard's part (index-part) to merge, in document order, instead of building (repeatable)",
    )

    s = verb(
        sub,
        "sprout-attention",
        cmd_sprout_attention,
        "SproutRAG: windowed encoder passes -> chunk-pair attention file",
        "--trees",
        "--params",
        "--out",
    )
    s.add_argument(
        "--part",
        action="append",
        default=[],
        metavar="PATH",
        help="a shard's part (sprout-attention-part) to join, in document order, instead of computing (repeatable)",
    )

    _add_shard_verbs(sub)

    _add_training_verbs(sub)

    s = sub.add_parser("sprout-report", help="SproutRAG: beam-width figure and one document's tree")
    s.add_argument("--params", required=True)
    add_named_args(
        s,
        ("scores", "DATASET:VARIANT=JSON: suite scores of the sweep's variants"),
        ("wattbot", "VARIANT=JSONL: WattBot retrieval runs (scored split) of the sweep"),
    )
    s.add_argument("--gold", default=None, help="the WattBot scored split's CSV (the sweep's WattBot recall)")
    s.add_argument("--index", default=None, help="a WattBot sprout index (its smallest tree is dumped)")
    s.add_argument("--reports", required=True)
    s.set_defaults(fn=cmd_sprout_report)


def _add_training_verbs(sub) -> None:
    """SproutRAG's head training: the pairs, one training, one cross-fitting fold's."""
    s = verb(
        sub,
        "sprout-train-pairs",
        cmd_sprout_train_pairs,
        "SproutRAG: cache per-head attention of co-relevant pairs",
        "--params",
        "--work-dir",
        "--out",
    )
    s.add_argument("--exclude", action="append", default=[], help="DATASET=EXPORT_DIR evaluated (kept out), repeatable")

    verb(
        sub,
        "sprout-train",
        cmd_sprout_train,
        "SproutRAG: train the head weights on the cached pairs",
        "--pairs",
        "--params",
        "--out",
    )

    s = verb(
        sub,
        "sprout-train-fold",
        cmd_sprout_train_fold,
        "SproutRAG cross-fitting: train one fold's head weights on the examples outside it",
        "--pairs",
        "--params",
        "--dataset",
        "--export-dir",
        "--out",
    )
    s.add_argument("--fold", type=int, required=True, help="the fold held out (0..folds-1)")


def _add_shard_verbs(sub) -> None:
    """The verbs of per-document work in shards (pipeline/shards.py): sizes, parts and the window plan."""
    verb(
        sub,
        "index-part",
        cmd_index_part,
        "build one shard's part of a dense index (the index verb's --part merges them)",
        "--trees",
        "--sizes",
        "--shard",
        "--params",
        "--cache-dir",
        "--out",
    )

    verb(
        sub, "doc-sizes", cmd_doc_sizes, "each document's characters, the file shards are cut from", "--trees", "--out"
    )

    verb(
        sub,
        "sprout-windows",
        cmd_sprout_windows,
        "SproutRAG: every window's pass and padded shape, what each shard's attention job pads to",
        "--trees",
        "--params",
        "--out",
    )

    verb(
        sub,
        "sprout-attention-part",
        cmd_sprout_attention_part,
        "SproutRAG: one shard's part of the attention file (sprout-attention --part joins them)",
        "--trees",
        "--sizes",
        "--shard",
        "--windows",
        "--params",
        "--out",
    )
