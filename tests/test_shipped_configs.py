"""The configs this repository ships (config.yaml, config.mpnet.yaml and config.full.yaml that extend it, the
KohakuRAG preset, tests/tiny.yaml): valid, hashing to the pinned params and cache keys
(tests/fixtures/config_pins.json, re-pinned by `python tests/test_shipped_configs.py` only together with a
bump of pipeline/config/slices.py PARAMS_VERSION), holding the variants the docs and reports/claims.yaml name.

These tests are *about* the shipped files, so they read them. Tests of behaviour use the tests' own grid
(tests/grid.yaml) or tests/tiny.yaml, so a change to the production grid fails here, not all over the suite."""
import json
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from pipeline.config import OVERLAY_CONFIGS, answer_splits, index_slice, load_config, validate
from pipeline.datasets.paths import REPO
from pipeline.provenance import stable_hash
from pipeline.report.claims.claim import load_claims
from pipeline.answer.ensemble import EnsembleSpec
from pipeline.registry.answer_backends import variant_spec
from pipeline.llm_models import LLMSpec
from pipeline.specs import RetrievalSpec

# What the code hashes and passes at PARAMS_VERSION (tests/fixtures/config_pins.json): a changed pin is a rerun of
# that branch (and, for the request settings, new LLM cache keys), so a pin changes only deliberately, with a
# new PARAMS_VERSION. Version 2 moved the index, retrieval and answering slices once (every declared default
# written in, issue #47); the request settings, votes, beams and the sprout attention kept their pins.
PIN_FILE = Path(__file__).parent / "fixtures" / "config_pins.json"
PINS = json.loads(PIN_FILE.read_text())
# The pin label "full" is config.full.yaml (its extends: config.suite-full.yaml and config.mpnet.yaml, over
# config.yaml); pinned from the `--configfile config.yaml config.mpnet.yaml config.full.yaml` merge of the
# grid before config.suite-full.yaml existed: its indexes, variants and requests hash as they did.
CONFIGS = {"config.yaml": "config.yaml", "full": "config.full.yaml", "kohakurag": "config.kohakurag.yaml",
           "tiny": "tests/tiny.yaml"}


def pins_now(label: str, overrides: dict | None = None) -> dict[str, str]:
    import pipeline.workflow as wf
    from pipeline.answer.ensemble import vote_config
    from pipeline.answer.vote import VoteConfig
    from pipeline.specs import AttentionSpec, BeamSpec

    cfg = load_config(REPO / CONFIGS[label], overrides)
    pins = {}
    for n in cfg["indexes"]:
        pins[f"index/{n}"] = stable_hash(wf.index_params(cfg, n))
    for n, v in cfg["retrieval"].items():
        pins[f"retrieval/{n}"] = stable_hash(wf.retrieval_params(cfg, n))
        if cfg["indexes"][v["index"]]["kind"] == "sprout":
            pins[f"beam/{n}"] = stable_hash({**asdict(BeamSpec.from_dict(v)), "top_k": v["top_k"]})
    for n in cfg["answering"]:
        pins[f"answering/{n}"] = stable_hash(wf.answering_params(cfg, n))
        spec = wf.answer_spec(cfg, n)
        if spec.backend == "llm":  # what the LLM requests (and so their cache keys) are made of
            s = spec.with_model(cfg["llm"].get("model"))
            fields = ("model", "prompt", "params", "context_k", "snippet_chars", "max_retries", "samples", "structured")
            pins[f"llm-settings/{n}"] = stable_hash({**{k: getattr(s, k) for k in fields},
                                                     "vote": asdict(VoteConfig(**s.vote))})
        if spec.backend == "ensemble":
            pins[f"vote/{n}"] = stable_hash(asdict(vote_config(spec.vote)))
    pins["llm_exec"] = stable_hash(wf.llm_exec_json(cfg))
    pins["sprout_attention"] = stable_hash(AttentionSpec.from_dict(json.loads(wf.sprout_attention_params(cfg))).as_dict())
    if label == "tiny":
        pins["report"] = stable_hash(wf.report_params(cfg))
        pins["suite_report"] = stable_hash(wf.suite_report_params(cfg))
        pins["sprout_report"] = stable_hash(wf.sprout_report_params(cfg))
    return pins


