"""Issue 46, case 3: credentials that are not named like keys reached shareable files. The config check looks
at values as well as names and refuses with one line naming the key, never repeating the value; the legitimate
way, a variable named in config (``headers_env``, ``userinfo_env``), reaches the provider and nothing written."""
from __future__ import annotations

import base64
import json

import pytest
import yaml

from pipeline.bench.standin import StandIn, StandInConfig
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.llm.cache import LLMRequest
from pipeline.llm.gateway import LLMGateway
from pipeline.llm_models import LLMSpec

SECRET = "Zq8vR2mK7pX4nL9wT3bY6cH1"  # random-looking, as a key is
HEADER_SECRET = "hdr-Qx7Wm2Rk9Tz4Lp8Vn3Bc"
PASSWORD = "pw-Hj5Kd8Sx2Mv7Nq4Rt9"


def tiny() -> dict:
    return yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())


def llm_variant(cfg: dict) -> dict:
    return cfg["answering"]["mock-llm"]


PLANTED = {  # where the issue found a credential that passed the names-only check, and the key the error names
    "extra_headers Authorization": (
        lambda c: llm_variant(c)["params"].update(extra_headers={"Authorization": f"Bearer {SECRET}"}),
        "answering.mock-llm.params.extra_headers.Authorization",
    ),
    "extra_headers x-api-key": (
        lambda c: llm_variant(c)["params"].update(extra_headers={"x-api-key": SECRET}),
        "answering.mock-llm.params.extra_headers.x-api-key",
    ),
    "extra_headers api-key": (
        lambda c: llm_variant(c)["params"].update(extra_headers={"api-key": SECRET}),
        "answering.mock-llm.params.extra_headers.api-key",
    ),
    "a random header value": (
        lambda c: llm_variant(c)["params"].update(extra_headers={"X-Org-Auth": SECRET}),
        "answering.mock-llm.params.extra_headers.X-Org-Auth",
    ),
    "hf_token": (lambda c: llm_variant(c)["params"].update(hf_token=SECRET), "answering.mock-llm.params.hf_token"),
    "*token": (lambda c: llm_variant(c)["params"].update(token=SECRET), "answering.mock-llm.params.token"),
    "user:password@ in api_base": (
        lambda c: c["llm"].update(per_model={"openai/mock": {"api_base": f"http://alice:{PASSWORD}@127.0.0.1:1/v1"}}),
        "llm.per_model.openai/mock.api_base",
    ),
    "user:password@ in llm.api_base": (
        lambda c: c["llm"].update(api_base=f"https://alice:{PASSWORD}@llm.example.org/v1"),
        "llm.api_base",
    ),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_credential_in_the_config_is_refused_naming_the_key_not_the_value(case):
    plant, key = PLANTED[case]
    cfg = tiny()
    plant(cfg)
    with pytest.raises(ConfigError) as err:
        validate(cfg)
    message = str(err.value)
    assert message.startswith(f"config key '{key}': credentials must not be written in the config")
    assert "environment variable" in message and "\n" not in message
    assert SECRET not in message and PASSWORD not in message


def test_settings_that_only_look_like_names_of_credentials_pass():
    cfg = tiny()
    llm_variant(cfg)["params"].update(max_tokens=64, extra_headers={"X-Title": "wattbench run"})
    cfg["llm"]["per_model"] = {"openai/mock": {"api_key_env": "MY_KEY", "headers_env": {"Authorization": "MY_AUTH"},
                                               "userinfo_env": "MY_USERINFO"}}
    validate(cfg)


def test_headers_and_userinfo_from_the_environment_reach_the_provider_and_no_stored_row(tmp_path, monkeypatch):
    """The legitimate way: the values travel in the connection settings, so the stand-in receives both, and the
    cache's request column (what a replay pack copies) holds neither."""
    monkeypatch.setenv("WB_HEADER", HEADER_SECRET)
    monkeypatch.setenv("WB_USERINFO", f"alice:{PASSWORD}")
    basic = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    with StandIn(StandInConfig(require_headers={"x-api-key": HEADER_SECRET, "Authorization": basic})) as server:
        per_model = {"api_base": server.api_base, "api_key_env": None, "headers_env": {"x-api-key": "WB_HEADER"},
                     "userinfo_env": "WB_USERINFO"}
        with LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"per_model": {"openai/standin": per_model},
                                                                     "max_retries": 0})) as gw:
            params = {"extra_headers": {"X-Title": "wattbench"}}
            result = gw.complete(LLMRequest("openai/standin", [{"role": "user", "content": "hi"}], params))
            assert result.ok, result.error
        assert server.snapshot()["unauthorised"] == 0
    stored = (tmp_path / "llm.sqlite").read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("llm.sqlite-*"))
    assert HEADER_SECRET.encode() not in stored and PASSWORD.encode() not in stored
    with LLMGateway(tmp_path / "llm.sqlite") as gw:
        [(request,)] = gw.cache.db.execute("SELECT request FROM calls").fetchall()
    assert json.loads(request)["params"] == params and json.loads(request)["endpoint"] == server.api_base


def test_an_error_that_repeats_what_a_call_carried_is_recorded_masked(tmp_path, monkeypatch):
    """litellm's message can quote the URL it called (user:password@ in it) or a header: the gateway's error
    line, stored in the cache and the answers, masks every value the call carried from the environment."""
    monkeypatch.setenv("WB_HEADER", HEADER_SECRET)
    monkeypatch.setenv("WB_USERINFO", f"alice:{PASSWORD}")

    def refuse(**kwargs):
        raise ValueError(f"cannot reach {kwargs['api_base']} with {kwargs['extra_headers']}: bad request")

    monkeypatch.setattr("pipeline.llm.retries.litellm_completion", refuse)
    per_model = {"api_base": "http://127.0.0.1:9/v1", "api_key_env": None, "headers_env": {"x-api-key": "WB_HEADER"},
                 "userinfo_env": "WB_USERINFO"}
    with LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"per_model": {"openai/x": per_model},
                                                                 "max_retries": 0})) as gw:
        result = gw.complete(LLMRequest("openai/x", [{"role": "user", "content": "hi"}]))
    assert not result.ok and "cannot reach http://" in result.error and "***" in result.error
    assert HEADER_SECRET not in result.error and PASSWORD not in result.error


def test_a_cache_filled_before_the_check_exports_no_pack_holding_a_credential(tmp_path):
    """A cache whose request rows hold a header key (what a config with extra_headers stored on d2f9a41): a
    replay pack, made to be shared, is not written from it; the error names the row and key, not the value."""
    from pipeline.llm.replay import export_replay

    params = {"extra_headers": {"Authorization": f"Bearer {SECRET}"}, "mock_response": "hi"}
    with LLMGateway(tmp_path / "llm.sqlite", LLMSpec.from_dict({"max_retries": 0}), run_id="r1") as gw:
        assert gw.complete(LLMRequest("openai/mock", [{"role": "user", "content": "hi"}], params)).ok
    with pytest.raises(ValueError, match=r"holds a credential at params\.extra_headers\.Authorization") as err:
        export_replay(tmp_path / "llm.sqlite", "r1", tmp_path / "pack")
    assert SECRET not in str(err.value) and not (tmp_path / "pack" / "llm.sqlite").exists()
