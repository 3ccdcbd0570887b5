"""Metrics as declared objects (pipeline/registry/metrics.py): measures picked by a string, the views that read
their columns there, the config's ``report.metrics``, and toy measures added by registration alone
(tests/score/toy_metric.py, a suite measure; tests/score/toy_profile.py, a third WattBot profile) that appear
in the suite table, the report, the leaderboard, MLflow and the score verb with no other edit."""
from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline import paths
from pipeline import workflow as wf
from pipeline.config import ConfigError, validate
from pipeline.datasets.paths import REPO
from pipeline.registry import metrics
from pipeline.registry.metrics import GROUP, Pick

HERE = Path(__file__).parent
DATASETS = HERE.parent / "datasets"
sys.path.insert(0, str(DATASETS))
import test_toy_dataset as toy_branch  # noqa: E402 - tests/datasets' toy benchmark and the verbs of its branch
from test_toy_dataset import toy_dataset  # noqa: E402,F401 - the fixture: the toy registered, its data in tmp_path


# Each toy as a plugin distribution of its own, found by its entry point as an installed one is
# (tests/plugin_dist.py): name, modules, entry points.
PLUGINS = {
    "toy_metric": ("wattbench-toy-metric", [HERE / "toy_metric.py"], {GROUP: {"gold_units": "toy_metric"}}),
    "toy_profile": ("wattbench-toy-profile", [HERE / "toy_profile.py"], {GROUP: {"wattbot2027": "toy_profile"}}),
}


def toy(monkeypatch, plugin_site, *modules: str):
    """The toy measures' distributions on sys.path: a lookup imports the modules their entry points name, as
    Snakemake's jobs would."""
    for module in modules:
        monkeypatch.syspath_prepend(str(plugin_site(*PLUGINS[module])))
    metrics.METRICS.names()  # imports them


@pytest.fixture
def toy_measure(monkeypatch, plugin_site):
    toy(monkeypatch, plugin_site, "toy_metric")
    yield metrics.find("gold_units")
    metrics.unregister("gold_units")  # other tests see the built-in measures only
    sys.modules.pop("toy_metric", None)


@pytest.fixture
def toy_profile(monkeypatch, plugin_site):
    toy(monkeypatch, plugin_site, "toy_profile")
    yield metrics.find("wattbot2027")
    metrics.unregister("wattbot2027")
    sys.modules.pop("toy_profile", None)


# --- the registry: measures by string, views by declaration ---


def test_measures_are_picked_by_a_string():
    assert metrics.parse("nDCG@10")[0].name == "ndcg" and metrics.parse("IE@3") == (metrics.find("ie"), 3)
    assert metrics.parse("doc_recall@5")[1] == 5 and metrics.parse("mrr") == (metrics.find("mrr"), None)
    assert metrics.find("score") is metrics.find("wattbot2025") is metrics.primary()  # by name or by column
    assert [p.name for p in metrics.profiles()] == ["wattbot2025", "wattbot2026"]
    assert metrics.find("tokens").better == metrics.LOWER and metrics.find("quote_in_context").defined_on == "quoted"
    with pytest.raises(KeyError, match="unknown metric 'nope'; known: .*wattbot2026"):
        metrics.parse("nope@3")
    for bad, why in (("mrr@3", "takes no cutoff"), ("doc_hit@7", r"k in \[1, 3, 5, 10\]"), ("ie@x", "k >= 1"),
                     ("ndcg@5", r"k in \[10\]")):
        with pytest.raises(ValueError, match=why):
            metrics.parse(bad)


def test_views_take_their_columns_from_the_declarations():
    """The default views are today's tables, column for column (outputs byte-identical): index.md's leaderboard,
    the docs' suite block (IE first, then its parts at the largest k), the ablations per stage, the headlines."""
    assert metrics.columns(metrics.LEADERBOARD, intervals=True) == [
        "score", "score_lo", "score_hi", "value", "ref", "na", "score_2026", "doc_hit@1", "doc_recall@5",
        "abstained", "failures"]
    assert metrics.columns(metrics.DOCS_SUITE, ks=(1, 3, 5)) == [
        "ie@1", "ie@3", "ie@5", "recall@5", "precision@5", "ndcg@10", "mrr"]
    assert metrics.columns(metrics.ABLATIONS_ANSWERING, [metrics.ANSWERS, metrics.DOCUMENTS]) == [
        "score", "value", "ref", "na", "doc_hit@1", "doc_recall@5"]
    assert metrics.columns(metrics.ABLATIONS_RETRIEVAL, ks=(1, 3)) == [
        "doc_hit@1", "doc_recall@5", "doc_precision@5", "quote_in_context", "ie@1", "ie@3"]
    assert metrics.columns(metrics.HEADLINE, ks=(1, 3)) == ["score", "doc_hit@1", "ie@3"]
    assert metrics.primary_columns() == ["score", "value", "ref", "na"]
    for view in metrics.VIEWS:  # every view is read somewhere, and every measure is shown somewhere
        assert metrics.measures(view), view
    assert all(set(m.shown) <= set(metrics.VIEWS) for m in metrics.in_order())