@pytest.mark.parametrize("label", sorted(CONFIGS))
def test_hashed_slices_and_request_settings_are_unchanged(label):
    from pipeline.config import PARAMS_VERSION

    now, before = pins_now(label), PINS[label]
    changed = sorted(k for k in before if k in now and now[k] != before[k])
    assert changed == [], "moved hashes: bump PARAMS_VERSION, re-pin (python tests/test_shipped_configs.py), say what reruns"
    assert set(before) <= set(now) and PINS["params_version"] == PARAMS_VERSION


def test_a_limit_changes_no_job_slice_and_unset_no_hash():
    """limit: N (a smoke run) is in the reports' params (their pages say so, their hash differs) and nowhere
    else: every job's slice, and so every cache key and LLM request, is the full run's (its files live apart,
    pipeline/paths.py); unset, the pins above hold."""
    plain, smoke = pins_now("tiny"), pins_now("tiny", {"limit": 2})
    assert {k: v for k, v in plain.items() if k in PINS["tiny"]} == PINS["tiny"]
    assert sorted(k for k in plain if plain[k] != smoke[k]) == ["report", "suite_report"]


def test_cache_journal_is_execution_only():
    """cache_journal: nfs (caches on a shared filesystem, docs/cluster.md) reruns nothing and re-buys no
    call: only the execution-only llm_exec changes; the LLM cache follows it unless llm.cache_journal is set."""
    import pipeline.workflow as wf

    plain, nfs = pins_now("config.yaml"), pins_now("config.yaml", {"cache_journal": "nfs"})
    assert sorted(k for k in plain if plain[k] != nfs[k]) == ["llm_exec"]
    cfg = load_config(REPO / "config.yaml", {"cache_journal": "nfs"})
    assert json.loads(wf.llm_exec_json(cfg))["cache_journal"] == "nfs"
    cfg["llm"]["cache_journal"] = "wal"
    assert json.loads(wf.llm_exec_json(cfg))["cache_journal"] == "wal"
    assert json.loads(wf.llm_exec_json(load_config(REPO / "config.yaml")))["cache_journal"] == "wal"  # the default


def test_default_config_is_valid():
    cfg = load_config(REPO / "config.yaml")
    assert cfg["default_variant"] in cfg["answering"]
    assert cfg["wattbot"]["dir"].endswith("shared/data/wattbot")


def test_each_larger_grid_is_its_files_merged():
    """config.mpnet.yaml and config.suite-full.yaml extend config.yaml, config.full.yaml extends both: each grid
    is its files merged in order (config.yaml once), as Snakemake merged
    `--configfile config.yaml config.suite-full.yaml config.mpnet.yaml config.full.yaml`."""
    chains = {"config.mpnet.yaml": ["config.yaml"], "config.suite-full.yaml": ["config.yaml"],
              "config.full.yaml": ["config.yaml", "config.suite-full.yaml", "config.mpnet.yaml"]}
    extends = {"config.mpnet.yaml": "config.yaml", "config.suite-full.yaml": "config.yaml",
               "config.full.yaml": ["config.suite-full.yaml", "config.mpnet.yaml"]}
    assert set(chains) == set(OVERLAY_CONFIGS)
    for name in OVERLAY_CONFIGS:
        merged: dict = {}
        for part in [*chains[name], name]:
            raw = yaml.safe_load((REPO / part).read_text())
            assert raw.pop("extends", None) == extends.get(part)
            update_config(merged, raw)
        if None in merged["answering"].values():  # config.suite-full.yaml's drops: the test below
            continue
        assert load_config(REPO / name) == validate(merged), name
    full = load_config(REPO / "config.full.yaml")
    assert {"llm-qf", "llm-n3-union", "llm-plan-cf", "mpnet-convex-extractive"} <= set(full["answering"])
    assert {"prompt-order", "ensemble-size", "retry", "encoder"} <= set(full["report"]["ablations"])
    assert full["suite"] == load_config(REPO / "config.suite-full.yaml")["suite"]  # the full suite, not a copy
    assert full["sprout"] == load_config(REPO / "config.suite-full.yaml")["sprout"]  # its cross-fitted heads


