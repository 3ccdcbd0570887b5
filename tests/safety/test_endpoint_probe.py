"""Issue 46, case 6: the endpoint probe forwarded the key on a redirect, printed passwords, and let plain
http:// carry a hosted key silently. Each test plays it against real HTTP servers on 127.0.0.1."""
from __future__ import annotations

import base64
import http.server
import threading
from contextlib import contextmanager

import pytest
import yaml

from pipeline.bench.standin import StandIn, StandInConfig
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.llm.endpoints import check_endpoints, probe_one
from pipeline.llm_models import LLMSpec
from pipeline.workflow import llm_work

KEY = "sk-probe-Rk2Wm9Tx4Lq7Zp3Vn8Bc"
PASSWORD = "pw-Jd4Ks9Xm2Qv7Rt5Nz3"


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def model(endpoint: str, **per_model):
    return LLMSpec.from_dict({"per_model": {"openai/standin": {"api_base": endpoint, **per_model}}}).resolve(
        "openai/standin"
    )


def test_a_redirect_does_not_carry_the_key_to_the_host_it_names(monkeypatch):
    monkeypatch.setenv("WB_KEY", KEY)
    seen: list[str | None] = []

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": [{"id": "standin"}]}')

        def log_message(self, *a):
            pass

    with serving(Elsewhere) as other:

        class Redirect(Elsewhere):
            def do_GET(self):
                self.send_response(302)
                self.send_header("Location", f"{other}/v1/models")
                self.end_headers()

        with serving(Redirect) as first:
            status = probe_one(model(f"{first}/v1", api_key_env="WB_KEY"), timeout_s=5)
    assert seen == []  # the other host never saw the request, let alone the key
    assert not status.ok and "redirects (HTTP 302" in status.problem and KEY not in status.line()


def test_user_and_password_in_api_base_are_never_printed():
    """The probe used to fail (urllib took user:password@host for the host name) and its ConfigError and log
    repeated the password; now it reaches the server and its line masks them, and a config holding them is
    refused without repeating them."""
    with StandIn() as server:
        host = server.api_base.split("://", 1)[1]
        status = probe_one(model(f"http://alice:{PASSWORD}@{host}"), timeout_s=5)
    assert status.ok, status.problem
    assert PASSWORD not in status.line() and f"http://***@{host}" in status.line()
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["answering"]["hosted"] = {"retrieval": "bm25", "backend": "llm", "model": "openai/standin"}
    cfg["llm"]["per_model"] = {"openai/standin": {"api_base": f"http://alice:{PASSWORD}@127.0.0.1:9/v1"}}
    with pytest.raises(ConfigError) as err:
        validate(cfg)
    assert "llm.per_model.openai/standin.api_base" in str(err.value) and PASSWORD not in str(err.value)


def test_an_endpoint_password_from_the_environment_is_sent_as_basic_auth(monkeypatch):
    """userinfo_env: the probe sends user:password as HTTP Basic, as litellm's client does for the call."""
    basic = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    monkeypatch.setenv("WB_USERINFO", f"alice:{PASSWORD}")
    with StandIn(StandInConfig(require_headers={"Authorization": basic})) as server:
        status = probe_one(model(server.api_base, userinfo_env="WB_USERINFO"), timeout_s=5)
        assert status.ok and server.snapshot()["unauthorised"] == 0
    assert PASSWORD not in status.line()


def test_a_dead_endpoint_with_a_password_fails_without_printing_it(tmp_path, capsys):
    dead = model(f"http://alice:{PASSWORD}@127.0.0.1:9/v1")
    status = probe_one(dead, timeout_s=2)
    assert not status.ok and PASSWORD not in status.line()


def test_plain_http_with_a_hosted_key_warns_except_on_loopback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WB_KEY", KEY)
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["cache_dir"] = str(tmp_path)
    cfg["answering"]["hosted"] = {"retrieval": "bm25", "backend": "llm", "model": "openai/standin"}
    cfg["llm"]["per_model"] = {"openai/standin": {"api_base": "http://192.0.2.1:9/v1", "api_key_env": "WB_KEY"}}
    with pytest.raises(ConfigError):  # nothing answers at TEST-NET-1; the warning comes first
        check_endpoints(llm_work(validate(cfg)), timeout_s=1)
    err = capsys.readouterr().err
    assert "warning: endpoint http://192.0.2.1:9/v1 (openai/standin): plain http://" in err and KEY not in err
    with StandIn() as server:  # loopback: fine
        cfg["llm"]["per_model"]["openai/standin"]["api_base"] = server.api_base
        check_endpoints(llm_work(validate(cfg)), timeout_s=5)
    assert "plain http://" not in capsys.readouterr().err