def test_a_pick_narrows_every_view():
    pick = Pick.of(["doc_hit@3", "ie", "nDCG@10", "wattbot2026"])
    assert metrics.columns(metrics.LEADERBOARD, pick=pick) == ["score", "score_2026", "doc_hit@3"]  # score ranks
    assert metrics.columns(metrics.LEADERBOARD_PAGE, pick=pick) == ["score", "score_2026", "doc_hit@3"]
    assert metrics.columns(metrics.DOCS_SUITE, ks=(1, 3), pick=pick) == ["ie@1", "ie@3", "ndcg@10"]
    assert pick.keeps("doc_hit@3") and not pick.keeps("doc_hit@1") and not pick.keeps("value")
    assert pick.keeps("score_lo") and pick.keeps("llm_calls") and pick.keeps("questions")  # counts stay
    assert not pick.keeps("score_2026", metrics.CORPUS_PAGE) and Pick().keeps("doc_recall@10")


def test_a_claim_names_a_measure_with_a_value_per_question(tmp_path):
    from pipeline.report.claims.claim import load_claims

    raw = {"id": "x", "system": "S", "claim": "c", "source": "s", "published": "p", "ablation": "a",
           "treatment": "t", "control": "c", "datasets": ["wattbot"], "direction": "greater"}
    path = tmp_path / "claims.yaml"
    for metric, why in (("nope@5", "metric: unknown metric 'nope'"), ("wattbot2026", "no value per question"),
                        ("doc_hit@7", r"computed at k in \[1, 3, 5, 10\]")):
        path.write_text(yaml.safe_dump({"claims": [raw | {"metric": metric}]}))
        with pytest.raises(ValueError, match=rf"^claims.yaml: claim x: .*{why}"):
            load_claims(path)
    path.write_text(yaml.safe_dump({"claims": [raw | {"metric": "doc_precision@5"}]}))
    assert load_claims(path)[0].metric == "doc_precision@5"
    assert all(metrics.CLAIMS in metrics.parse(c.metric)[0].shown for c in load_claims())  # the shipped claims


def tiny(**report) -> dict:
    raw = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    raw["report"] = report
    return raw


def test_the_config_picks_metrics_by_string():
    cfg = validate(tiny(metrics=["wattbot2026", "doc_hit@3", "ie@3", "nDCG@10", "mrr"]))
    assert json.loads(wf.report_params(cfg))["metrics"] == ["wattbot2026", "doc_hit@3", "ie@3", "nDCG@10", "mrr"]
    assert json.loads(wf.suite_report_params(cfg))["metrics"][2] == "ie@3"
    assert "metrics" not in json.loads(wf.report_params(validate(tiny())))  # none picked: the params as before
    for bad, why in ((["nope@3"], "unknown metric 'nope'"), (["mrr@3"], "takes no cutoff"),
                     (["ie@5"], r"computed at benchmarks.ks \[1, 3\]"), ([], "non-empty|too short")):
        with pytest.raises(ConfigError, match=rf"^config key 'report\.metrics'.*({why})") as e:
            validate(tiny(metrics=bad))
        assert "\n" not in str(e.value)


# --- a toy suite measure: one registration, and it is computed, tabled, reported and logged ---


def test_a_toy_suite_measure_appears_in_the_suite_table_the_report_and_mlflow(toy_measure, toy_dataset, tmp_path):
    from pipeline.cli import main
    from pipeline import tracking
    from pipeline.workflow.report_settings import track_settings

    raw = toy_branch.tiny_with_toy(tmp_path / "retrieval")
    cfg = validate(raw)
    run = tmp_path / "run"  # the scores laid out as a run's, where tracking reads them
    scores, per_query_csv = run / paths.suite_scores("toy", "bm25"), run / paths.suite_per_query("toy", "bm25")
    per_query_csv.parent.mkdir(parents=True)
    toy_branch.run_branch(cfg, tmp_path, scores, per_query_csv)
    per_query = pd.read_csv(per_query_csv)
    # computed per query at every k, after the built-in span measures: BM25 ranks each gold sentence first, and
    # its paragraph (which holds it) among the top 3
    assert list(per_query.columns)[-3:] == ["gold_units@3", "ndcg@10", "mrr"]
    assert list(per_query["gold_units@1"]) == [1.0] * 3 and list(per_query["gold_units@3"]) == [2.0] * 3

    reports = run / "reports"
    main(["suite-report", "--params", wf.suite_report_params(cfg), "--scores", f"toy:bm25={scores}",
          "--reports", str(reports)])
    table = pd.read_csv(reports / "retrieval" / "metrics.csv")
    assert list(table.columns)[-2:] == ["gold_units", "queries"] and list(table["gold_units"]) == [1.0, 2.0]
    page = (reports / "retrieval" / "index.md").read_text()
    assert "| variant | k | recall | precision | IE | char P | char R | tokens | nDCG@10 | MRR | gold units |" in page
    assert "| 1.0 | 1.0 | 2.0 |" in page  # k=3's row ends with nDCG@10, MRR and the toy

    settings = track_settings(cfg)
    logged = tracking.suite_retrieval(tracking.RunFiles(run, reports, settings, []), "bm25")
    assert logged["toy.gold_units_at_3"] == 2.0 and logged["toy.gold_units_at_1_hi"] == 1.0
    picked = track_settings(validate(raw | {"report": {"metrics": ["ie@3"]}}))
    narrowed = tracking.suite_retrieval(tracking.RunFiles(run, reports, picked, []), "bm25")
    assert "toy.ie_at_3" in narrowed and not any("gold_units" in k or "recall" in k for k in narrowed)
    if _has_mlflow():  # the run MLflow keeps, read back with its own client (make test installs the extra)
        from mlflow.tracking import MlflowClient

        store = tracking.Tracking(f"sqlite:///{tmp_path / 'm.db'}", "toy", str(tmp_path / "artifacts"))
        [mid] = tracking.log_runs(store, [tracking.VariantRun("retrieval", "bm25", {}, logged)], "r1", [], {})
        got = MlflowClient(tracking_uri=store.uri).get_run(mid).data.metrics
        assert got["toy.gold_units_at_3"] == 2.0


