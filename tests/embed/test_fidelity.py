"""The fidelity measure (pipeline/embed/fidelity.py) between two different encoders of one model: the
packaged int8 ONNX file against the torch fp32 reference. Close but not the same vectors, the figures
are the per-text cosines, and a mismatched pairing of texts scores low."""

import numpy as np
import pytest

from pipeline.embed import encoder_throughput, fidelity, make_encoder


@pytest.fixture(scope="module")
def torch_fp32():
    return make_encoder({"backend": "torch", "batch_size": 8})


def test_throughput(onnx_encoder, sentences):
    assert encoder_throughput(onnx_encoder, sentences[:8]) > 0


def test_int8_against_fp32_is_close_but_not_identical(onnx_encoder, torch_fp32, sentences):
    stats = fidelity(onnx_encoder, torch_fp32, sentences)
    a, b = onnx_encoder.encode(sentences), torch_fp32.encode(sentences)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert stats["n"] == len(sentences)
    assert np.isclose(stats["mean_cosine"], cos.mean(), atol=1e-6), stats
    assert np.isclose(stats["min_cosine"], cos.min(), atol=1e-6), stats
    # quantised weights: near the reference, yet not the reference's vectors
    assert 0.99 <= stats["min_cosine"] <= stats["p01_cosine"] <= stats["mean_cosine"] < 1 - 1e-6, stats


class _Shifted:
    """The reference encoder, fed each text's neighbour: the pairing fidelity must catch."""

    def __init__(self, enc):
        self.enc, self.model_id = enc, enc.model_id + "/shifted"

    def encode(self, texts):
        return self.enc.encode(texts[1:] + texts[:1])


def test_a_mismatched_pairing_scores_low(onnx_encoder, torch_fp32, sentences):
    assert fidelity(onnx_encoder, _Shifted(torch_fp32), sentences)["min_cosine"] < 0.9
