"""Per-model endpoints (``llm.per_model.<model>.api_base / api_key_env / timeout_s``): hashed params,
keys, preflight, the endpoint probe, cache identity and provenance. The stock llama.cpp server through
the DAG is tests/answer/test_stock_llama_server.py."""
import copy
import json

import pytest
import yaml

from pipeline.workflow import llm_work
from pipeline.config import ConfigError, answering_slice, retrieval_slice, validate
from pipeline.datasets.paths import REPO
from pipeline.llm.cache import LLMRequest
from pipeline.llm.endpoints import check_endpoints, manifest_entry, probe
from pipeline.llm.gateway import LLMGateway
from pipeline.llm.serving import KEYLESS
from pipeline.llm_models import LLMSpec
from pipeline.llm.preflight import declared_envvars, preflight, required_envvars
from pipeline.bench.standin import StandIn
from pipeline.provenance import stable_hash

BASE = "http://127.0.0.1:9/v1"


def tiny(per_model: dict | None = None, model: str = "openai/standin", **llm) -> dict:
    """tests/tiny.yaml with one hosted answering variant and one LLM planner on ``model``."""
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["retrieval"]["plan"] = {"index": "bm25", "top_k": 8, "planner": {"kind": "llm", "n": 2, "model": model}}
    cfg["answering"]["self-hosted"] = {"retrieval": "bm25", "backend": "llm", "model": model, "splits": ["train"]}
    cfg["llm"] = {**cfg["llm"], "envvars": [], **llm, "per_model": per_model or {}}
    return cfg


def gateway(tmp_path, llm: dict) -> LLMGateway:
    return LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict(llm))


def hashes(cfg: dict) -> tuple[str, str]:
    v = validate(cfg)
    return stable_hash(answering_slice(v, "self-hosted")), stable_hash(retrieval_slice(v, "plan"))


def test_api_base_is_hashed_keys_timeouts_and_limits_are_not():
    plain = hashes(tiny())
    at_a = hashes(tiny({"openai/standin": {"api_base": "http://a/v1"}}))
    at_b = hashes(tiny({"openai/standin": {"api_base": "http://b/v1"}}))
    assert len({plain[0], at_a[0], at_b[0]}) == 3 and len({plain[1], at_a[1], at_b[1]}) == 3  # answer + planner
    execution = {"api_base": "http://a/v1", "api_key_env": None, "timeout_s": 7, "concurrency": 4}
    assert hashes(tiny({"openai/standin": execution})) == at_a
    other = {"openai/other": {"api_base": "http://c/v1"}, "openai/standin": {"api_base": "http://a/v1"}}
    assert hashes(tiny(other)) == at_a  # another model's endpoint reruns nothing here
    assert answering_slice(validate(tiny()), "self-hosted")["llm"].get("per_model") is None  # as before


def test_endpoint_keys_on_a_local_model_are_a_one_line_error():
    cfg = tiny({"local/gemma": {"api_base": BASE}})
    with pytest.raises(ConfigError, match=r"^config key 'llm.per_model.local/gemma.api_base': a local/ model"):
        validate(cfg)


