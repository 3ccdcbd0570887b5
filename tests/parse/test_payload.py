"""The WattBot corpus loader on real documents."""
from pathlib import Path

import pytest

from pipeline.parse.payload import drop_furniture, load_payload, page_paragraphs, running_lines
from pipeline.parse.text import join_lines, vocabulary

from pipeline.datasets.paths import wattbot_dir

CORPUS = wattbot_dir() / "corpus"
DOCS = ["patterson2021", "strubell2019", "khan2025"]
needs_corpus = pytest.mark.usefixtures("wattbot_dir")  # fails loudly when the data is missing


@pytest.fixture(scope="module")
def trees():
    return {d: load_payload(CORPUS / f"{d}.json") for d in DOCS}


@needs_corpus
@pytest.mark.parametrize("doc", DOCS)
def test_tree_is_consistent(trees, doc):
    tree = trees[doc]
    tree.check()
    assert tree.doc_id == doc and tree.title
    sections = list(tree.at_level("section"))
    assert tree.metadata["sections_from"] == "headings"
    assert sections and not any(s.title.startswith("Page ") for s in sections)
    assert sections[0].title == tree.title  # front matter before the first heading
    for node in tree.nodes.values():
        if node.level != "document":
            assert node.pages, node.id
    sentences = list(tree.at_level("sentence"))
    assert all(len(s.text) <= 2000 for s in sentences)
    assert "   " not in tree.text and "\xa0" not in tree.text


@needs_corpus
def test_node_ids_are_stable(trees):
    again = load_payload(CORPUS / "patterson2021.json")
    first = trees["patterson2021"]
    assert again.text == first.text
    assert [(n.id, n.start, n.end) for n in again.nodes.values()] == [(n.id, n.start, n.end) for n in first.nodes.values()]


@needs_corpus
def test_figures_and_known_sentence(trees):
    figures = [p for p in trees["strubell2019"].at_level("paragraph") if p.kind == "figure"]
    assert figures and figures[0].text.startswith("[Image page=")
    texts = [s.text for s in trees["patterson2021"].at_level("sentence")]
    assert "Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e." in texts


@needs_corpus
def test_paragraphs_and_headings_recovered(trees):
    strubell = trees["strubell2019"]
    assert sum(1 for _ in strubell.at_level("paragraph")) > 3 * len(strubell.root.children)
    texts = [s.text for s in strubell.at_level("sentence")]
    assert "2 Methods" in texts  # a numbered heading is its own sentence...
    first = strubell.nodes[strubell.nodes[next(s.id for s in strubell.at_level("sentence") if s.text == "2 Methods")].parent]
    assert strubell.nodes[first.children[0]].text == "2 Methods"  # ...opening its paragraph
    assert any("findings" in t for t in texts)  # ligature expanded
    assert any("greenhouse gas emissions attributed" in t for t in texts)  # "emis-\nsions" joined


def test_page_paragraphs_from_line_shapes():
    raw = (
        "The first paragraph runs over a full line of text and it\n"
        "keeps going on the second line with more words in it\n"
        "and ends here.\n"
        "The second paragraph starts right after the short line and\n"
        "continues a bit.\n"
        "4.1 Carbon footprint\n"
        "A heading starts a new paragraph even after a long line\n"
        "Table 2: A caption starts one too.\n"
    )
    paras = page_paragraphs(raw)
    assert [p[0][:12] for p in paras] == ["The first pa", "The second p", "4.1 Carbon f", "Table 2: A c"]


def test_dehyphenation_uses_the_document_vocabulary():
    vocab = vocabulary("energy efficiency matters; the energy-efficient state-of-the-art model")
    text, breaks = join_lines(["improves effi-", "ciency of energy-", "efficient state-of-the-", "art models", "GPT-", "3 too"], vocab)
    assert text == "improves efficiency of energy-efficient state-of-the-art models GPT-3 too"
    assert breaks == [len("improves efficiency of energy-efficient state-of-the-art models")]


@needs_corpus
def test_real_sections_nest_by_number_and_span_pages(trees):
    strubell = trees["strubell2019"]
    top = [strubell.nodes[c].title for c in strubell.root.children]
    assert top[1:] == ["Abstract", "1 Introduction", "2 Methods", "3 Related work", "4 Experimental results",
                       "5 Conclusions", "Acknowledgements", "References"]
    results = next(s for s in strubell.at_level("section") if s.title == "4 Experimental results")
    subs = [strubell.nodes[c].title for c in results.children if strubell.nodes[c].level == "section"]
    assert subs[:2] == ["4.1 Cost of training", "4.2 Cost of development: Case study"] or subs[0] == "4.1 Cost of training"
    assert all(c.startswith(results.id + ":") for c in results.children)
    methods = next(s for s in strubell.at_level("section") if s.title == "2 Methods")
    assert len(methods.pages) >= 2  # sections span pages; every paragraph keeps its page
    khan = trees["khan2025"]
    related = next(s for s in khan.at_level("section") if s.title.startswith("II."))
    assert [khan.nodes[c].title[:2] for c in related.children if khan.nodes[c].level == "section"] == ["A.", "B.", "C."]


@needs_corpus
def test_running_headers_are_not_sections():
    tree = load_payload(CORPUS / "luccioni2023.json")
    titles = [s.title for s in tree.at_level("section")]
    assert "3.1 Data collection" in titles
    assert not any("Luccioni and" in t for t in titles)  # "2 Alexandra Sasha Luccioni and ..." on even pages
    assert tree.text.count("Manuscript pending review") == 1  # the page-1 footer line (arXiv stamp joined) stays


def test_running_lines_recur_at_page_edges():
    topics = ["energy", "water", "carbon", "power", "heat"]
    pages = ["\n".join([f"{n} Jane Doe and John Roe", f"Body text about {t} goes here.", f"It says more about {t}.",
                        f"And it ends with {t}.", "Preprint under review", str(n)]) for n, t in enumerate(topics, start=1)]
    running = running_lines(pages)
    assert running == {"# jane doe and john roe", "preprint under review", "#"}
    assert drop_furniture(pages[1], running) == "Body text about water goes here.\nIt says more about water.\nAnd it ends with water."


@needs_corpus
def test_a_contents_page_is_no_outline():
    """amazon2023's numbered lines are its contents page: one 'section' would span 90 pages, so pages stay."""
    tree = load_payload(CORPUS / "amazon2023.json")
    assert tree.metadata["sections_from"] == "pages"
    assert max(len(s.pages) for s in tree.at_level("section")) == 1