def test_the_full_grid_brings_back_what_the_full_suite_drops_as_config_yaml_has_it():
    default, suite_full = load_config(REPO / "config.yaml"), load_config(REPO / "config.suite-full.yaml")
    dropped = suite_full["dropped"]["answering"]
    assert dropped and not set(dropped) & set(suite_full["answering"])
    full = yaml.safe_load((REPO / "config.full.yaml").read_text())["answering"]
    assert {v: full[v] for v in dropped} == {v: yaml.safe_load((REPO / "config.yaml").read_text())["answering"][v]
                                             for v in dropped}
    assert all(v in default["answering"] for v in dropped)


def test_specs_of_the_default_config():
    cfg = load_config(REPO / "config.yaml")
    answering = {n: variant_spec(n, v) for n, v in cfg["answering"].items()}
    retrieval = {n: RetrievalSpec.from_dict(n, v, cfg["indexes"]) for n, v in cfg["retrieval"].items()}
    llm_spec = LLMSpec.from_dict(cfg["llm"])
    ens = answering["ens5"]
    assert isinstance(ens, EnsembleSpec) and ens.retrieval == "hier-convex" and ens.splits == ("train",)
    llm = answering["llm-cf"]
    assert (llm.backend, llm.prompt, llm.context_k, llm.samples, llm.resolved_model(llm_spec.model)) == (
        "llm", "context_first", 2, 1, "local/gemma3-270m")
    assert llm_spec.timeout_s == 300 and llm_spec.local["gemma3-270m"].n_threads == 1
    assert llm_spec.local["gemma3-270m"].startup_timeout_s == 120   # its declared default
    b1 = retrieval["sprout-b1"]
    beam = b1.searchers[b1.index]  # the sprout kind's searcher settings
    assert (beam.beam_width, beam.collect, b1.expand, b1.levels) == (1, "threshold", "none", ("chunk",))
    q4: RetrievalSpec = retrieval["hier-convex-q4"]
    assert (q4.planner.kind, q4.planner.n, q4.rerank, q4.context.dedup) == ("offline", 4, "combined", "tree")


def test_default_config_has_sprout_variants():
    cfg = load_config(REPO / "config.yaml")
    assert cfg["indexes"]["sprout"] == {"kind": "sprout", "heads": "trained"}
    assert cfg["indexes"]["sprout-uniform"]["heads"] == "uniform"
    assert cfg["retrieval"]["sprout"]["expand"] == "none" and cfg["retrieval"]["sprout"]["beam_width"] == 5
    assert {"sprout", "sprout-uniform"} <= set(cfg["suite"]["retrieval"])
    assert index_slice(cfg, "sprout")["sprout"]["stride_tokens"] == cfg["sprout"]["stride_tokens"]
    assert cfg["sprout"]["train"]["lambda"] == 0.1 and cfg["sprout"]["train"]["temperature"] == 0.05


def test_default_encoder_is_the_built_int8_minilm():
    """config.yaml embeds with onnx-qint8 (issue 14), which runs one text per pass so that a text's
    vector does not depend on its batch (tests/embed/test_qint8.py): its dense indexes depend on the
    encoder_qint8 rule's files, lexical and sprout indexes do not."""
    from pipeline.embed.quantize import FP32_FILE, QINT8_FILE
    from pipeline.workflow import encoder_model_inputs, qint8_model_folders

    cfg = load_config(REPO / "config.yaml")
    assert cfg["embedding"]["backend"] == "onnx-qint8"
    built = [f"data/models/minilm-onnx/{FP32_FILE}", f"data/models/minilm-onnx/{QINT8_FILE}"]
    assert encoder_model_inputs(cfg, "hier") == built and encoder_model_inputs(cfg, "flat") == built
    assert encoder_model_inputs(cfg, "bm25") == [] and qint8_model_folders(cfg) == ["data/models/minilm-onnx"]


