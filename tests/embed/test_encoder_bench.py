"""The encoder comparison's pieces that need no encoder: the recall subset and the paired interval."""
import pandas as pd
import pytest

from pipeline.config import load_config
from pipeline.datasets.paths import REPO
from pipeline.datasets.wattbot import parse_ref_ids
from pipeline.bench.encoder import paired_interval, recall_docs
from pipeline.publish.bench_doc import render_encoder as render
from pipeline.workflow import doc_ids, split_source


@pytest.mark.data  # the real metadata and train questions
def test_recall_subset_keeps_exactly_the_questions_citing_its_documents():
    cfg = load_config(REPO / "config.yaml")
    train = pd.read_csv(split_source(cfg, "train"), dtype=str)
    docs, kept = recall_docs(doc_ids(cfg), train, 3)
    assert len(docs) == 3 and set(docs) <= set(doc_ids(cfg))
    cites = lambda df: [set(parse_ref_ids(str(r))) & set(docs) for r in df["ref_id"]]  # noqa: E731
    assert len(kept) > 0 and all(cites(kept))
    assert sum(map(bool, cites(train))) == len(kept)


def test_paired_interval_is_the_mean_difference_with_a_95_percent_band():
    mean, lo, hi = paired_interval([1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0])
    assert abs(mean - 2 / 6) < 1e-12 and lo < mean < hi
    assert paired_interval([1, 0, 1], [1, 0, 1]) == (0.0, 0.0, 0.0)


def test_render_without_a_report_says_how_to_make_one(tmp_path):
    assert "python -m pipeline bench" in render(tmp_path)


def test_the_compared_encoders_take_the_runs_settings_and_its_built_folder_only_where_it_uses_that_backend(
        monkeypatch):
    import pipeline.bench.encoder as bench
    from pipeline.specs import EncoderSpec

    built = []
    monkeypatch.setattr(bench, "ensure_model_files", built.append)  # no export: the bench builds missing files
    run = EncoderSpec.from_dict({"backend": "onnx-qint8", "model": "my/minilm-onnx", "batch_size": 32,
                                 "max_tokens": 512, "threads": 1, "precision": "fp32"})
    specs = bench.bench_specs(run)
    assert bench.shared_settings(run) == {"batch_size": 32, "max_tokens": 512, "threads": 1}
    assert {n: (s.backend, s.model, s.precision) for n, s in specs.items()} == {
        "packaged-int8-file": ("onnx-int8", None, "auto"), "fp32-export": ("onnx-qint8", "my/minilm-onnx", "fp32"),
        "qint8": ("onnx-qint8", "my/minilm-onnx", "int8"), "torch-fp32": ("torch", None, "auto")}
    assert built == list(specs.values())
    packaged_run = bench.bench_specs(EncoderSpec.from_dict({"backend": "onnx-int8", "model": "mine.onnx"}))
    assert {s.model for s in packaged_run.values()} == {None}  # the packaged file, and the default export folder
