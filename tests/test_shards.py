"""The cut of a dataset's documents into shards (pipeline/shards.py): bounded, whole documents, stable ids."""

import pytest

from pipeline.shards import Shard, document_order, plan, read_sizes, select, sizes_text


def _sizes(*chars: int) -> list[tuple[str, int]]:
    return [(f"d{i:02d}", c) for i, c in enumerate(chars)]


def test_every_shard_stays_within_the_bound_and_every_document_is_in_one():
    sizes = _sizes(30, 40, 20, 50, 10, 10, 60, 5)
    shards = plan(sizes, 70)
    assert [s.id for s in shards] == ["0-1", "2-3", "4-5", "6-7"]
    assert [d for s in shards for d in s.docs(sizes)] == [d for d, _ in sizes]  # in order, none twice
    for s in shards:
        assert sum(c for _, c in sizes[s.start : s.end]) <= 70


def test_a_document_larger_than_the_bound_is_a_shard_of_its_own():
    sizes = _sizes(10, 500, 10, 10)
    assert [s.docs(sizes) for s in plan(sizes, 100)] == [["d00"], ["d01"], ["d02", "d03"]]
    assert [s.id for s in plan(_sizes(500), 100)] == ["0-0"]


def test_one_shard_when_everything_fits_and_none_for_no_documents():
    sizes = _sizes(10, 20, 30)
    assert plan(sizes, 60) == [Shard(0, 3)]
    assert plan([], 60) == []
    with pytest.raises(ValueError, match="at least 1"):
        plan(sizes, 0)


def test_a_shard_keeps_its_id_and_documents_when_another_shard_changes():
    """Ids name positions: a shard before the change in the bound is the same shard, so its part is reused."""
    sizes = _sizes(40, 40, 40, 40, 40, 40)
    before, after = plan(sizes, 80), plan(sizes, 120)
    assert [s.id for s in before] == ["0-1", "2-3", "4-5"]
    assert [s.id for s in after] == ["0-2", "3-5"]
    grown = sizes[:4] + [("d04", 90), ("d05", 40)]  # only the last shard's documents changed
    assert [s.id for s in plan(grown, 80)][:2] == ["0-1", "2-3"]


def test_an_id_gives_back_its_shard_and_a_bad_one_is_an_error():
    sizes = _sizes(1, 2, 3, 4)
    for s in plan(sizes, 3):
        assert Shard.from_id(s.id) == s
    with pytest.raises(ValueError, match="not <first>-<last>"):
        Shard.from_id("a-b")
    with pytest.raises(ValueError, match="before its first"):
        Shard.from_id("3-1")
    with pytest.raises(ValueError, match="reaches past"):
        Shard.from_id("2-9").docs(sizes)


def test_the_sizes_file_is_in_the_builds_order_and_reads_back(tmp_path):
    """Documents in tree-file order (``a-b.json`` before ``a.json``), the order every build walks its trees."""
    rows = [("a", 5), ("b", 7), ("a-b", 3)]
    path = tmp_path / "sizes.csv"
    path.write_text(sizes_text(rows))
    assert path.read_text() == "doc_id,chars\na-b,3\na,5\nb,7\n"
    assert read_sizes(path) == [("a-b", 3), ("a", 5), ("b", 7)]
    assert document_order(["b", "a", "a-b"]) == ["a-b", "a", "b"]
    assert sorted(f"{d}.json" for d in ["b", "a", "a-b"]) == [f"{d}.json" for d in document_order(["b", "a", "a-b"])]


def test_select_picks_a_shards_tree_files_in_order():
    trees = ["t/b.json", "t/a.json", "t/a-b.json", "t/c.json"]
    assert select(trees, ["b", "a-b"]) == ["t/a-b.json", "t/b.json"]
    with pytest.raises(FileNotFoundError, match="no tree file for 1"):
        select(trees, ["z"])


def test_a_splits_queries_in_batches_of_consecutive_queries():
    """Query batches are shards of query positions: ``max_queries`` a batch, the last one shorter, in file order."""
    from pipeline.shards import batch_rows, query_batches

    assert [b.id for b in query_batches(10, 4)] == ["0-3", "4-7", "8-9"]
    assert [b.id for b in query_batches(10, 10)] == ["0-9"] and query_batches(0, 4) == []
    columns = {"id": [f"q{i}" for i in range(10)], "question": [f"text {i}" for i in range(10)]}
    rows = [batch_rows(columns, b) for b in query_batches(10, 4)]
    assert rows[1] == {"id": ["q4", "q5", "q6", "q7"], "question": ["text 4", "text 5", "text 6", "text 7"]}
    assert [q for r in rows for q in r["id"]] == columns["id"]
    with pytest.raises(ValueError, match="reaches past the 10 questions"):
        batch_rows(columns, Shard.from_id("8-10"))
    with pytest.raises(ValueError, match="at least 1"):
        query_batches(10, 0)
