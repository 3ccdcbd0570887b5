"""The claims on several labelled WattBot splits (#33 item 2, #44 item 7): a row per split where every variant
of the claim answered it (test first, the score split second); the test row decides the claim in its
system's Holm family, the train row beside it is in-sample, in no family; a claim answered on train alone is
decided there, labelled in-sample; identical outputs read from the row's own split's answers."""
import json

import numpy as np
import pandas as pd
import pytest

from pipeline.report.claims.claim import Claim
from pipeline.report.claims.measure import IDENTICAL, ClaimsInputs, SplitTables, measure_claims
from pipeline.report.stats.verdicts import holm
from pipeline.report.pages.claims_table import claims_md, rule_text
from pipeline.report.stats.ablation import InputFiles
from pipeline.report.stats.outputs import Outputs
from pipeline.workflow.report_settings import figures_params

REP = {"seed": 0, "bootstrap": 300, "permutations": 1000}


def tables(values: dict[str, np.ndarray]) -> dict:
    ids = [f"q{i}" for i in range(len(next(iter(values.values()))))]
    return {("answering", v): pd.DataFrame({"score": x}, index=ids) for v, x in values.items()}


def claim(**kw) -> Claim:
    base = dict(id="c", system="S", claim="B beats A", source="src", published="+1 pp", ablation="ab",
                treatment="B", control="A", metric="score", datasets=("wattbot",), direction="greater")
    return Claim(**(base | kw))


@pytest.fixture
def measured() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    a_train, a_test = rng.integers(0, 2, 41).astype(float), rng.integers(0, 2, 187).astype(float)
    train = tables({"A": a_train, "B": np.clip(a_train + (rng.random(41) < 0.3), 0, 1), "L": a_train})
    test = tables({"A": a_test, "B": np.clip(a_test + (rng.random(187) < 0.3), 0, 1)})  # L answers train only
    ab = {"ab": {"stage": "answering", "variants": ["A", "B", "L"]}}
    params = figures_params({"report": REP | {"ablations": ab}, "suite": {}, "answering": {}, "retrieval": {},
                             "config_hash": "h"})
    claims = [claim(id="both"), claim(id="llm", treatment="L"), claim(id="flat", treatment="A", control="B")]
    return measure_claims(params, SplitTables({"test": test, "train": train}), {}, params.ablations, claims,
                          ClaimsInputs(sizing=False))


def test_a_row_per_split_where_both_variants_answered_it(measured):
    rows = list(zip(measured["claim_id"], measured["dataset"], measured["n"]))
    assert rows == [("both", "wattbot/test", 187), ("both", "wattbot/train", 41),
                    ("llm", "wattbot/train", 41),  # L answers train only: no test row
                    ("flat", "wattbot/test", 187), ("flat", "wattbot/train", 41)]


def test_test_rows_decide_in_the_systems_family_and_train_rows_beside_them_are_in_sample(measured):
    t = measured.set_index(["claim_id", "dataset"])
    assert list(measured["sample"]) == ["held-out", "in-sample", "in-sample", "held-out", "in-sample"]
    assert list(measured["decides"]) == [True, False, True, True, False]  # llm: no test row, train decides
    assert list(measured["family"].fillna("")) == ["S", "", "S", "S", ""]
    deciding = measured[measured["decides"]]
    assert deciding["p_holm"].tolist() == pytest.approx(holm(deciding["p_value"].tolist()), abs=1e-5)
    assert measured.loc[~measured["decides"], "p_holm"].isna().all()
    assert t.loc[("llm", "wattbot/train"), "claim_verdict"] == t.loc[("llm", "wattbot/train"), "verdict"]
    note = rule_text(measured)
    assert note.endswith("Families here: S.") and note in claims_md(measured, "h")


def write_answers(path, values: list[str]) -> str:
    records = [{"id": f"q{i}", "answer_value": v, "answer_unit": "is_blank", "ref_id": ["d1"]} for i, v in enumerate(values)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_identical_outputs_are_read_from_the_rows_own_split(tmp_path):
    """A and B answer alike on test and differently on train (each scoring the same everywhere): the test row
    reads 'not testable: identical outputs' from test's answers, the train row stays undecided."""
    ids = [f"q{i}" for i in range(4)]
    flat = {("answering", v): pd.DataFrame({"score": [1.0, 1.0, 0.0, 0.0]}, index=ids) for v in "AB"}
    train = InputFiles(answers_of={"A": write_answers(tmp_path / "a.jsonl", ["1", "2", "3", "4"]),
                                   "B": write_answers(tmp_path / "b.jsonl", ["1", "2", "3", "5"])})
    test = InputFiles(answers_of={v: write_answers(tmp_path / f"{v}-test.jsonl", ["1", "2", "3", "4"]) for v in "AB"})
    params = figures_params({"report": REP | {"ablations": {"ab": {"stage": "answering", "variants": ["A", "B"]}}},
                             "suite": {}, "answering": {}, "retrieval": {}, "config_hash": "h"})
    t = measure_claims(params, SplitTables({"test": flat, "train": flat}), {}, params.ablations, [claim()],
                       ClaimsInputs(Outputs(train, splits={"test": test}).of, sizing=False)).set_index("dataset")
    assert t.loc["wattbot/test", "verdict"] == IDENTICAL and t.loc["wattbot/test", "family"] == "S"
    assert t.loc["wattbot/train", "verdict"] == "undecided"
    assert "answers differ on 1 of 4 questions" in t.loc["wattbot/train", "note"]


def test_figures_rule_is_passed_each_splits_answers():
    """With test labelled (the default config), the figures rule declares every test answering variant's answers
    beside its per-question scores, so a test row can read 'identical outputs' from them."""
    from pipeline import paths
    from pipeline.config.load import load_config
    from pipeline.datasets.paths import REPO
    from pipeline.workflow import figures_inputs, named_args

    files = figures_inputs(load_config([REPO / "config.yaml"]))
    assert set(files["split_answers"]) == set(files["split_per_question"]) and files["split_answers"]
    name = next(iter(files["split_answers"]))
    split, av = name.split(":")
    assert files["split_answers"][name] == paths.answers(av, split) and split == "test"
    assert f"--split-answers {name}=" in named_args(files)
