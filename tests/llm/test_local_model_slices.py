"""A job's hashed ``llm`` slice carries only the ``llm.local`` entry of the model it calls (#48): declaring
the Qwen2.5-Coder models beside Gemma left the default grid's LLM jobs' slices, so their hashes, as they were."""
import copy

from pipeline.config import answering_slice, load_config
from pipeline.datasets.paths import REPO


def test_a_declared_model_changes_no_other_jobs_slice():
    cfg = load_config(REPO / "config.yaml")
    gemma_only = copy.deepcopy(cfg)
    gemma_only["llm"]["local"] = {"gemma3-270m": cfg["llm"]["local"]["gemma3-270m"]}
    for variant in ("llm-cf", "llm-cf-r1"):
        assert answering_slice(cfg, variant) == answering_slice(gemma_only, variant)
        assert list(answering_slice(cfg, variant)["llm"]["local"]) == ["gemma3-270m"]


def test_a_job_calling_qwen_carries_its_entry_only():
    cfg = load_config(REPO / "config.yaml", {"answering": {"llm-cf": {"model": "local/qwen2.5-coder-1.5b"}}})
    local = answering_slice(cfg, "llm-cf")["llm"]["local"]
    assert list(local) == ["qwen2.5-coder-1.5b"] and local["qwen2.5-coder-1.5b"]["parts"] == 22
