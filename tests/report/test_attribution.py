"""Attribution rules on hand-made questions, one per class, and their precedence."""
import pandas as pd
import pytest

from pipeline.score.attribution import attribute_variant, classify, question_type, shown_docs


@pytest.mark.parametrize("args, expected", [
    ((True, True, True, 1.0, set(), set()), "correct"),                       # abstained on unanswerable
    ((True, False, True, 0.0, set(), {"a"}), "answered_unanswerable"),        # value is free in 2025, still wrong
    ((False, False, True, 1.0, {"a"}, {"a"}), "correct"),
    ((False, False, True, 0.5, {"a", "b"}, {"a"}), "wrong_citation"),         # right value, half the refs
    ((False, False, True, 0.0, {"a"}, set()), "wrong_citation"),              # right value beats retrieval miss
    ((False, False, False, 0.0, {"a"}, {"b"}), "retrieval_miss"),
    ((False, True, False, 0.0, {"a"}, {"b"}), "retrieval_miss"),              # abstaining without evidence
    ((False, True, False, 0.0, {"a"}, {"a", "b"}), "abstained_answerable"),
    ((False, False, False, 1.0, {"a"}, {"a"}), "wrong_value"),                # evidence and citation, bad value
])
def test_classify(args, expected):
    assert classify(*args) == expected


def test_question_type():
    assert question_type("Quote", "4.3") == "quote"
    assert question_type("Figure, Quote", "4.3") == "figure"
    assert question_type("Table 3", "4.3") == "table"
    assert question_type("1438 lbs / 99.8 lbs/day = 14.4", "14.4") == "calculation"
    assert question_type("is_blank", "is_blank") == "unanswerable"


def test_shown_docs_follow_the_backend():
    rec = {"hits": [{"doc_id": "a"}], "context": [{"doc_id": "b"}]}
    assert shown_docs(rec, "extractive") == {"a"} and shown_docs(rec, "llm") == {"b"}
    assert shown_docs({"hits": [{"doc_id": "a"}]}, "llm") == {"a"}


def test_attribute_variant_on_a_hand_made_split():
    gold = pd.DataFrame({"id": ["q1", "q2", "q3", "q4"], "answer_value": ["4.3", "12", "7", "is_blank"],
                         "ref_id": ["['a']", "['b']", "['c']", "is_blank"],
                         "explanation": ["Quote", "Table", "7 = 3 + 4", "is_blank"]})
    answers = [{"id": "q1", "is_blank": False, "answer_value": "4.3"},
               {"id": "q2", "is_blank": True, "answer_value": "is_blank"},
               {"id": "q3", "is_blank": False, "answer_value": "8"},
               {"id": "q4", "is_blank": False, "answer_value": "5"}]
    pq = pd.DataFrame({"id": ["q1", "q2", "q3", "q4"], "value": [1, 0, 0, 1], "ref": [1.0, 0.0, 1.0, 0.0]})
    retrieval = [{"id": "q1", "hits": [{"doc_id": "a"}]}, {"id": "q2", "hits": [{"doc_id": "x"}]},
                 {"id": "q3", "hits": [{"doc_id": "c"}]}, {"id": "q4", "hits": [{"doc_id": "a"}]}]
    out = attribute_variant(gold, answers, pq, retrieval, "extractive")
    assert list(out["class"]) == ["correct", "retrieval_miss", "wrong_value", "answered_unanswerable"]
    assert list(out["type"]) == ["quote", "table", "calculation", "unanswerable"]
    with pytest.raises(ValueError, match="no retrieval record for question q4"):
        attribute_variant(gold, answers, pq, retrieval[:3], "extractive")
