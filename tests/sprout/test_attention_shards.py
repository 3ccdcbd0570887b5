"""SproutRAG's attention in shards of documents (pipeline/shards.py): each shard's windows padded to the shape
of their pass in the whole dataset, the parts joined into the whole job's bytes, whatever the cut."""
from __future__ import annotations

import pytest

from pipeline.cli import main
from pipeline.shards import plan, read_sizes
from pipeline.tree import ParagraphSpec, build_tree, SectionSpec

LENGTHS = (3, 9, 5, 14, 2, 7, 11, 4, 6, 13, 8, 3, 10, 5, 12, 2, 9, 6, 4, 15)  # sentences per document


@pytest.fixture(scope="module")
def short_docs(three_trees, tmp_path_factory):
    """Short documents of real sentences (runs of the three WattBot papers), one window each and of many
    lengths: the whole dataset's passes pad them together, so a shard's own passes would pad them otherwise."""
    sentences = [n.text for t in three_trees for n in t.at_level("sentence")][:sum(LENGTHS)]
    root = tmp_path_factory.mktemp("short-docs")
    start = 0
    for i, n in enumerate(LENGTHS):
        sents = sentences[start:start + n]
        start += n
        paras = [ParagraphSpec(sents[j:j + 4]) for j in range(0, n, 4)]
        build_tree(f"doc{i:02d}", f"doc {i}", [SectionSpec("s", paras)]).save(root / f"doc{i:02d}.json")
    return root


@pytest.fixture(scope="module")
def params():
    from pipeline import workflow as wf
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO

    return wf.sprout_attention_params(load_config(REPO / "tests" / "tiny.yaml"))


def _bytes(out):
    return out.read_bytes(), out.with_name(out.name + ".manifest.json").read_bytes()


def test_three_shards_join_into_the_whole_jobs_bytes_and_their_own_passes_would_not(short_docs, params, tmp_path):
    whole = tmp_path / "whole.safetensors"
    main(["sprout-attention", "--trees", str(short_docs), "--params", params, "--out", str(whole)])
    sizes = tmp_path / "sizes.csv"
    main(["doc-sizes", "--trees", str(short_docs), "--out", str(sizes)])
    total = sum(c for _, c in read_sizes(sizes))
    shards = next(p for b in range(total // 3, total) if len(p := plan(read_sizes(sizes), b)) == 3)
    windows = tmp_path / "windows.json"
    main(["sprout-windows", "--trees", str(short_docs), "--params", params, "--out", str(windows)])
    parts = []
    for shard in shards:
        part = tmp_path / "parts" / f"{shard.id}.safetensors"
        main(["sprout-attention-part", "--trees", str(short_docs), "--sizes", str(sizes), "--shard", shard.id,
              "--windows", str(windows), "--params", params, "--out", str(part)])
        parts += ["--part", str(part)]
    merged = tmp_path / "merged" / "attention.safetensors"
    main(["sprout-attention", "--trees", str(short_docs), "--params", params, "--out", str(merged), *parts])
    assert _bytes(merged) == _bytes(whole)

    # the same cut, each shard in its own passes (padded among its own windows): other bytes
    naive = []
    for shard in shards:
        docs = ",".join(str(short_docs / f"{d}.json") for d in shard.docs(read_sizes(sizes)))
        part = tmp_path / "naive" / f"{shard.id}.safetensors"
        main(["sprout-attention", "--trees", docs, "--params", params, "--out", str(part)])
        naive += ["--part", str(part)]
    joined = tmp_path / "naive" / "attention.safetensors"
    main(["sprout-attention", "--trees", str(short_docs), "--params", params, "--out", str(joined), *naive])
    assert joined.read_bytes() != whole.read_bytes()
