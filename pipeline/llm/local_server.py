"""A local OpenAI-compatible LLM server on 127.0.0.1, started by the job that needs it.

Why: the LLM path (planner, answers, retries, sampling, voting, failures) must run for real on
a machine with no internet and no GPU. llama-cpp-python's server speaks the OpenAI API, so
litellm reaches it like any hosted model and the rest of the pipeline cannot tell the
difference. The model file comes from a PyPI package (chunks assembled into one GGUF, once),
so nothing is downloaded at run time.

Config (``llm.local.<name>``): ``package`` (the Python package with ``assemble(path)``, or with
``parts`` the numbered packages of its pieces: pipeline/llm/model_file.py), ``sha256``, ``gguf``
(where the assembled file lives, under data/), ``chat_format`` (Gemma's GGUF has no template: without
``gemma`` the server silently uses a wrong one; ``gguf``: the template the file carries), ``n_ctx``, ``n_threads``,
``logits_all`` (false: the server computes the vocabulary projection for the last prompt token only;
llama_cpp.server's own default, true, does it for every prompt token, which for Gemma's 262k-token
vocabulary costs more than the rest of the model and is only needed for logprobs).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from pipeline.llm.bound_child import popen_bound
from pipeline.llm.local_auth import listener_is, new_key, server_env
from pipeline.llm.model_file import write_model
from pipeline.llm_models import TEMPLATE_IN_FILE, LocalModelSpec


def assemble_model(spec: LocalModelSpec, out: str | Path | None = None) -> Path:
    """The GGUF file of a local model, assembled from its PyPI package(s) if missing.
    Written to a temp name and renamed, so a killed run never leaves half a model."""
    path = Path(out or spec.gguf)
    if path.exists() and path.stat().st_size > 0:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    write_model(spec, tmp)  # its package's assemble(), or its pieces in order; checked against sha256
    os.replace(tmp, path)
    return path


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports: all bound at once, so servers launched together never get the same one."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


class LocalServer:
    """``python -m llama_cpp.server`` for one model, as a context manager or start()/stop()."""

    def __init__(self, spec: LocalModelSpec, log_path: str | Path | None = None, key: str | None = None):
        self.name, self.spec = spec.name, spec
        self.key = key or new_key()  # required of every request; in its environment, not its command line
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log_path = Path(log_path or Path(spec.gguf).with_suffix(".server.log"))

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def headers(self) -> dict[str, str]:
        """What a direct HTTP request to the server sends: its key (it refuses a request without, #46)."""
        return {"Authorization": f"Bearer {self.key}"}

    def command(self, model_path: Path) -> list[str]:
        c = self.spec
        return [
            sys.executable,
            "-m",
            # llama_cpp.server with greedy decoding under a grammar that checks the picked token only
            # (the same tokens, ~2x faster per generated token on Gemma's 262k vocabulary), and every
            # prompt evaluated whole (a reply does not depend on the request before it)
            "pipeline.llm.llama_server",
            "--model",
            str(model_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(c.n_ctx),
            "--n_threads",
            str(c.n_threads),
            # prompts on the same threads: llama_cpp.server's default is every core of the machine
            # (multiprocessing.cpu_count()), so each 1-thread server still evaluated prompts on 2 OpenMP
            # threads that spin at every op's barrier while the other is descheduled (ggml's CPU
            # kernels give each output row to one thread: the same logits at any thread count)
            "--n_threads_batch",
            str(c.n_threads),
            # none for a model whose GGUF carries its template (chat_format: gguf): llama-cpp-python reads it
            *(["--chat_format", c.chat_format] if c.chat_format != TEMPLATE_IN_FILE else []),
            "--logits_all",
            "true" if c.logits_all else "false",
            "--model_alias",
            self.name,
        ]

    def start(self) -> LocalServer:
        """Launch the server and wait until it answers."""
        return self.launch().wait_ready()

    def launch(self, port: int | None = None) -> LocalServer:
        """Start the server process (on ``port``, default a free one) without waiting for it
        (:func:`start_all` starts several at once)."""
        try:
            import llama_cpp  # noqa: F401  (fail here with a clear line, not as a dead subprocess)
        except ImportError:
            raise ValueError(
                "llama-cpp-python is not installed: python -m pipeline llm-runtime --out data/models/llama-cpp-python.json "
                "builds it (the llm_runtime rule does this in a run)"
            ) from None
        model_path = assemble_model(self.spec)
        self.port = port or free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        # killed with the job, even by SIGKILL, never with the thread that asked (pipeline/llm/bound_child.py)
        self.proc = popen_bound(
            self.command(model_path),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=server_env(self.key),
        )
        log.close()
        return self

    def wait_ready(self) -> LocalServer:
        """Wait until the launched server lists its model to its key; stopped and an error after
        ``startup_timeout_s``, or at once when another process listens on its port (pipeline/llm/local_auth.py)."""
        assert self.proc is not None, "launch() first"
        deadline = time.monotonic() + self.spec.startup_timeout_s
        models = urllib.request.Request(f"{self.api_base}/models", headers=self.headers)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"local LLM server '{self.name}' exited with {self.proc.returncode}; see {self.log_path}"
                )
            if listener_is(self.proc.pid, self.port) is False:  # asked first: its key goes to no one else
                self.stop()
                raise RuntimeError(
                    f"local LLM server '{self.name}': another process listens on 127.0.0.1:{self.port}, not the "
                    "server this job started; no prompt is sent to it (another user on this host?)"
                )
            try:
                with urllib.request.urlopen(models, timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except OSError:  # not listening yet
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(
            f"local LLM server '{self.name}' not ready after {self.spec.startup_timeout_s} s; see {self.log_path}"
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def start_all(servers: list[LocalServer]) -> list[LocalServer]:
    """Launch every server, then wait for each: their start-ups (imports, model load) overlap, so a
    job's first calls wait for one start-up, not one per server. One fails: all are stopped."""
    try:
        for server, port in zip(servers, free_ports(len(servers)), strict=True):
            server.launch(port)
        return [server.wait_ready() for server in servers]
    except BaseException:
        for server in servers:
            server.stop()
        raise
