"""The shared document tree: exact offsets, stable ids, lossless JSON."""
import pytest

from pipeline.tree import DocTree, ParagraphSpec, SectionSpec, build_tree


def small_tree() -> DocTree:
    return build_tree("doc", "A title", [
        SectionSpec("Intro", [ParagraphSpec(["First sentence.", "  ", "Second one."], pages=[1]),
                              ParagraphSpec(["Table row 1 2"], kind="table", pages=[1])], pages=[1]),
        SectionSpec("Empty", [ParagraphSpec(["   "])]),
        SectionSpec("Results", [ParagraphSpec(["It used 24 MWh."], pages=[2, 3])], pages=[2, 3]),
    ])


def test_offsets_are_exact_and_ids_positional():
    tree = small_tree()
    tree.check()
    assert list(tree.nodes) == ["doc", "doc:s1", "doc:s1:p1", "doc:s1:p1:t1", "doc:s1:p1:t2", "doc:s1:p2",
                                "doc:s1:p2:t1", "doc:s2", "doc:s2:p1", "doc:s2:p1:t1"]
    assert tree.nodes["doc:s1:p1"].text == "First sentence. Second one."
    assert tree.nodes["doc:s1:p2"].kind == "table"
    assert tree.nodes["doc:s2"].title == "Results"  # the empty section was dropped, ids stay dense
    assert tree.root.text == tree.text and tree.root.pages == [1, 2, 3]


def test_ancestors_and_levels():
    tree = small_tree()
    assert [n.id for n in tree.ancestors("doc:s2:p1:t1")] == ["doc:s2:p1", "doc:s2", "doc"]
    assert len(list(tree.at_level("sentence"))) == 4


def test_json_round_trip(tmp_path):
    tree = small_tree()
    tree.save(tmp_path / "t.json")
    again = DocTree.load(tmp_path / "t.json")
    again.check()
    assert again.to_json() == tree.to_json()
    assert again.nodes["doc:s1:p1:t2"].text == "Second one."


def test_check_catches_corruption():
    tree = small_tree()
    tree.nodes["doc:s1:p1:t1"].start += 1
    with pytest.raises(ValueError, match="doc:s1:p1:t1"):
        tree.check()


def test_real_document_tree(three_trees):
    for tree in three_trees:
        tree.check()
        for node in tree.nodes.values():
            if node.parent:
                parent = tree.nodes[node.parent]
                assert parent.start <= node.start <= node.end <= parent.end


def test_nested_sections_ids_offsets_and_pages():
    tree = build_tree("doc", "T", [
        SectionSpec("2 Methods", [ParagraphSpec(["Intro to methods."], pages=[2])], subsections=[
            SectionSpec("2.1 Data", [ParagraphSpec(["We used data."], pages=[3])], subsections=[
                SectionSpec("2.1.1 Cleaning", [ParagraphSpec(["We cleaned it."], pages=[4])])]),
            SectionSpec("2.2 Empty", [ParagraphSpec([" "])]),
            SectionSpec("2.3 Models", [ParagraphSpec(["Two models."], pages=[4])]),
        ]),
        SectionSpec("3 Results", [ParagraphSpec(["It works."], pages=[5])]),
    ])
    tree.check()
    sections = [n.id for n in tree.at_level("section")]
    assert sections == ["doc:s1", "doc:s1:s1", "doc:s1:s1:s1", "doc:s1:s2", "doc:s2"]  # empty 2.2 dropped
    assert tree.nodes["doc:s1:s2"].title == "2.3 Models"
    assert tree.nodes["doc:s1"].children == ["doc:s1:p1", "doc:s1:s1", "doc:s1:s2"]
    assert tree.nodes["doc:s1"].text == "Intro to methods.\n\nWe used data.\n\nWe cleaned it.\n\nTwo models."
    assert tree.nodes["doc:s1"].pages == [2, 3, 4]  # a section spans its subsections' pages
    assert [n.id for n in tree.ancestors("doc:s1:s1:s1:p1:t1")] == ["doc:s1:s1:s1:p1", "doc:s1:s1:s1", "doc:s1:s1", "doc:s1", "doc"]
    assert DocTree.from_json(tree.to_json()).nodes["doc:s1:s1:s1"].text == "We cleaned it."
    from pipeline.tree import section_depth

    assert [section_depth(s) for s in sections] == [1, 2, 3, 2, 1]


def test_parent_vectors_include_subsections():
    import numpy as np

    from pipeline.index_structures.hier import aggregate

    tree = build_tree("d", "t", [SectionSpec("1 A", [], subsections=[SectionSpec("1.1 B", [ParagraphSpec(["x y"])])])])
    leaf = "d:s1:s1:p1:t1"
    vecs = aggregate(tree, {leaf: np.array([1.0, 0.0], dtype=np.float32)}, {leaf: 2})
    assert np.allclose(vecs["d:s1"], [1.0, 0.0]) and np.allclose(vecs["d"], [1.0, 0.0])
