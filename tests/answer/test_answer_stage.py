"""The answer stage and the Kaggle submission format, on real retrieval output."""
import pandas as pd
import pytest

from answering import answer_dicts
from pipeline.answer.submission import COLUMNS, submission_frame
from pipeline.retrieve.run import RetrieveJob, retrieve


def retrieval_params() -> dict:
    return {"retrieval": {"index": "hier", "top_k": 16, "levels": ["sentence", "paragraph"], "expand": "paragraph",
                          "hybrid": {"index": "bm25", "mode": "rrf", "top_k": 16}},
            "indexes": {"hier": {"kind": "tree"}, "bm25": {"kind": "bm25", "levels": ["sentence", "paragraph"]}},
            "embedding": {"backend": "onnx-int8", "max_tokens": 512}}


@pytest.fixture(scope="module")
def train(wattbot_dir):
    q = pd.read_csv(wattbot_dir / "train_QA.csv", dtype=str, keep_default_na=False)
    return q[q["ref_id"].str.contains("patterson2021|strubell2019|khan2025")].reset_index(drop=True)


@pytest.fixture(scope="module")
def retrieval(built_indexes, train):
    return retrieve(train, RetrieveJob.from_params(retrieval_params(), built_indexes["dir"], built_indexes["cache_dir"]), progress=False)


def test_extractive_answers_every_question(retrieval, train, tmp_path):
    answers = answer_dicts(retrieval, train, {"backend": "extractive"}, {}, tmp_path, {"patterson2021"}, progress=False)
    assert [a["id"] for a in answers] == list(train["id"])
    for a in answers:
        assert a["explanation"].strip()
        assert a["is_blank"] == (a["answer_value"] == "is_blank")
        assert "," not in a["answer_value"] or a["answer_value"].startswith("[")
    gshard = next(a for a in answers if a["id"] == "q009")
    assert (gshard["answer_value"], gshard["ref_id"]) == ("4.3", ["patterson2021"])


def test_llm_backend_through_the_stage(retrieval, train, tmp_path):
    variant = {"backend": "llm", "model": "openai/mock", "prompt": "context_first",
               "params": {"mock_response": '{"explanation": "e", "answer": "x", "answer_value": "is_blank", "ref_id": []}'}}
    answers = answer_dicts(retrieval, train, variant, {"mode": "live"}, tmp_path, {"patterson2021"}, progress=False)
    assert all(a["is_blank"] and a["call"]["ok"] and not a["failure"] for a in answers)


def test_missing_retrieval_is_an_error(train, tmp_path):
    with pytest.raises(ValueError, match="retrieval results lack question id"):
        answer_dicts([], train, {"backend": "extractive"}, {}, tmp_path, set(), progress=False)


def test_submission_follows_kaggle_conventions(train):
    answers = [{"id": qid, "answer": "x", "answer_value": "1", "ref_id": ["patterson2021"], "explanation": "e",
                "supporting_materials": "quote", "is_blank": False} for qid in train["id"]]
    answers[0] = {**answers[0], "answer_value": "is_blank", "ref_id": [], "is_blank": True}
    df = submission_frame(train, answers, {"patterson2021": "https://arxiv.org/pdf/2104.10350"})
    assert tuple(df.columns) == COLUMNS and list(df["id"]) == list(train["id"])
    assert df.iloc[0][["answer_value", "ref_id", "ref_url", "supporting_materials"]].tolist() == ["is_blank"] * 4
    assert df.iloc[1]["ref_id"] == "['patterson2021']"
    assert df.iloc[1]["ref_url"] == "['https://arxiv.org/pdf/2104.10350']"
    # a corpus without metadata has no urls: is_blank, not ['']
    assert submission_frame(train, answers, {}).iloc[1]["ref_url"] == "is_blank"
    with pytest.raises(ValueError, match="no answer for question id"):
        submission_frame(train, answers[1:], {})
