"""Context expansion on a real index (strubell2019 without vectors): parents, siblings,
dedup modes, truncation, token budget."""
import pytest

from pipeline.index_structures.store import IndexReader, IndexWriter, StoredNode
from pipeline.parse.payload import load_payload
from pipeline.retrieve.expand import dedup_snippets, expand_context as _expand_context, expand_match, fit_budget
from pipeline.specs import ContextSpec

DOC = "strubell2019"
SEC = f"{DOC}:s4:s1"  # "2.1 Models", a subsection of "2 Methods"
PAR = f"{SEC}:p2"  # 7 sentences
SENT = f"{PAR}:t4"
CHUNK = f"{DOC}:c1"


@pytest.fixture(scope="module")
def store(wattbot_dir, tmp_path_factory):
    tree = load_payload(wattbot_dir / "corpus" / f"{DOC}.json")
    path = tmp_path_factory.mktemp("expand") / "index.sqlite"
    w = IndexWriter(path, None, {})
    w.add([StoredNode.from_node(n) for n in tree.nodes.values()])
    w.add([StoredNode(CHUNK, DOC, "chunk", "chunk", None, 0, 40, [1], tree.text[:40])])
    w.close()
    reader = IndexReader(path)
    yield reader
    reader.close()


def expand_context(store, matches, count_tokens=None, **context):
    """The stage's call with a context spec: KohakuRAG's parent_depth 1 unless given, the schema's defaults."""
    spec = ContextSpec.from_dict({"parent_depth": 1, **context})
    return _expand_context(store, matches, spec, **({"count_tokens": count_tokens} if count_tokens else {}))


def ids(snippets):
    return [s.node_id for s in snippets]


def test_sentence_match_expands_to_its_paragraph(store):
    out = expand_context(store, [SENT])
    assert ids(out) == [PAR]  # tree dedup leaves the highest expanded node
    s = out[0]
    assert (s.level, s.via, s.source, s.rank, s.doc_id) == ("paragraph", "parent", SENT, 1, DOC)
    assert store.node(SENT).text in s.text
    group = expand_match(store, SENT, 1)
    assert [(g.node_id, g.via) for g in group] == [(SENT, "match"), (PAR, "parent")]


def test_parent_depth_two_reaches_the_section_and_zero_keeps_the_match(store):
    group = expand_match(store, SENT, 1, parent_depth=2)
    assert ids(group) == [SENT, PAR, SEC]
    out = expand_context(store, [SENT], parent_depth=2)
    assert ids(out) == [SEC] and store.node(PAR).text in out[0].text
    assert ids(expand_context(store, [SENT], parent_depth=0)) == [SENT]
    assert ids(expand_match(store, SENT, 1, parent_depth=9))[-1] == DOC  # stops at the root


def test_siblings_of_the_top_node_in_document_order(store):
    out = expand_context(store, [SENT], parent_depth=0, sibling_depth=1)
    assert [(s.node_id, s.via) for s in out] == [(SENT, "match"), (f"{PAR}:t3", "sibling"), (f"{PAR}:t5", "sibling")]
    assert all(s.source == SENT for s in out)
    two = expand_context(store, [SENT], parent_depth=0, sibling_depth=2)
    assert ids(two)[1:] == [f"{PAR}:t2", f"{PAR}:t3", f"{PAR}:t5", f"{PAR}:t6"]
    edge = expand_context(store, [f"{PAR}:t1"], parent_depth=0, sibling_depth=2)
    assert ids(edge) == [f"{PAR}:t1", f"{PAR}:t2", f"{PAR}:t3"]
    # with the parent included the match's siblings are inside it: neighbouring paragraphs instead
    up = expand_context(store, [SENT], parent_depth=1, sibling_depth=1)
    assert ids(up) == [PAR, f"{SEC}:p1", f"{SEC}:p3"]


def test_dedup_modes(store):
    matches = [SENT, f"{PAR}:t6", PAR]
    none = expand_context(store, matches, dedup="none")
    assert ids(none) == [SENT, PAR, f"{PAR}:t6", PAR, PAR, SEC]
    node_id = expand_context(store, matches, dedup="node_id")
    assert ids(node_id) == [SENT, PAR, f"{PAR}:t6", SEC]
    assert node_id[1].rank == 1  # the first occurrence survives
    tree = expand_context(store, matches, dedup="tree")
    assert ids(tree) == [SEC]  # a later ancestor removes every earlier descendant
    assert tree[0].rank == 3
    with pytest.raises(ValueError, match="dedup.*.prefix. is not one of"):
        expand_context(store, matches, dedup="prefix")


def test_tree_dedup_needs_a_colon_after_the_prefix(store):
    # s7:p1 must not swallow s7:p10 (string prefix, but not an ancestor)
    out = expand_context(store, [f"{DOC}:s7:p1", f"{DOC}:s7:p10"], parent_depth=0)
    assert ids(out) == [f"{DOC}:s7:p1", f"{DOC}:s7:p10"]
    snippets = expand_match(store, f"{DOC}:s7:p10:t1", 1, parent_depth=0) + expand_match(store, f"{DOC}:s7:p1", 2, 0)
    assert ids(dedup_snippets(snippets, "tree")) == [f"{DOC}:s7:p10:t1", f"{DOC}:s7:p1"]


def test_top_k_final_truncates_matches_first(store):
    matches = [SENT, f"{DOC}:s7:p3:t1", f"{DOC}:s3:p1:t1"]
    out = expand_context(store, matches, top_k_final=2)
    assert ids(out) == [PAR, f"{DOC}:s7:p3"] and [s.rank for s in out] == [1, 2]


def test_token_budget_keeps_a_prefix_and_always_the_first(store):
    matches = [f"{DOC}:s1", f"{DOC}:s2", f"{DOC}:s3"]
    full = expand_context(store, matches, parent_depth=0)
    sizes = [len(s.text.split()) for s in full]
    kept = expand_context(store, matches, parent_depth=0, token_budget=sizes[0] + sizes[1])
    assert ids(kept) == matches[:2]
    assert ids(expand_context(store, matches, parent_depth=0, token_budget=sizes[0] + sizes[1] - 1)) == matches[:1]
    assert ids(expand_context(store, matches, parent_depth=0, token_budget=1)) == matches[:1]  # never empty
    assert fit_budget(full, 1) == (full[:1], 2)
    assert fit_budget(full, None) == (full, 0)
    chars = expand_context(store, matches, parent_depth=0, token_budget=10**6, count_tokens=len)
    assert ids(chars) == matches


def test_chunks_pass_through(store):
    out = expand_context(store, [CHUNK, SENT], parent_depth=2, sibling_depth=3)
    assert [(s.node_id, s.level, s.via) for s in out][0] == (CHUNK, "chunk", "match")
    # the subsection, then 3 left-hand siblings: its parent section's own paragraphs (it is the last child)
    assert ids(out)[1:] == [SEC] + [f"{DOC}:s4:p{i}" for i in (11, 12, 13)]
    with pytest.raises(KeyError, match="expand"):
        expand_context(store, [f"{DOC}:s99"])