def _has_mlflow() -> bool:
    import importlib.util

    return importlib.util.find_spec("mlflow") is not None


# --- a toy third WattBot profile: one registration, and it is scored, boarded and offered ---


@pytest.mark.data
def test_a_third_profile_is_scored_shown_and_offered_by_registration_alone(toy_profile, tmp_path, wattbot_dir, capsys):
    from test_score_cli_and_report import fake_variant

    from pipeline.cli import main
    from pipeline import tracking
    from pipeline.report.pages.leaderboard import ReportInputs, build_reports
    from pipeline.report.render.views import board_view
    from pipeline.workflow.report_settings import report_params

    perfect, blank = (fake_variant(tmp_path, wattbot_dir, n, b) for n, b in (("perfect", False), ("blank", True)))
    result = json.loads(perfect[0].read_text())
    assert result["wattbot2027"]["all"]["score"] == 1.0 and result["wattbot2027"]["weights"]["value"] == 0.6
    variants = {n: {"answering": {"backend": "extractive", "retrieval": "r"}, "upstream": {"indexes": {"hier": {}}}}
                for n in ("perfect", "blank")}
    params = {"config_hash": "abc", "default_variant": "perfect", "score_split": "train", "variants": variants}
    named = {"perfect": perfect, "blank": blank}
    build_reports(report_params(params), ReportInputs(
        {n: str(v[0]) for n, v in named.items()},
        {n: str(v[0].with_name(f"{n}.per_question.csv")) for n, v in named.items()},
        {n: str(v[1]) for n, v in named.items()}), str(tmp_path / "reports"))
    board = pd.read_csv(tmp_path / "reports" / "wattbot" / "leaderboard.csv")
    assert list(board.columns)[9:12] == ["score_hi", "score_2026", "score_2027"]
    parts = json.loads(blank[0].read_text())["wattbot2026"]["all"]  # the toy weighs 2026's components otherwise
    toy_score = math.fsum(w * parts[c] for c, w in (("value", 0.6), ("ref", 0.3), ("na", 0.1)))
    blank_row = board.set_index("variant").loc["blank"]
    assert blank_row["score_2027"] == round(toy_score, 4) != blank_row["score_2026"]
    index_md = (tmp_path / "reports" / "index.md").read_text()
    assert "`score_2026` = profile `wattbot2026`; `score_2027` = profile `wattbot2027`" in index_md
    assert "| score_2026 | score_2027 | doc_hit@1 |" in index_md
    assert "score 2027" in board_view(board).columns
    assert tracking.numbers(tracking.logged(board.iloc[0].to_dict(), Pick()))["score_2027"] == 1.0

    solution = str(wattbot_dir / "train_QA.csv")
    assert main(["score", "--solution", solution, "--submission", solution, "--profile", "wattbot2027"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["profile"] == "wattbot2027"


# --- slow: the toy measure in Snakemake's jobs ---


@pytest.mark.slow
def test_a_toy_suite_measure_runs_in_the_dag(tmp_path, plugin_site):
    """Snakemake's suite_evaluate and suite_report jobs find the toy measure by its distribution's entry point
    (as they find the toy dataset by its own): it is in the suite's table and page."""
    import os

    from dag_runner import snakemake

    cfg = copy.deepcopy(toy_branch.tiny_with_toy(toy_branch.write_toy_data(tmp_path / "retrieval")))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))
    sites = [plugin_site(*PLUGINS["toy_metric"]), plugin_site(*toy_branch.PLUGIN)]
    env = {"PYTHONPATH": os.pathsep.join([*map(str, sites), os.environ.get("PYTHONPATH", "")])}
    work = tmp_path / "work"
    done = snakemake(work, paths.reports.suite_metrics, configfile=config, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    table = pd.read_csv(work / paths.reports.suite_metrics)
    assert list(table["gold_units"]) == [1.0, 2.0]
    assert "| gold units |" in (work / paths.reports.suite_index_md).read_text()
