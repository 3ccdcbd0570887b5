import json
from pathlib import Path

import pytest

CORPUS_DOC = Path("/work/shared/data/wattbot/corpus/strubell2019.json")


@pytest.fixture(scope="session")
def sentences() -> list[str]:
    """~20 real, distinct corpus sentences of varied length (falls back to a fixed list if the corpus is absent)."""
    if CORPUS_DOC.exists():
        doc = json.loads(CORPUS_DOC.read_text())
        texts = [s["text"] for sec in doc["sections"] for p in sec["paragraphs"] for s in p["sentences"]]
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        return texts[5:25]
    return [f"Training model number {i} emitted {i * 7} kg of CO2 over {i} days." for i in range(20)]


@pytest.fixture(scope="session")
def onnx_encoder():
    from pipeline.embed import make_encoder

    return make_encoder({"backend": "onnx-int8", "batch_size": 4})
