"""Small real inputs for the SproutRAG tests: the opening sentences of real WattBot documents."""
from __future__ import annotations

import pytest

from pipeline.tree import ParagraphSpec, SectionSpec, build_tree


def head_of(tree, n_sentences: int):
    """A DocTree of the first ``n_sentences`` sentences of a real tree, paragraphs kept."""
    sections, left = [], n_sentences
    for sec_id in tree.root.children:
        sec, paras = tree.nodes[sec_id], []
        for par_id in sec.children:
            sents = [tree.nodes[s].text for s in tree.nodes[par_id].children][:left]
            if sents:
                paras.append(ParagraphSpec(sents))
                left -= len(sents)
        if paras:
            sections.append(SectionSpec(sec.title, paras))
        if left <= 0:
            break
    return build_tree(tree.doc_id, tree.title, sections)


@pytest.fixture(scope="session")
def small_trees(three_trees):
    return [head_of(t, 30) for t in three_trees[:2]]


@pytest.fixture(scope="session")
def attention_encoder():
    from pipeline.sprout.attention import AttentionEncoder

    return AttentionEncoder(threads=2, kernel="sdpa")
