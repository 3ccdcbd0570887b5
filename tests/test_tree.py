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
