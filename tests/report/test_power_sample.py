"""Power-sized samples (#33 item 6, `power_subsets`): each claim's n from the pilot's paired spread within
floor..cap, one seeded sample per group drawn from an ids-only file (paired variants answer the same ids),
the config's checks, and a claims row measured on the sample."""
import json

import numpy as np
import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.config import load_config
from pipeline.config_schema import ConfigError
from pipeline.datasets.paths import REPO
from pipeline.report.claims.claim import Claim, Effect
from pipeline.report.claims.measure import SplitTables, measure_claims
from pipeline.report.pages.claims_table import verdict_text
from pipeline.report.stats.power import SizedClaim, claim_size, draw_ids
from pipeline.report.stats.verdicts import n_needed
from pipeline.workflow import answer_questions, sample_params, split_labels
from pipeline.workflow.report_settings import figures_params

Z = 1.959964 + 0.841621


def pilot(diffs: list[float], control: list[float]) -> dict[str, pd.DataFrame]:
    ids = [f"q{i:03d}" for i in range(len(diffs))]
    return {"A": pd.DataFrame({"id": ids, "score": control}),
            "B": pd.DataFrame({"id": ids, "score": np.add(control, diffs)})}


def sized(effect=0.1, kind="absolute", cap=100) -> SizedClaim:
    return SizedClaim("c", "B", "A", effect, kind, "score", cap)


def test_n_is_the_powered_n_within_floor_and_cap():
    diffs = [0.3, -0.1, 0.2, 0.0, 0.4, -0.2, 0.1, 0.0]
    sd = float(np.std(diffs, ddof=1))
    row = claim_size(sized(0.1), pilot(diffs, [0.5] * 8), floor=5)
    assert row["n_needed"] == int(np.ceil((Z * sd / 0.1) ** 2)) == n_needed(sd, 0.1) and row["n"] == row["n_needed"]
    assert claim_size(sized(0.1, cap=20), pilot(diffs, [0.5] * 8), floor=5)["n"] == 20       # capped below its n
    assert claim_size(sized(5.0), pilot(diffs, [0.5] * 8), floor=30)["n"] == 30                # a large effect: the floor
    relative = claim_size(sized(0.5, "relative"), pilot(diffs, [0.4] * 8), floor=2)
    assert relative["published_diff"] == pytest.approx(0.2) and relative["n_needed"] == n_needed(sd, 0.2)
    flat = claim_size(sized(0.1), pilot([0.0] * 8, [0.5] * 8), floor=7)  # no spread: nothing to size, the floor
    assert flat["n_needed"] is None and flat["n"] == 7
    with pytest.raises(ValueError, match="no pilot scores of variant 'C'"):
        claim_size(SizedClaim("c", "C", "A", 0.1, "absolute", "score", 9), pilot(diffs, [0.5] * 8), 5)


def test_the_sample_is_seeded_nested_and_only_of_labelled_ids():
    ids = [f"t{i:03d}" for i in range(187)]
    a = draw_ids(ids, 40, seed=0)
    assert a == draw_ids(list(reversed(ids)), 40, seed=0) and a == sorted(a) and len(set(a)) == 40
    assert set(draw_ids(ids, 20, seed=0)) < set(a)          # a smaller n keeps a subset of the larger's ids
    assert draw_ids(ids, 40, seed=1) != a and draw_ids(ids, 500, seed=0) == ids


@pytest.fixture
def sample_files(tmp_path):
    """A split of 10 questions, 6 labelled (ids-only file), and a 12-question pilot of three variants."""
    questions = tmp_path / "test.csv"
    pd.DataFrame({"id": [f"t{i}" for i in range(10)], "question": "q?", "answer_unit": "kWh"}).to_csv(questions, index=False)
    ids = tmp_path / "ids.csv"
    pd.DataFrame({"id": [f"t{i}" for i in (1, 2, 4, 5, 7, 9)]}).to_csv(ids, index=False)
    rng = np.random.default_rng(0)
    control = rng.random(12)
    files = {}
    for v, shift in (("A", 0.0), ("B", 0.05), ("C", 0.5)):
        path = tmp_path / f"{v}.per_question.csv"
        pd.DataFrame({"id": [f"q{i}" for i in range(12)], "score": np.clip(control + shift * rng.random(12), 0, 1)}).to_csv(path, index=False)
        files[v] = path
    return questions, ids, files


