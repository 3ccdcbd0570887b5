import numpy as np
import pytest

from pipeline.embed import BACKENDS, Encoder, fidelity, make_encoder


def test_onnx_vectors_unit_norm_384(onnx_encoder, sentences):
    v = onnx_encoder.encode(sentences)
    assert isinstance(onnx_encoder, Encoder)
    assert onnx_encoder.model_id == "all-MiniLM-L6-v2/onnx-int8" and onnx_encoder.dim == 384
    assert v.shape == (len(sentences), 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_onnx_semantic_sanity(onnx_encoder):
    a, para, other = onnx_encoder.encode(
        [
            "Training the large model consumed a lot of electricity.",
            "A great deal of energy was used to train the big network.",
            "The recipe calls for two cups of flour and an egg.",
        ]
    )
    assert a @ para > a @ other + 0.2


def test_order_preserved_with_length_sorting(onnx_encoder, sentences):
    # Shuffled lengths across several batches of 4 must come back in input order.
    batch = onnx_encoder.encode(sentences)
    one_by_one = np.stack([onnx_encoder.encode([s])[0] for s in sentences])
    np.testing.assert_allclose(batch, one_by_one, atol=1e-4)  # padding only moves int8 vectors slightly
    assert onnx_encoder.encode([]).shape == (0, 384)


def test_count_tokens_matches_tokenizer(onnx_encoder, sentences):
    from tokenizers import Tokenizer

    from pipeline.embed.base import minilm_path

    tok = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()  # tokenizer.json ships fixed padding to 128
    long_text = " ".join(sentences)  # > 256 pieces: counts are not truncated
    texts = [*sentences, long_text, ""]
    expected = [len(tok.encode(t, add_special_tokens=False).ids) for t in texts]
    assert onnx_encoder.count_tokens(texts) == expected
    assert expected[-2] > 256 and expected[-1] == 0


def test_max_tokens_changes_model_id():
    enc = make_encoder({"backend": "onnx-int8", "max_tokens": 128})
    assert enc.model_id == "all-MiniLM-L6-v2/onnx-int8@max128"


def test_onnx_close_to_torch_fp32(onnx_encoder, sentences):
    torch_enc = make_encoder({"backend": "torch", "batch_size": 8})
    assert torch_enc.model_id == "all-MiniLM-L6-v2/torch-fp32" and torch_enc.dim == 384
    stats = fidelity(onnx_encoder, torch_enc, sentences)
    assert stats["min_cosine"] >= 0.99, stats
    assert torch_enc.count_tokens(sentences) == onnx_encoder.count_tokens(sentences)


def test_sentence_transformers_offline_path_matches_torch(sentences):
    st = make_encoder({"backend": "sentence-transformers"})  # the packaged MiniLM folder, offline
    torch_enc = make_encoder({"backend": "torch"})
    assert st.model_id.startswith("all-MiniLM-L6-v2/st-fp32") and st.dim == 384
    assert fidelity(st, torch_enc, sentences[:8])["min_cosine"] > 0.9999
    assert st.count_tokens(sentences) == torch_enc.count_tokens(sentences)


def test_bad_backend_raises():
    with pytest.raises(ValueError) as err:
        make_encoder({"backend": "tensorflow"})
    msg = str(err.value)
    assert "backend" in msg and "tensorflow" in msg and all(b in msg for b in BACKENDS.names())


def test_length_sorted_batches_caps_padded_tokens():
    from pipeline.embed.base import length_sorted_batches

    lengths = [5, 300, 7, 6, 250, 8]
    batches = [list(b) for b in length_sorted_batches(lengths, batch_size=3, max_batch_tokens=520)]
    assert sorted(i for b in batches for i in b) == list(range(6))
    assert batches == [[0, 3, 2], [5, 4], [1]]  # 2 x 250 fits the cap, 2 x 300 would not
    assert all(len(b) * max(lengths[i] for i in b) <= 520 or len(b) == 1 for b in batches)
