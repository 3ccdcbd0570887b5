"""Tree and flat dense indexes on three real WattBot documents."""
import numpy as np
import pytest

from pipeline.index_structures.flat import chunk_tree
from pipeline.index_structures.hier import aggregate
from pipeline.index_structures.store import IndexReader
from pipeline.tree import ParagraphSpec, SectionSpec, build_tree


def test_parent_vector_is_token_weighted_mean():
    tree = build_tree("d", "t", [SectionSpec("s", [ParagraphSpec(["a b c", "d"])])])
    v1, v2 = np.array([1, 0], np.float32), np.array([0, 1], np.float32)
    vecs = aggregate(tree, {"d:s1:p1:t1": v1, "d:s1:p1:t2": v2}, {"d:s1:p1:t1": 3, "d:s1:p1:t2": 1})
    expected = np.array([3, 1]) / np.linalg.norm([3, 1])
    assert np.allclose(vecs["d:s1:p1"], expected, atol=1e-6)
    assert np.allclose(vecs["d"], expected, atol=1e-6)  # single-child chain keeps the vector


def test_chunks_cover_everything_with_overlap():
    sents = [f"Sentence number {i} here." for i in range(10)]
    tree = build_tree("d", "t", [SectionSpec("s", [ParagraphSpec(sents)])])
    chunks = chunk_tree(tree, [10] * 10, chunk_tokens=40, overlap_tokens=10)
    spans = [(c.start, c.end) for c in chunks]
    assert spans[0][0] == 0 and spans[-1][1] == len(tree.text)
    assert all(b[0] < a[1] for a, b in zip(spans, spans[1:]))  # consecutive chunks overlap
    assert len(chunks) == 3  # windows of 4 sentences, stepping by 3


def test_oversized_sentence_is_its_own_chunk():
    tree = build_tree("d", "t", [SectionSpec("s", [ParagraphSpec(["short.", "huge " * 50, "short again."])])])
    chunks = chunk_tree(tree, [2, 600, 3], chunk_tokens=512, overlap_tokens=0)
    assert [tree.text[c.start:c.end] for c in chunks][1].startswith("huge")
    assert len(chunks) == 3


def test_tree_index_stores_every_node(built_indexes, three_trees):
    counts = built_indexes["counts"]["hier"]
    assert counts["document"] == 3
    assert counts["sentence"] == sum(1 for t in three_trees for _ in t.at_level("sentence"))
    reader = IndexReader(built_indexes["dir"] / "hier.sqlite")
    assert reader.count() == sum(len(t.nodes) for t in three_trees)
    para = next(three_trees[1].at_level("paragraph"))
    assert np.linalg.norm(reader.vector(para.id)) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("levels", [["sentence"], ["paragraph"], ["sentence", "paragraph"], ["section"]])
def test_level_filter_inside_the_search(built_indexes, encoder, levels):
    reader = IndexReader(built_indexes["dir"] / "hier.sqlite")
    q = encoder.encode(["carbon emissions of training large models"])[0]
    hits = reader.search(q, 10, levels)
    assert len(hits) == 10 and {n.level for n, _ in hits} <= set(levels)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)


def test_a_memory_mapped_reader_returns_the_same_hits(built_indexes, encoder):
    """The dense searcher reads through a memory map (IndexReader(mmap=True)): only how pages are read changes."""
    queries = ["carbon emissions of training large models", "energy of inference", "GPU hours per model"]
    for name, levels in [("hier.sqlite", ["sentence", "paragraph"]), ("flat.sqlite", ["chunk"])]:
        plain, mapped = IndexReader(built_indexes["dir"] / name), IndexReader(built_indexes["dir"] / name, mmap=True)
        mapped_bytes, plain_bytes = (r.db.execute("PRAGMA mmap_size").fetchone()[0] for r in (mapped, plain))
        assert mapped_bytes > 0 and plain_bytes == 0
        for q in encoder.encode(queries):
            hits = [(n.node_id, s) for n, s in mapped.search(q, 20, levels)]
            assert len(hits) == 20 and hits == [(n.node_id, s) for n, s in plain.search(q, 20, levels)]


def test_flat_index_chunks_are_document_slices(built_indexes, three_trees):
    reader = IndexReader(built_indexes["dir"] / "flat.sqlite")
    texts = {t.doc_id: t.text for t in three_trees}
    n = reader.count("chunk")
    assert n == built_indexes["counts"]["flat"]["chunk"] > 3
    node = reader.node("patterson2021:c2")
    assert texts["patterson2021"][node.start:node.end] == node.text


def test_a_dense_index_manifest_records_the_encoder_path(three_trees, tmp_path):
    """What the vectors were computed in and on which kernels (pipeline/embed/kernels.py): the tiny grid's
    packaged "int8" file computes in fp32, on this CPU's fp32 kernels."""
    import json

    from pipeline import workflow as wf
    from pipeline.cli import main
    from pipeline.config import load_config
    from pipeline.datasets.paths import REPO
    from pipeline.embed.kernels import cpu_flags, fp32_family

    cfg = load_config(REPO / "tests" / "tiny.yaml")
    trees = tmp_path / "trees"
    trees.mkdir()
    three_trees[0].save(trees / f"{three_trees[0].doc_id}.json")
    index = tmp_path / "index" / "hier.sqlite"
    main(["index", "--trees", str(trees), "--params", wf.index_params(cfg, "hier"), "--cache-dir",
          str(tmp_path / "cache"), "--out", str(index)])
    manifest = json.loads(index.with_name("hier.sqlite.manifest.json").read_text())
    family = fp32_family(cpu_flags())
    assert manifest["encoder_path"] == {"precision": "fp32", "kernels": family, "label": f"fp32 ({family})"}
    assert manifest["model_id"] == "all-MiniLM-L6-v2/onnx-int8@max512"
