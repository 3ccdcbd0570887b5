import json
from pathlib import Path

import pytest

from pipeline.datasets.paths import wattbot_dir

CORPUS_DOC = wattbot_dir() / "corpus" / "strubell2019.json"


@pytest.fixture(scope="session")
def sentences() -> list[str]:
    """~20 real, distinct corpus sentences of varied length (the corpus must be there: no fake fallback)."""
    doc = json.loads(CORPUS_DOC.read_text())
    texts = [s["text"] for sec in doc["sections"] for p in sec["paragraphs"] for s in p["sentences"]]
    texts = list(dict.fromkeys(t for t in texts if t.strip()))
    return texts[5:25]


@pytest.fixture(scope="session")
def onnx_encoder():
    from pipeline.embed import make_encoder

    return make_encoder({"backend": "onnx-int8", "batch_size": 4})
