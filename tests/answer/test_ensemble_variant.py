"""`backend: ensemble` answering variants: config resolution and errors, the DAG wiring, and the
`ensemble` verb that votes the members' answer records."""
import json

import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.config import ConfigError, answer_splits, validate
from pipeline.datasets.paths import REPO
from pipeline.workflow import answer_variants, answering_params, ensemble_args, uses_llm


@pytest.fixture()
def raw():
    import yaml

    return yaml.safe_load((REPO / "tests" / "grid.yaml").read_text())  # the tests' own grid, not config.yaml


def test_the_grid_has_a_resolved_ensemble(raw):
    cfg = validate(raw)
    ens = cfg["answering"]["ens5"]
    assert ens["members"][-1] == "llm-cf" and ens["retrieval"] == cfg["answering"]["convex-extractive"]["retrieval"]
    assert answer_splits(cfg, "ens5") == ["train"]          # llm-cf answers train only
    assert uses_llm(cfg, "ens5") == 0
    assert "ens5" not in answer_variants(cfg, ensemble=False).split("|")
    assert answer_variants(cfg, ensemble=True) == "ens5"
    assert ensemble_args(cfg, "ens5", "train").startswith(
        "--member convex-extractive=results/wattbot/answers/convex-extractive/train.jsonl --member q2-extractive=")


def test_a_changed_vote_changes_only_the_ensemble_params(raw):
    cfg = validate(raw)
    before = {v: answering_params(cfg, v) for v in cfg["answering"]}
    raw["answering"]["ens5"]["vote"]["mode"] = "union"
    after = {v: answering_params(validate(raw), v) for v in cfg["answering"]}
    assert [v for v in before if before[v] != after[v]] == ["ens5"]


@pytest.mark.parametrize("change, key", [
    (lambda a: a["ens5"].update(members=["convex-extractive", "nobody"]), "answering.ens5.members"),
    (lambda a: a.update(ens2={"backend": "ensemble", "members": ["ens5", "llm-cf"]}), "answering.ens2.members"),
    (lambda a: a["ens5"].update(members=["llm-cf", "llm-cf"]), "answering.ens5.members"),
    (lambda a: a["ens5"].update(model="openai/gpt-4o-mini"), "answering.ens5.model"),
    (lambda a: a["ens5"].update(splits=["test"]), "answering.ens5.splits"),
    (lambda a: a["convex-extractive"].update(members=["llm-cf"]), "answering.convex-extractive.members"),
    (lambda a: a["ens5"].pop("members"), "answering.ens5"),
    (lambda a: a["ens5"]["vote"].update(mode="plurality"), "answering.ens5.vote.mode"),
    (lambda a: a["convex-extractive"].pop("retrieval"), "answering.convex-extractive"),
])
def test_bad_ensembles_name_their_key(raw, change, key):
    change(raw["answering"])
    with pytest.raises(ConfigError, match=f"'{key}"):
        validate(raw)


def record(qid, value, refs, blank=False, call=None, failure=""):
    rec = {"id": qid, "question": f"q {qid}?", "answer_unit": "kWh", "answer": value, "answer_value": value,
           "ref_id": refs, "is_blank": blank, "explanation": "e", "supporting_materials": "is_blank",
           "failure": failure}
    return rec | ({"call": call} if call else {})


def test_ensemble_verb_votes_records_into_answers_and_a_submission(tmp_path):
    call = {"n_calls": 2, "failed_calls": 0, "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.5}
    members = {
        "x1": [record("a", "5", ["d1"]), record("b", "is_blank", [], blank=True)],
        "llm": [record("a", "5.0", ["d2"], call=call), record("b", "is_blank", [], blank=True, call=call,
                                                                failure="timeout")],
        "x2": [record("a", "5", ["d2"]), record("b", "7", ["d1"])],
    }
    args = []
    for name, recs in members.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
        args += ["--member", f"{name}={path}"]
    pd.DataFrame({"id": ["a", "b"], "question": ["q a?", "q b?"], "answer_unit": ["kWh", "kWh"]}).to_csv(
        tmp_path / "questions.csv", index=False)
    pd.DataFrame({"id": ["d1", "d2"], "url": ["https://d1", "https://d2"]}).to_csv(tmp_path / "meta.csv", index=False)
    params = {"answering": {"backend": "ensemble", "members": list(members),
                            "vote": {"mode": "union", "ignore_blank": True}}, "name": "ens"}
    out = tmp_path / "ens.jsonl"
    assert main(["ensemble", *args, "--questions", str(tmp_path / "questions.csv"), "--metadata",
                 str(tmp_path / "meta.csv"), "--params", json.dumps(params), "--out", str(out),
                 "--out-csv", str(tmp_path / "ens.csv")]) == 0
    recs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    # exact strings: "5" (x1, x2) beats "5.0"; union of the two 5-voters' refs
    assert recs["a"]["answer_value"] == "5" and recs["a"]["ref_id"] == ["d1", "d2"]
    assert recs["a"]["voters"] == ["x1", "x2"] and "members: x1, llm, x2" in recs["a"]["explanation"]
    assert [m["answer_value"] for m in recs["a"]["members"]] == ["5", "5.0", "5"]
    assert recs["a"]["call"] == {"n_calls": 2, "failed_calls": 0, "prompt_tokens": 100, "completion_tokens": 10,
                                 "cost_usd": 0.5}
    assert recs["b"]["answer_value"] == "7" and recs["b"]["failure"] == ""   # one member failed, not all
    sub = pd.read_csv(tmp_path / "ens.csv", dtype=str, keep_default_na=False)
    assert list(sub["answer_value"]) == ["5", "7"] and sub["ref_url"][0] == "['https://d1','https://d2']"
    assert (tmp_path / "ens.jsonl.manifest.json").exists()
    params["answering"]["members"] = ["x2", "x1", "llm"]   # files given in another order than configured
    assert main(["ensemble", *args, "--questions", str(tmp_path / "questions.csv"), "--metadata",
                 str(tmp_path / "meta.csv"), "--params", json.dumps(params), "--out", str(out),
                 "--out-csv", str(tmp_path / "ens.csv")]) == 2