def test_the_verb_writes_one_sample_for_the_group_and_its_sizes(tmp_path, sample_files, capsys):
    questions, ids, files = sample_files
    claims = [dict(id="ab", treatment="B", control="A", effect=0.01, kind="absolute", metric="score", cap=4),
              dict(id="ac", treatment="C", control="A", effect=0.8, kind="relative", metric="score", cap=5)]
    params = json.dumps({"seed": 0, "floor": 2, "claims": claims})
    out, sizes = tmp_path / "sample.csv", tmp_path / "sizes.csv"
    argv = ["power-sample", "--questions", str(questions), "--labelled-ids", str(ids), "--params", params,
            "--out", str(out), "--sizes", str(sizes), *[a for v, p in files.items() for a in ("--pilot", f"{v}={p}")]]
    assert main(argv) in (0, None)
    table = pd.read_csv(sizes).set_index("claim")
    assert table.loc["ab", "n"] == 4 and table.loc["ab", "n_needed"] > 4   # +0.01 cannot be reached: capped
    assert 2 <= table.loc["ac", "n"] <= 5
    drawn = pd.read_csv(out)["id"].tolist()
    assert len(drawn) == table["n"].max() and set(drawn) <= {f"t{i}" for i in (1, 2, 4, 5, 7, 9)}
    assert drawn == draw_ids(pd.read_csv(ids)["id"].tolist(), len(drawn), 0)   # one sample: every variant's ids


def test_the_claims_config_paths_and_params():
    cfg = load_config(REPO / "config.claims.yaml")
    assert answer_questions(cfg, "llm-qf", "wattbot", "test") == answer_questions(cfg, "llm-cf", "wattbot", "test")
    assert answer_questions(cfg, "llm-qf", "wattbot", "test").endswith("power/prompt/test.csv")
    assert answer_questions(cfg, "llm-qf", "wattbot", "train") == answer_questions(cfg, "convex-extractive", "wattbot", "train")
    assert split_labels(cfg, "llm-3x-seed0", "test").endswith("power/sampled/test.gold.csv")
    assert split_labels(cfg, "convex-extractive", "test").endswith("test_solutions_public.csv")
    p = json.loads(sample_params(cfg, "sampled"))
    assert {c["id"] for c in p["claims"]} == {"kohaku-ensemble"} and p["floor"] == 30
    default = load_config(REPO / "config.yaml")   # without power_subsets, every path as it was
    assert answer_questions(default, "llm-cf", "wattbot", "test").endswith("ingest/test.csv")


@pytest.mark.parametrize("change, message", [
    ({"power_subsets": {"split": "train"}}, "not a labelled split besides the score split"),
    ({"answering": {"llm-qf": {"splits": ["train"]}}}, "'llm-qf' is not an answering variant that answers 'test'"),
    ({"power_subsets": {"groups": {"sampled": {"variants": ["llm-cf", "llm-3x-seed0"]}}}}, "'llm-cf': also in group 'prompt'"),
    ({"answering": {"ens5": {"splits": ["train", "test"]}}}, "it votes llm-cf, which answers a power-sized sample"),
])
def test_config_errors(change, message):
    with pytest.raises(ConfigError, match=message):
        load_config(REPO / "config.claims.yaml", overrides=change)


