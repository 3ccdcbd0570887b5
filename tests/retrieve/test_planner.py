"""Query planner: acronyms mined from real WattBot documents, offline plans for real train
questions, the LLM planner's parsing and its recorded fallback, the config factory."""
import csv
import json

import pytest

from pipeline.llm.gateway import LLMGateway, LLMResult
from pipeline.llm.pool import FatalLLMError
from pipeline.parse.payload import load_payload
from pipeline.retrieve.planner import (LLMPlanner, OfflinePlanner, make_planner, mine_acronyms,
                                       parse_queries, planner_problem)
from pipeline.specs import PlannerSpec

DOCS = ["patterson2021", "li2025b", "wu2021a", "amazon2023", "luccioni2025c"]


@pytest.fixture(scope="module")
def acronyms(wattbot_dir) -> dict[str, str]:
    texts = [n.text for d in DOCS for n in load_payload(wattbot_dir / "corpus" / f"{d}.json").at_level("sentence")]
    return mine_acronyms(texts)


@pytest.fixture(scope="module")
def train(wattbot_dir) -> list[dict]:
    with open(wattbot_dir / "train_QA.csv", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def test_acronyms_defined_in_real_documents(acronyms):
    assert acronyms["pue"] == "power usage effectiveness"  # patterson2021, li2025b, wu2021a
    assert acronyms["wue"] == "water use effectiveness"  # amazon2023
    assert acronyms["ghg"] == "greenhouse gas"  # a multi-letter start: g(reen)h(ouse) g(as)
    assert acronyms["tpu"] == "tensor processing unit"
    assert acronyms["llm"] == "large language model"  # "... models (LLMs)" counted as the singular
    assert acronyms["moe"] == "mixture of expert"  # as patterson2021 writes it, "Mixture of Expert (MoE)"
    assert all(k == k.lower() and v == v.lower() for k, v in acronyms.items())


def test_mining_rules():
    texts = ["We report the power usage effectiveness (PUE) of each site.",
             "PUE (power usage effectiveness) is a ratio.",
             "Their data centre efficiency (PUE) is low.",  # does not spell PUE: ignored
             "The mixture-of-experts (MoE) layer and the Internet of Things (IoT).",
             "Service level objectives (SLOs) matter.",
             "UNITAR (the United Nations Institute for Training and Research) trains.",
             "A (Transformer) model (BERT) and a big model (LM)."]  # not acronyms / not spelled
    mined = mine_acronyms(texts)
    assert mined == {"pue": "power usage effectiveness", "moe": "mixture-of-experts", "iot": "internet of things",
                     "slo": "service level objective",
                     "unitar": "united nations institute for training and research"}
    assert mine_acronyms(reversed(texts)) == mined  # order does not matter
    # the most frequent long form wins, ties go to the alphabetically first
    assert mine_acronyms(["alpha beta (AB)", "apple banana (AB)", "apple banana (AB)"]) == {"ab": "apple banana"}
    assert mine_acronyms(["apple banana (AB)", "alpha beta (AB)"]) == {"ab": "alpha beta"}


def test_offline_plans_for_all_train_questions(acronyms, train):
    planner = OfflinePlanner(acronyms, n=4)
    for row in train:
        q, unit = row["question"], row["answer_unit"]
        plan = planner.plan(q, unit)
        assert plan[0] == q and 1 < len(plan) <= 4
        assert len({p.lower() for p in plan}) == len(plan)
        if unit != "is_blank":  # the last query carries the unit ("multiplier" as "times factor")
            assert all(w.lower() in plan[-1].lower() for w in planner.unit_words(unit)), (unit, plan)
            assert unit.lower() in plan[-1].lower() or unit == "multiplier", (unit, plan)
        assert OfflinePlanner(acronyms, n=2).plan(q, unit) == plan[:2]


def test_offline_plan_contents(acronyms, train):
    planner = OfflinePlanner(acronyms, n=4)

    def by_text(start: str) -> dict:
        return next(r for r in train if r["question"].startswith(start))

    row = by_text("What was the total electricity consumptio")
    q, expanded, keywords, unit = planner.plan(row["question"], row["answer_unit"])
    assert "tensor processing unit (TPU)" in expanded and "(MWH)" not in expanded  # units are not annotated
    assert keywords.startswith("total electricity consumption") and "2023" in keywords and "what" not in keywords.lower()
    assert unit.startswith(keywords) and "MWh" in unit and "energy" in unit

    row = by_text("Which of the following five large NLP DN")
    plan = planner.plan(row["question"], row["answer_unit"])
    assert "natural language processing (NLP)" in plan[1] and "deep neural networks (DNNs)" in plan[1]
    assert "GShard-600B" in plan[2] and "following" not in plan[2]

    row = by_text("As of 2023, what was the water use effec")  # WUE defined in the question: left alone
    assert planner.expand(row["question"]) == row["question"]
    assert OfflinePlanner({**acronyms, "aws": "amazon web services"}, 4).expand(row["question"]) == (
        "As of 2023, what was the water use effectiveness (WUE) for amazon web services (AWS) data centers, in L/kWh?")
    assert planner.plan(row["question"], row["answer_unit"])[-1].endswith("L/kWh liters per kWh")  # "water" is in the keywords already

    # long form in the question -> its acronym; scaffolding removed from the keyword query
    q = "True or False: The 2023 US Executive Order mentioned the greenhouse gas emissions of large language models."
    plan = planner.plan(q)
    assert "greenhouse gas (GHG) emissions" in plan[1] and "large language models (LLMs)" in plan[1]
    assert plan[2] == "2023 US Executive Order mentioned greenhouse gas emissions large language models"
    q = "According to recent estimates, what percentage of a model's total lifecycle energy use can inference account for?"
    assert planner.plan(q, "percent")[1:] == ["percentage model total lifecycle energy use inference account",
                                              "percentage model total lifecycle energy use inference account percent %"]
    # "ML.ENERGY" and "GPU-based" are names, not acronyms to expand
    assert OfflinePlanner({"ml": "machine learning", "gpu": "graphics processing unit"}, 4).expand(
        "the ML.ENERGY benchmark on GPU-based nodes") == "the ML.ENERGY benchmark on GPU-based nodes"
    assert OfflinePlanner(acronyms, n=1).plan(q) == [q]
    with pytest.raises(ValueError, match="planner.n"):
        OfflinePlanner(acronyms, n=0)


Q = "What were the net CO2e emissions from training the GShard-600B model?"


def llm_plan(tmp_path, reply, n=4):
    planner = LLMPlanner(LLMGateway(tmp_path / "llm.sqlite"), PlannerSpec.from_dict({"kind": "llm", "model": "openai/mock", "n": n, "params": {"mock_response": reply}}))
    return planner, planner.plan(Q, "tCO2e")


def test_llm_planner_parses_json_and_lists(tmp_path):
    reply = 'Sure! {"queries": ["GShard-600B net tCO2e", "' + Q.upper() + '", "gshard-600b NET tco2e", "GShard CO2e"]}'
    planner, plan = llm_plan(tmp_path, reply)
    assert plan == [Q, "GShard-600B net tCO2e", "GShard CO2e"] and planner.failures == []
    assert "up to 3" in planner.messages(Q, "tCO2e")[0]["content"] and "tCO2e" in planner.messages(Q, "tCO2e")[0]["content"]
    planner, plan = llm_plan(tmp_path, json.dumps(["a", "b", "c", "d", "e"]))
    assert plan == [Q, "a", "b", "c"] and planner.failures == []
    assert planner.plan(Q, "tCO2e") == plan and planner.gateway.calls == 1  # the second plan is a cache hit
    assert parse_queries('{"queries": [1, " ", "x"]}') == ["x"] and parse_queries("no json") is None


def test_llm_planner_falls_back_and_records_why(tmp_path):
    for reply, reason in [("I cannot help with that.", "unparseable"), ('{"queries": []}', "no new queries"),
                          (json.dumps({"queries": [Q.lower()]}), "no new queries")]:
        planner, plan = llm_plan(tmp_path, reply)
        assert plan == [Q, Q.split("?")[0]]
        assert len(planner.failures) == 1 and planner.failures[0][0] == Q and reason in planner.failures[0][1]

    class Down:
        def complete(self, request, validate=None):
            return LLMResult("", False, "APIConnectionError: refused")

    planner = LLMPlanner(Down(), PlannerSpec.from_dict({"kind": "llm", "model": "openai/mock", "n": 4}))
    assert planner.plan("True or False: x.") == ["True or False: x."]  # no "?": the fallback is the question
    assert "APIConnectionError" in planner.failures[0][1]
    assert LLMPlanner(Down(), PlannerSpec.from_dict({"kind": "llm", "model": "openai/mock", "n": 1})).plan(Q) == [Q]  # n = 1 makes no call


def test_llm_planner_asks_again_when_the_reply_is_not_its_json(tmp_path):
    """A reply parse_queries cannot read fails the gateway's check: asked again (at once) up to the
    retries, then the model's words are kept and the question falls back; an auth error stops the job."""
    planner, plan = llm_plan(tmp_path, "I cannot help with that.")
    assert planner.gateway.calls == planner.gateway.max_retries + 1 and plan == [Q, Q.split("?")[0]]
    assert planner_problem('{"queries": []}') is None and "no JSON list" in planner_problem("I cannot")

    class Refused:
        def complete(self, request, validate=None):
            return LLMResult("", False, "AuthenticationError: bad key", fatal=True)

    with pytest.raises(FatalLLMError, match="planner model openai/mock: AuthenticationError"):
        LLMPlanner(Refused(), PlannerSpec.from_dict({"kind": "llm", "model": "openai/mock", "n": 4})).plan(Q)


def test_make_planner(tmp_path, acronyms):
    def make(cfg, gateway=None):
        return make_planner(PlannerSpec.from_dict(cfg), lambda: acronyms, gateway)

    assert make(None) is None and make({"kind": "none"}) is None
    offline = make({"kind": "offline", "n": 3})
    assert isinstance(offline, OfflinePlanner) and offline.n == 3 and offline.acronyms == acronyms
    gw = LLMGateway(tmp_path / "llm.sqlite")
    llm = make({"kind": "llm", "n": 4, "model": "openai/mock", "params": {"temperature": 0}}, gw)
    assert isinstance(llm, LLMPlanner) and llm.params == {"temperature": 0}
    for cfg, match in [({"kind": "hyde"}, "planner.kind"), ({"kind": "llm", "n": 4}, "planner.model"),
                       ({"kind": "llm", "model": "m"}, "gateway"), ({"kind": "offline", "n": 0}, "planner.n"),
                       ({"kind": "offline", "queries": 4}, "planner.queries")]:
        with pytest.raises(ValueError, match=match):
            make(cfg)
