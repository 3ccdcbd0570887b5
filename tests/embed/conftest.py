from pathlib import Path

import pytest

SENTENCES = Path(__file__).parents[1] / "fixtures" / "sentences.txt"


@pytest.fixture(scope="session")
def sentences() -> list[str]:
    """20 distinct hand-written sentences in the corpus's register, 6 to 35 words (numbers, units,
    hyphens, a decimal): the encoder tests need varied lengths, not the shared data."""
    texts = [t for t in SENTENCES.read_text(encoding="utf-8").splitlines() if t.strip()]
    assert len(set(texts)) == len(texts) == 20
    return texts


@pytest.fixture(scope="session")
def onnx_encoder():
    from pipeline.embed import make_encoder

    return make_encoder({"backend": "onnx-int8", "batch_size": 4})
