"""The claims on several labelled WattBot splits (#33 item 2): a row per split where every variant of the
claim answered it (test first, the score split second), and Holm-adjusted p within each dataset-split."""
import numpy as np
import pandas as pd
import pytest

from pipeline.report.pages.claims import Claim, SplitTables, claims_md, holm, measure_claims, rule_text
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
    return measure_claims(params, SplitTables({"test": test, "train": train}), {}, params.ablations, None, claims)


def test_a_row_per_split_where_both_variants_answered_it(measured):
    rows = list(zip(measured["claim_id"], measured["dataset"], measured["n"]))
    assert rows == [("both", "wattbot/test", 187), ("both", "wattbot/train", 41),
                    ("llm", "wattbot/train", 41),  # L answers train only: no test row
                    ("flat", "wattbot/test", 187), ("flat", "wattbot/train", 41)]


def test_holm_within_each_dataset_split_and_the_note_says_so(measured):
    for dataset, part in measured.groupby("dataset"):
        assert part["p_holm"].tolist() == pytest.approx(holm(part["p_value"].tolist()), abs=1e-5)
    assert measured["p_holm"].tolist() != pytest.approx(holm(measured["p_value"].tolist()), abs=1e-5)
    note = rule_text(measured)
    assert "Holm-adjusted within each dataset-split (families: wattbot/test, wattbot/train)" in note
    assert "across the table" not in note and note in claims_md(measured, "h")
