"""The SproutRAG tree drawing: layout rules on a hand-made tree, and the figure files."""
from pipeline.report.pages.sprout import tree_figure, tree_layout


def hand_made_tree() -> dict:
    """Leaves 0..3; chunks 1 and 2 merge first (node 4), then 0 joins (node 5), then 3 (root 6)."""
    leaf = lambda i, parent: {"node": i, "left": -1, "right": -1, "leaf_lo": i, "leaf_hi": i, "parent": parent}  # noqa: E731
    return {"doc_id": "toy", "nodes": [
        leaf(0, 5), leaf(1, 4), leaf(2, 4), leaf(3, 6),
        {"node": 4, "left": 1, "right": 2, "leaf_lo": 1, "leaf_hi": 2, "parent": 5},
        {"node": 5, "left": 0, "right": 4, "leaf_lo": 0, "leaf_hi": 2, "parent": 6},
        {"node": 6, "left": 5, "right": 3, "leaf_lo": 0, "leaf_hi": 3, "parent": -1},
    ]}


def test_layout_puts_parents_between_children_in_merge_order():
    x, rank, edges = tree_layout(hand_made_tree())
    assert [x[i] for i in range(4)] == [0, 1, 2, 3]
    assert x[4] == 1.5 and x[5] == 0.75 and x[6] == 1.875
    assert rank == {4: 0, 5: 1, 6: 2}
    assert sorted(edges) == [(4, 1), (4, 2), (5, 0), (5, 4), (6, 3), (6, 5)]


def test_figure_writes_png_and_svg(tmp_path):
    tree_figure(hand_made_tree(), tmp_path / "tree")
    assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "tree.svg").read_bytes()
