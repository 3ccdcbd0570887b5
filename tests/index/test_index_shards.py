"""Dense indexes built in shards (pipeline/shards.py, pipeline/index_structures/parts.py): the merged index is
the whole build's, byte for byte, whatever the cut."""

import numpy as np
import pytest

from pipeline.cli import main
from pipeline.index_structures.parts import merge_parts, write_part_meta
from pipeline.index_structures.store import IndexWriter, StoredNode
from pipeline.registry.index_kinds import IndexJob, IndexSpec
from pipeline.shards import plan, read_sizes

INDEXES = {"hier": {"kind": "tree"}, "flat": {"kind": "chunks", "chunk_tokens": 256, "overlap_tokens": 32}}


@pytest.fixture(scope="module")
def trees_dir(three_trees, tmp_path_factory):
    root = tmp_path_factory.mktemp("trees")
    for tree in three_trees:
        tree.save(root / f"{tree.doc_id}.json")
    return root


@pytest.fixture(scope="module")
def params():
    from pipeline import workflow as wf
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO

    cfg = load_config(REPO / "tests" / "tiny.yaml", {"indexes": INDEXES})
    return {name: wf.index_params(cfg, name) for name in INDEXES}


def _sharded(trees_dir, params: str, name: str, root, max_chars: int) -> tuple[bytes, bytes, int]:
    """The index and manifest bytes the shard jobs and their merge write (a cache of their own)."""
    sizes = root / "sizes.csv"
    main(["doc-sizes", "--trees", str(trees_dir), "--out", str(sizes)])
    shards = plan(read_sizes(sizes), max_chars)
    parts = []
    for shard in shards:
        part = root / "parts" / name / f"{shard.id}.sqlite"
        main(["index-part", "--trees", str(trees_dir), "--sizes", str(sizes), "--shard", shard.id, "--params", params,
              "--cache-dir", str(root / "cache"), "--out", str(part)])
        parts += ["--part", str(part)]
    out = root / f"{name}.sqlite"
    main(["index", "--trees", str(trees_dir), "--params", params, "--cache-dir", str(root / "no-cache"),
          "--out", str(out), *parts])
    assert not (root / "no-cache" / "embeddings.sqlite").exists()  # the merge embeds nothing
    return out.read_bytes(), out.with_name(f"{name}.sqlite.manifest.json").read_bytes(), len(shards)


@pytest.mark.parametrize("name", sorted(INDEXES))
def test_three_shards_merge_into_the_whole_builds_bytes(trees_dir, params, name, tmp_path):
    whole = tmp_path / "whole" / f"{name}.sqlite"
    main(["index", "--trees", str(trees_dir), "--params", params[name], "--cache-dir", str(tmp_path / "whole"),
          "--out", str(whole)])
    expected = (whole.read_bytes(), whole.with_name(f"{name}.sqlite.manifest.json").read_bytes())
    # max_chars 1: each of the three documents is larger than the bound, so each is a shard of its own
    index, manifest, n = _sharded(trees_dir, params[name], name, tmp_path / "three", max_chars=1)
    assert n == 3
    assert index == expected[0]
    assert manifest == expected[1]
    index, manifest, n = _sharded(trees_dir, params[name], name, tmp_path / "one", max_chars=10**9)
    assert n == 1 and (index, manifest) == expected


def _part(path, dim_values: list[float], encoder_path: dict) -> str:
    writer = IndexWriter(path, 2, {"model_id": "m", "index": {"kind": "tree"}})
    writer.add([StoredNode(f"d{dim_values[0]}", "d", "sentence", "sentence", None, 0, 1, [1], "x")],
               np.array([dim_values], dtype=np.float32))
    write_part_meta(writer, {"sentence": 1}, encoder_path)
    writer.close()
    return str(path)


def test_the_merge_refuses_parts_computed_on_different_kernels(tmp_path):
    parts = (_part(tmp_path / "a.sqlite", [1.0, 0.0], {"label": "int8 (vnni)"}),
             _part(tmp_path / "b.sqlite", [0.0, 1.0], {"label": "int8 (avx2)"}))
    job = IndexJob(spec=IndexSpec(name="hier", kind="tree", embedding=None), trees=[], out=str(tmp_path / "i.sqlite"), inputs={},
                   cache_dir=str(tmp_path), embedding=None, provenance={"index": {"kind": "tree"}}, parts=parts)
    with pytest.raises(ValueError, match="disagree on the encoder path"):
        merge_parts(job)
    job = IndexJob(**{**job.__dict__, "parts": parts[:1], "provenance": {"index": {"kind": "chunks"}}})
    with pytest.raises(ValueError, match="another index configuration"):
        merge_parts(job)


@pytest.mark.slow
def test_the_dag_builds_indexes_and_attention_in_shards_with_the_unsharded_bytes(wattbot_dir, tmp_path):
    """The tiny grid's dense index and SproutRAG attention of WattBot (3 documents) and of its HotpotQA slice,
    through Snakemake: the default bound (one shard: today's single jobs) and a bound that cuts each dataset
    into 3 shard jobs per output and a merge."""
    from dag_runner import tiny_whole_and_cut

    datasets = ("wattbot", "hotpotqa")
    targets = [f"results/{d}/{f}" for d in datasets for f in ("index/hier.sqlite", "sprout/attention.safetensors")]
    runs = {}
    # each WattBot document over the bound; HotpotQA's 100 paragraphs in 3 shards
    for name, work in tiny_whole_and_cut(tmp_path, targets, "max_chars: 20000").items():
        parts = sorted(p.relative_to(work).as_posix() for p in work.glob("results/*/*/parts/**/*.*")
                       if not p.name.endswith(".manifest.json"))  # each part's manifest is its side file
        runs[name] = parts, {t: ((work / t).read_bytes(), (work / f"{t}.manifest.json").read_bytes()) for t in targets}
    assert runs["one"][0] == []  # one shard: each output built whole, as before shards
    assert [p.split("/")[1:3] for p in runs["three"][0]] == [[d, kind] for d in sorted(datasets)
                                                              for kind in ("index", "sprout") for _ in range(3)]
    assert runs["three"][1] == runs["one"][1]