def test_keyless_needs_no_key_a_named_variable_is_checked_and_declared(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("MY_SERVER_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        preflight(llm_work(validate(tiny({"openai/standin": {"api_base": BASE}}))))  # litellm's openai/ route wants one
    keyless = llm_work(validate(tiny({"openai/standin": {"api_base": BASE, "api_key_env": None}})))
    preflight(keyless)
    assert required_envvars(keyless) == []
    named = llm_work(validate(tiny({"openai/standin": {"api_base": BASE, "api_key_env": "MY_SERVER_KEY"}}, envvars=["HF_X"])))
    assert required_envvars(named) == ["HF_X", "MY_SERVER_KEY"]  # llm.envvars, then each called model's
    monkeypatch.delenv("HF_X", raising=False)
    with pytest.raises(ConfigError, match=r"^preflight: environment variable MY_SERVER_KEY is not set; needed by "
                                          r"self-hosted \(openai/standin\), retrieval.plan \(openai/standin\)"):
        preflight(named)
    preflight(named, dry_run=True)  # a dry run warns
    assert declared_envvars(named, dry_run=True) == []  # ... and declares only what is set
    assert declared_envvars(named) == ["HF_X", "MY_SERVER_KEY"]  # a real run: Snakemake stops on the unset
    monkeypatch.setenv("MY_SERVER_KEY", "k")
    preflight(named)


def test_unused_per_model_entry_is_a_warning(capsys):
    preflight(llm_work(validate(tiny({"openai/standin": {"api_key_env": None}, "openai/typo": {"concurrency": 2}}))))
    assert "warning: config key 'llm.per_model.openai/typo': no variant calls model 'openai/typo'" in capsys.readouterr().err


def test_gateway_routes_each_model_to_its_endpoint_with_its_key(monkeypatch, tmp_path):
    monkeypatch.setenv("MY_SERVER_KEY", "secret-1")
    llm = {"api_base": "http://global/v1", "timeout_s": 30, "per_model": {
        "openai/a": {"api_base": "http://a/v1", "api_key_env": None, "timeout_s": 5},
        "openai/b": {"api_base": "http://b/v1", "api_key_env": "MY_SERVER_KEY"}}}
    gw = gateway(tmp_path, llm)
    req = LLMRequest("openai/a", [{"role": "user", "content": "q"}])
    assert gw._kwargs(req)[1]["api_base"] == "http://a/v1" and gw._kwargs(req)[1]["api_key"] == KEYLESS
    assert gw._kwargs(LLMRequest("openai/b", req.messages))[1]["api_key"] == "secret-1"
    hosted = gw._kwargs(LLMRequest("openai/c", req.messages))[1]
    assert hosted["api_base"] == "http://global/v1" and "api_key" not in hosted  # litellm's own lookup
    assert gw._timeout("openai/a") == 5 and gw._timeout("openai/c") == 30


def test_cache_key_names_the_endpoint_only_where_one_is_set(tmp_path):
    req = LLMRequest("openai/a", [{"role": "user", "content": "q"}], {"temperature": 0})
    plain = gateway(tmp_path, {})
    assert plain.key(req) == req.key()  # hosted without api_base: the key stored before
    local = gateway(tmp_path, {"api_base": "http://x/v1"})
    assert local.key(LLMRequest("local/g", req.messages)) == LLMRequest("local/g", req.messages).key()
    at = {b: gateway(tmp_path, {"per_model": {"openai/a": {"api_base": b}}}) for b in ("http://a", "http://b")}
    keys = {req.key(), at["http://a"].key(req), at["http://b"].key(req), local.key(req)}
    assert len(keys) == 4  # two servers under one model name never share a reply
    assert at["http://a"].key(req) == LLMRequest(**{**req.__dict__, "endpoint": "http://a"}).key()


def test_records_keep_the_provider_model_id_and_the_key_names_the_server(tmp_path):
    with StandIn() as server:
        llm = {"per_model": {"openai/standin": {"api_base": server.api_base, "api_key_env": None}}, "max_retries": 0}
        with gateway(tmp_path, llm) as gw:
            req = LLMRequest("openai/standin", [{"role": "user", "content": "hi"}])
            result = gw.complete(req)
            assert result.ok, result.error
            row = gw.cache.db.execute("SELECT request, result FROM calls").fetchone()
    request, stored = json.loads(row[0]), json.loads(row[1])
    assert request["endpoint"] == server.api_base and stored["model_id"] == "standin"
    assert "system_fingerprint" in stored


def test_probe_finds_a_dead_endpoint_and_another_model(tmp_path):
    with StandIn() as server:
        good = tiny({"openai/standin": {"api_base": server.api_base, "api_key_env": None}})
        good["cache_dir"] = str(tmp_path)
        statuses = probe(llm_work(validate(good)))
        assert [(s.model, s.served, s.ok) for s in statuses] == [("openai/standin", ["standin"], True)]
        assert check_endpoints(llm_work(validate(good)))[0].startswith(f"endpoint {server.api_base}: serves standin")
        entry = manifest_entry(tmp_path, LLMSpec.from_dict(validate(good)["llm"]).resolve("openai/standin"))
        assert entry == {"endpoint": {"api_base": server.api_base, "model": "openai/standin", "served": ["standin"]}}
        wrong = copy.deepcopy(good)
        wrong["llm"]["per_model"] = {"openai/llama-3": {"api_base": server.api_base, "api_key_env": None}}
        wrong["answering"]["self-hosted"]["model"] = wrong["retrieval"]["plan"]["planner"]["model"] = "openai/llama-3"
        with pytest.raises(ConfigError, match=r"serves \['standin'\], not the configured 'llama-3'"):
            check_endpoints(llm_work(validate(wrong)))
    dead = tiny({"openai/standin": {"api_base": BASE, "api_key_env": None}})
    dead["cache_dir"] = str(tmp_path)
    [status] = probe(llm_work(validate(dead)), timeout_s=2)
    assert not status.ok and "does not answer GET /models" in status.line()
    with pytest.raises(ConfigError, match=r"^config key 'llm.per_model.openai/standin.api_base': endpoint "):
        check_endpoints(llm_work(validate(dead)), timeout_s=2)
