"""Kinds of LLM serving are registry entries (pipeline/llm_models.py SERVING): a toy kind registered here,
and nowhere else, is routed by the gateway, listed by the plan, timed and priced by the estimate and
checked by the preflight, with no other edit."""
import contextlib
from dataclasses import dataclass

import pytest
import yaml

from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.estimate import estimate
from pipeline.llm.cache import LLMRequest
from pipeline.llm.gateway import CacheMiss, LLMGateway
from pipeline.llm.preflight import preflight
from pipeline.llm_models import SERVING, LLMSpec, ServingKind
from pipeline.plan import routes
from pipeline.workflow import llm_work

pytestmark = pytest.mark.data  # the estimate counts the tiny grid's real questions


@dataclass
class ToyConnection:
    """Answers through litellm's mock: what the gateway is handed is all a kind gives it."""

    model: str
    opened: list

    @property
    def route(self):
        return "openai/toy-served", {"mock_response": f"toy says {self.model}"}

    @contextlib.contextmanager
    def server(self):
        self.opened.append("call")
        yield {}

    def close(self):
        self.opened.append("closed")


OPENED: list = []
TOY = ServingKind(
    "toy",
    connect=lambda model: ToyConnection(model.name, OPENED),
    where=lambda model: "the toy box",
    per_call_s=lambda model, calls, prompt, completion: (7.0, "7 s a call (toy)"),
    prefix="toy/",
    calls_out=False,
    free=True,
    own_concurrency=3,
    sends="{carried}, into the toy box",
    problem=lambda model: None if model.name != "toy/broken" else "is broken",
)


@pytest.fixture
def toy():
    SERVING.register(TOY)
    OPENED.clear()
    yield TOY
    SERVING.unregister("toy")


def toy_grid(model: str = "toy/one") -> dict:
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["answering"]["toy-llm"] = {"retrieval": "bm25", "backend": "llm", "model": model, "splits": ["train"]}
    return validate(cfg)


def test_the_gateway_routes_a_registered_kind(toy, tmp_path):
    llm = LLMSpec.from_dict({"max_retries": 0})
    assert llm.resolve("toy/one").kind is toy and llm.resolve("toy/one").concurrency == 3  # its own default
    assert llm.resolve("toy/one").endpoint is None  # it calls out to no endpoint: none in the cache key
    with LLMGateway(tmp_path / "llm.sqlite", llm) as gw:
        result = gw.complete(LLMRequest("toy/one", [{"role": "user", "content": "hi"}]))
        assert result.ok and result.text == "toy says toy/one"
        assert gw.stats.requests == 1
    assert OPENED == ["call", "closed"]  # a server per call, closed with the gateway
    replay = LLMSpec.from_dict({"mode": "replay"})
    with LLMGateway(tmp_path / "llm.sqlite", replay) as gw, pytest.raises(CacheMiss):
        gw.complete(LLMRequest("toy/one", [{"role": "user", "content": "never asked"}]))


def test_the_plan_estimate_and_preflight_read_a_registered_kind(toy):
    work = llm_work(toy_grid())
    est = estimate(work)
    line = next(x for x in est.lines if x.what == "answer toy-llm")
    assert line.usd == (0.0, 0.0)  # free: runs in the toy box
    assert est.times["toy/one"].per_call_s == 7.0 and est.times["toy/one"].concurrency == 3
    route = next(r for r in routes(work.llm, est) if r.what == "answer toy-llm")
    assert (route.endpoint, route.price) == ("the toy box", "toy (free)")
    assert route.sends == "questions + document snippets, into the toy box"
    preflight(work)  # no key asked of a kind that calls out to no endpoint
    with pytest.raises(ConfigError, match=r"model 'toy/broken' \(used by toy-llm\) is broken"):
        preflight(llm_work(toy_grid("toy/broken")))