def test_a_claim_capped_below_its_n_reads_undecided_with_the_n_it_needs():
    """The claims row of a power-sized test sample: measured on the sample's n, the n it needs stated
    (simulated at the published effect: pipeline/report/claims/power.py)."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 40).astype(float)
    b = np.clip(a + (rng.random(40) < 0.05) - (rng.random(40) < 0.05), 0, 1)
    ids = [f"t{i}" for i in range(40)]
    test = {("answering", "A"): pd.DataFrame({"score": a}, index=ids), ("answering", "B"): pd.DataFrame({"score": b}, index=ids)}
    params = figures_params({"report": {"seed": 0, "bootstrap": 300, "permutations": 1000,
                                        "ablations": {"ab": {"stage": "answering", "variants": ["A", "B"]}}},
                             "suite": {}, "answering": {}, "retrieval": {}, "config_hash": "h"})
    c = Claim("c", "S", "B beats A", "src", "+1.2 pp", "ab", "B", "A", "score", ("wattbot",), "greater",
              effect=Effect(0.012, "absolute", "ref"))
    row = measure_claims(params, SplitTables({"test": test}), {}, params.ablations, [c]).iloc[0]
    assert row["n"] == 40 and row["n_needed"] > 40 and f"needs n≈{row['n_needed']}" in verdict_text(row.to_dict())


MOCK = '{"explanation": "mock", "answer": "4.3", "answer_value": "4.3", "ref_id": ["patterson2021"]}'


@pytest.mark.slow
def test_a_power_sample_runs_through_the_dag(tmp_path):
    """tests/tiny.yaml with the test labels and a sampled pair on a power-sized test sample (the mock model):
    labelled ids -> sample (floor: the pilot's differences have no spread) -> both variants answer its ids ->
    scored on its labels -> the claim's test row on the sample's n, its train row on all 41."""
    import yaml
    from dag_runner import snakemake

    def variant(**keys):
        return {"retrieval": "bm25", "backend": "llm", "model": "openai/mock", "splits": ["train", "test"],
                "context_k": 2, "params": {"temperature": 0.7, "seed": 0, "mock_response": MOCK}, **keys}

    config = tmp_path / "power.yaml"
    config.write_text(yaml.safe_dump({
        "extends": str(REPO / "tests" / "tiny.yaml"),
        "wattbot": {"solutions": {"train": "train_QA.csv", "test": "test_solutions_public.csv"}},
        "answering": {"llm-1x-seed0": variant(), "llm-3x-seed0": variant(samples=3, vote={"mode": "answer_priority"})},
        "power_subsets": {"split": "test", "floor": 5,
                          "groups": {"sampled": {"variants": ["llm-1x-seed0", "llm-3x-seed0"], "claims": {"kohaku-ensemble": 12}}}},
        "report": {"ablations": {"ensemble-size": {"variants": ["llm-1x-seed0", "llm-3x-seed0"]}}},
    }))
    work = tmp_path / "work"
    done = snakemake(work, configfile=config)
    assert done.returncode == 0, done.stderr[-3000:]
    power = work / "results/wattbot/power"
    sizes = pd.read_csv(power / "sampled/test.sizes.csv").iloc[0]
    assert (sizes["claim"], sizes["pilot_n"], sizes["n"]) == ("kohaku-ensemble", 41, 5) and pd.isna(sizes["n_needed"])
    labelled = pd.read_csv(power / "test.labelled_ids.csv")
    assert list(labelled.columns) == ["id"] and len(labelled) == 187
    ids = draw_ids(labelled["id"].tolist(), 5, 0)
    for v in ("llm-1x-seed0", "llm-3x-seed0"):
        assert sorted(pd.read_csv(work / f"results/wattbot/answers/{v}/test.csv")["id"]) == ids
    assert sorted(pd.read_csv(power / "sampled/test.gold.csv")["id"]) == ids
    claims = pd.read_csv(work / "reports/claims.csv").set_index(["claim_id", "dataset"])
    assert claims.loc[("kohaku-ensemble", "wattbot/test"), "n"] == 5
    assert claims.loc[("kohaku-ensemble", "wattbot/train"), "n"] == 41