def test_kohakurag_preset_validates():
    cfg = load_config(REPO / "config.kohakurag.yaml")
    ens = cfg["answering"]["kr-ensemble"]
    assert ens["vote"]["mode"] == "answer_priority" and len(ens["members"]) == 6
    run = cfg["answering"]["run-a1"]
    assert run["prompt"] == "context_first" and run["max_retries"] == 3
    r = cfg["retrieval"][run["retrieval"]]
    assert r["planner"] == {"kind": "llm", "n": 4, "model": cfg["llm"]["model"]} and r["rerank"] == "combined"
    assert r["top_k"] == 16 and cfg["default_variant"] == "kr-ensemble"
    assert answer_splits(cfg, "kr-ensemble") == ["test", "train"]
    seeds = {(cfg["answering"][m]["model"], cfg["answering"][m]["params"]["seed"]) for m in ens["members"]}
    assert len(seeds) == 6   # every run its own cached calls


def test_claims_yaml_names_real_ablations_and_variants():
    """Every claim points at an ablation of config.claims.yaml (the claims run: config.yaml, the mpnet overlay
    and the LLM claims) whose variants include the claim's: no claim of that run reads "not run", but those it
    declares left out with a reason (report.claims_left_out): the ensemble's replicate with a second sampling
    seed, which the 1.5B's cost leaves out, while the claim it replicates runs."""
    claims = load_claims()
    assert {c.system for c in claims} == {"KohakuRAG", "SproutRAG"} and len(claims) >= 10
    cfg = load_config(REPO / "config.claims.yaml")
    abl = dict(cfg["report"]["ablations"])
    abl["retrieval-suite"] = {"variants": cfg["suite"]["retrieval"]}
    by_id = {c.id: c for c in claims}
    left_out = {c.id for c in claims if c.ablation not in abl}
    assert left_out == set(cfg["report"]["claims_left_out"]) == {"kohaku-ensemble-seed100"}
    assert by_id["kohaku-ensemble-seed100"].replicate_of == "kohaku-ensemble"
    for c in claims:
        if c.id not in left_out:
            assert set(c.variants) <= set(abl[c.ablation]["variants"]), c.id


def test_claims_config_runs_the_llm_claims_on_test_and_keeps_the_default_grid():
    """config.claims.yaml extends config.mpnet.yaml; its LLM claims' variants answer test (a power-sized sample)
    with the packaged model that reads (#48: Qwen2.5-Coder 1.5B, not the default grid's Gemma), the sampled
    ensemble with one seed; the ensembles and the extractive variants hash as in config.yaml."""
    import pipeline.workflow as wf

    assert yaml.safe_load((REPO / "config.claims.yaml").read_text())["extends"] == "config.mpnet.yaml"
    cfg, default = load_config(REPO / "config.claims.yaml"), load_config(REPO / "config.yaml")
    grouped = {v for g in cfg["power_subsets"]["groups"].values() for v in g["variants"]}
    llm_claims = [c for c in load_claims() if set(c.variants) & grouped]
    assert {c.id for c in llm_claims} == {"kohaku-context-first", "kohaku-retry", "kohaku-ensemble"}
    assert all(answer_splits(cfg, v) == ["test", "train"] for c in llm_claims for v in c.variants)
    seeds = {cfg["answering"][v]["params"]["seed"] for c in llm_claims if "ensemble" in c.id for v in c.variants}
    assert seeds == {0}
    models = {variant_spec(v, cfg["answering"][v]).resolved_model(cfg["llm"]["model"]) for c in llm_claims for v in c.variants}
    assert models == {"local/qwen2.5-coder-1.5b"} and default["llm"]["model"] == "local/gemma3-270m"
    for v in ("ens5", "ens5-kohaku", "convex-extractive", "mpnet-hier-extractive"):
        if v in default["answering"]:
            assert wf.answering_params(cfg, v) == wf.answering_params(default, v), v


if __name__ == "__main__":  # re-pin, with a bumped PARAMS_VERSION only (see PINS above)
    import pipeline.register_builtins  # noqa: F401
    from pipeline.config import PARAMS_VERSION

    pins = {"params_version": PARAMS_VERSION, **{label: pins_now(label) for label in sorted(CONFIGS)}}
    PIN_FILE.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
    print("re-pinned", PIN_FILE, "at params_version", PARAMS_VERSION)
