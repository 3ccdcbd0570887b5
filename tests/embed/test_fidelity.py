import numpy as np

from pipeline.embed import encoder_throughput, fidelity


def test_throughput_and_self_fidelity(onnx_encoder, sentences):
    assert encoder_throughput(onnx_encoder, sentences[:8]) > 0
    stats = fidelity(onnx_encoder, onnx_encoder, sentences[:5])
    assert set(stats) >= {"mean_cosine", "min_cosine", "p01_cosine"}
    assert np.isclose(stats["min_cosine"], 1.0, atol=1e-5)
