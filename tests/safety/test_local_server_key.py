"""Issue 46, case 7: the local llama server could be impersonated on a shared host. It bound 127.0.0.1 with no
key, ``free_ports`` released the port before the server bound it, and readiness accepted any HTTP 200 from
``/models``: another local user who saw ``--port N`` in ``ps`` could bind first and receive every prompt. Played
with a stand-in for the server process (tests/safety/fake_llama_server.py) and a real impostor socket; the real
server's key check is tests/safety/test_local_server_key_real.py (local_llm)."""
from __future__ import annotations

import http.server
import sys
import threading
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pipeline.llm.local_server import LocalServer, free_port
from pipeline.llm_models import LocalModelSpec

FAKE = Path(__file__).with_name("fake_llama_server.py")


@pytest.fixture()
def fake_server(tmp_path, monkeypatch):
    """LocalServer launching the stand-in: llama_cpp looks installed and the GGUF is there."""
    monkeypatch.setitem(sys.modules, "llama_cpp", types.ModuleType("llama_cpp"))
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(LocalServer, "command", lambda self, model_path: [
        sys.executable, str(FAKE), "--port", str(self.port), "--model_alias", self.name])
    spec = LocalModelSpec.from_dict("gemma", {"package": "none", "gguf": str(tmp_path / "m.gguf"), "n_threads": 1,
                                              "startup_timeout_s": 20})
    return spec


def test_an_impostor_on_the_port_gets_no_prompt(fake_server, monkeypatch):
    """The impostor binds the port first and answers 200 to anything; the started server, still loading, then
    fails to bind. Readiness used to take the impostor's 200 for the server's."""
    monkeypatch.setenv("FAKE_START_S", "2")

    class Impostor(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": [{"id": "gemma"}]}')

        def log_message(self, *a):
            pass

    port = free_port()
    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", port), Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    try:
        server = LocalServer(fake_server, log_path=Path(fake_server.gguf).with_suffix(".log")).launch(port)
        with pytest.raises(RuntimeError, match=f"another process listens on 127.0.0.1:{port}"):
            server.wait_ready()
        assert server.proc is None  # stopped
    finally:
        impostor.shutdown()
        impostor.server_close()


def test_the_server_gets_a_random_key_in_its_environment_not_its_command_line(fake_server):
    a = LocalServer(fake_server, log_path=Path(fake_server.gguf).with_suffix(".log"))
    b = LocalServer(fake_server, log_path=Path(fake_server.gguf).with_suffix(".1.log"))
    assert a.key != b.key and len(a.key) >= 32
    with a:
        cmdline = Path(f"/proc/{a.proc.pid}/cmdline").read_bytes()
        assert a.key.encode() not in cmdline
        assert a.key.encode() in Path(f"/proc/{a.proc.pid}/environ").read_bytes()
        with pytest.raises(urllib.error.HTTPError) as refused:  # another local user, without the key
            urllib.request.urlopen(f"{a.api_base}/models", timeout=5)
        assert refused.value.code == 401


def test_the_gateway_calls_its_local_servers_with_their_key(fake_server):
    from pipeline.llm.serving import LocalPool
    from pipeline.llm_models import LLMSpec

    llm = LLMSpec.from_dict({"local": {"gemma": {"package": "none", "gguf": fake_server.gguf, "n_threads": 1,
                                                 "startup_timeout_s": 20}}})
    pool = LocalPool(llm.resolve("local/gemma")).start()
    try:
        model, route = pool.route
        assert route["api_key"] == pool.key and all(s.key == pool.key for s in pool.servers)
        with pool.server() as where:
            req = urllib.request.Request(f"{where['api_base']}/models", headers={"Authorization": f"Bearer {pool.key}"})
            with urllib.request.urlopen(req, timeout=5) as resp:
                assert resp.status == 200
    finally:
        pool.close()
