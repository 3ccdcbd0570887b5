"""The sentence splitter on tricky scientific sentences."""
import pytest

from pipeline.parse.sentences import sentence_texts, split_sentences

CASES = [
    ("As shown in Fig. 3, the energy use grows. See Eq. 2 for details.",
     ["As shown in Fig. 3, the energy use grows.", "See Eq. 2 for details."]),
    ("Prior work (Smith et al., 2020) measured 4.3 kWh per run. The rest is noise.",
     ["Prior work (Smith et al., 2020) measured 4.3 kWh per run.", "The rest is noise."]),
    ("Smith et al. [12] show that energy matters. We agree.",
     ["Smith et al. [12] show that energy matters.", "We agree."]),
    ("We use tools, e.g. CodeCarbon, i.e. a tracker. It works.",
     ["We use tools, e.g. CodeCarbon, i.e. a tracker.", "It works."]),
    ("GPT-3 vs. BERT is compared in Table 2. No. 5 is the best.",
     ["GPT-3 vs. BERT is compared in Table 2.", "No. 5 is the best."]),
    ("We tested v1.2.3 of the library on 2.5 GHz CPUs. Results follow.",
     ["We tested v1.2.3 of the library on 2.5 GHz CPUs.", "Results follow."]),
    ("This was reported previously [12]. Other work [3, 4] found otherwise.",
     ["This was reported previously [12].", "Other work [3, 4] found otherwise."]),
    ("Data centres, servers, etc. consume power. This matters.",
     ["Data centres, servers, etc. consume power.", "This matters."]),
    ("Emissions were approx. 5 tons, cf. Sec. 4.2 and Tab. 3. Next sentence.",
     ["Emissions were approx. 5 tons, cf. Sec. 4.2 and Tab. 3.", "Next sentence."]),
    ("It is required by law (Art. 3(1) AI Act). Results (p. 12) vary.",
     ["It is required by law (Art. 3(1) AI Act).", "Results (p. 12) vary."]),
    # nupunkt's bundled model lists "coal", "century" and "e" as abbreviations; we do not.
    ("The U.S. grid mix is 40% coal. Europe differs.", ["The U.S. grid mix is 40% coal.", "Europe differs."]),
    ("This is the 20th century. The next one differs.", ["This is the 20th century.", "The next one differs."]),
    ("Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e. Switch Transformer simplifies routing.",
     ["Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e.", "Switch Transformer simplifies routing."]),
    ("The framework (Figure. 1) saves energy. Fig. 1. Overview of the framework. Next.",
     ["The framework (Figure. 1) saves energy.", "Fig. 1. Overview of the framework.", "Next."]),
    ("D. Patterson and J. Dean wrote it. They agree.", ["D. Patterson and J. Dean wrote it.", "They agree."]),
    ("We highlight: ● Large DNNs use less ● Geography matters. We now optimise.",
     ["We highlight:", "● Large DNNs use less", "● Geography matters.", "We now optimise."]),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_tricky_sentences(text, expected):
    assert sentence_texts(text) == expected


def test_spans_are_ordered_trimmed_and_disjoint():
    text = "  First one.   Second one (Fig. 2)!\n Third?  "
    spans = split_sentences(text)
    assert [text[s:e] for s, e in spans] == ["First one.", "Second one (Fig. 2)!", "Third?"]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert split_sentences("") == [] and split_sentences("   ") == []


def test_long_sentence_is_cut_at_soft_breaks():
    rows = [f"Model{i} 12.{i} kWh 3{i}% 0.{i}" for i in range(60)]
    text = " ".join(rows)
    breaks, pos = [], 0
    for row in rows[:-1]:
        pos += len(row)
        breaks.append(pos)
        pos += 1
    pieces = sentence_texts(text, soft_breaks=breaks, max_chars=200)
    assert len(pieces) > 1 and all(len(p) <= 200 for p in pieces)
    assert " ".join(pieces) == text
    assert all(p.startswith("Model") for p in pieces)  # cut between rows, not inside one
    assert all(len(p) <= 600 for p in sentence_texts("word " * 1000))
