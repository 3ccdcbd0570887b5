"""A corpus is data in the config (`corpora:`): its spec, its place in the DAG, and a tiny generated
corpus run through Snakemake asking only for its report files."""
from pathlib import Path

import pandas as pd
import pytest
import yaml

import pipeline.workflow as wf
from dag_runner import planned_jobs, snakemake
from pipeline.workflow import llm_work
from pipeline.workflow.corpora import corpus_ablations
from pipeline import paths
from pipeline.config import ConfigError, check_paths, resolve_config, validate
from pipeline.datasets.paths import REPO
from pipeline.specs import CorpusSpec

TINY = REPO / "tests" / "tiny.yaml"


def make_corpus(root: Path, labelled: bool = True) -> dict:
    """Two real PDFs (PyMuPDF) and a Markdown file, three questions (one unanswerable), labels for two."""
    import pymupdf

    docs = root / "docs"
    docs.mkdir(parents=True)
    pages = {
        "alpha": ["Alpha cluster report", "Energy use", "The Alpha cluster used 42 MWh of electricity in 2023.",
                  "Emissions", "The Alpha cluster emitted 12 tonnes of CO2 in 2023."],
        "beta": ["Beta model study", "Training", "Training the Beta model took 300 GPU hours on A100 GPUs.",
                 "Water", "The Beta data centre consumed 5 million litres of water."],
    }
    for doc_id, lines in pages.items():
        pdf = pymupdf.open()
        page = pdf.new_page()
        y = 72
        for i, line in enumerate(lines):
            size = 16 if i == 0 else 13 if i % 2 else 10
            page.insert_text((72, y), line, fontsize=size)
            y += 2 * size
        pdf.save(docs / f"{doc_id}.pdf")
    (docs / "gamma.md").write_text("# Gamma notes\n\n## Logo\n\nThe Gamma logo is a green circle.\n")
    (root / "questions.csv").write_text(
        "id,question,answer_unit\n"
        "q1,How much electricity did the Alpha cluster use in 2023?,MWh\n"
        "q2,How many GPU hours did training the Beta model take?,GPU hours\n"
        "q3,What did the Delta project cost?,USD\n"
    )
    entry = {"pdf_dir": str(docs), "questions": str(root / "questions.csv")}
    if labelled:
        (root / "solutions.csv").write_text(
            "id,answer_value,answer_unit,ref_id\nq1,42,MWh,['alpha']\nq2,300,GPU hours,['beta']\n"
        )
        entry["solutions"] = str(root / "solutions.csv")
    return entry


def corpus_config(entry: dict, **extra) -> dict:
    return validate(resolve_config([TINY], {"corpora": {"mine": {**entry, **extra}}}))


# --- the spec ---


def test_spec_defaults_and_paths():
    spec = CorpusSpec.from_dict("mine", {"pdf_dir": "{data_root}/pdfs", "questions": "q.csv"})
    assert (spec.solutions, spec.metadata, spec.variants) == (None, None, None)
    assert spec.answering("convex-extractive") == ["convex-extractive"]
    assert spec.resolved("/data").pdf_dir == "/data/pdfs"


def test_default_grid_has_no_corpora():
    cfg = validate(resolve_config([REPO / "config.yaml"]))
    assert cfg["corpora"] == {} and wf.corpus_targets(cfg) == []


@pytest.mark.parametrize(
    "entry, key",
    [
        ({"pdfdir": "d", "questions": "q.csv"}, "corpora.mine.pdfdir"),
        ({"questions": "q.csv"}, "corpora.mine.pdf_dir"),
        ({"pdf_dir": "d", "questions": "q.csv", "variants": ["nope"]}, "corpora.mine.variants"),
    ],
)
def test_spec_errors_name_the_key(entry, key):
    with pytest.raises(ConfigError, match=f"config key '{key}'"):
        validate(resolve_config([TINY], {"corpora": {"mine": entry}}))


@pytest.mark.parametrize("name", ["wattbot", "sprout", "retrieval", "my docs", "a/b", "hotpotqa"])
def test_bad_corpus_names(name):
    with pytest.raises(ConfigError, match=f"config key 'corpora.{name}'"):
        validate(resolve_config([TINY], {"corpora": {name: {"pdf_dir": "d", "questions": "q.csv"}}}))


# --- the workflow functions ---


def test_workflow_functions(tmp_path):
    cfg = corpus_config(make_corpus(tmp_path), variants=["bm25-x", "ens"])
    wf.register_corpora(cfg)
    assert wf.check_corpora(cfg)["mine"]["questions"] == 3
    assert wf.tree_files(cfg, "mine") == [paths.tree(d, "mine") for d in ("alpha", "beta", "gamma")]
    assert wf.dataset_tree_source(cfg, "mine", "gamma").endswith("gamma.md")
    assert wf.questions_path("mine", "questions") == "results/mine/ingest/questions.csv"
    assert wf.solutions_path(cfg, "mine") == ["results/mine/ingest/solutions.csv"]
    assert wf.ensemble_inputs(cfg, "ens", "questions", "mine")[0] == "results/mine/answers/bm25-x/questions.jsonl"
    files = wf.corpus_report_inputs(cfg, "mine")
    assert set(files["scores"]) == {"bm25-x", "ens"} and files["parse_check"] == {"mine": "results/mine/parse/check.json"}
    assert '"submission_variant":"bm25-x"' in wf.corpus_report_params(cfg, "mine")  # default_variant dense-x not listed
    assert wf.corpus_targets(cfg) == ["reports/mine/leaderboard.csv", "reports/mine/submission.csv"]
    # the documents are inputs of the ingest: one added to the folder re-ingests (metadata.csv follows the folder)
    ingest = wf.corpus_ingest_inputs(cfg, "mine")
    assert [Path(p).name for p in ingest] == ["questions.csv", "solutions.csv", "alpha.pdf", "beta.pdf", "gamma.md"]
    # WattBot's own entry is unchanged
    assert wf.questions_path("wattbot", "train") == paths.ingest_split("train")


def test_unlabelled_corpus_has_no_scores(tmp_path):
    cfg = corpus_config(make_corpus(tmp_path, labelled=False))
    wf.register_corpora(cfg)
    assert wf.solutions_path(cfg, "mine") == [] and wf.corpus_report_inputs(cfg, "mine")["scores"] == {}


def test_missing_wattbot_is_skipped_only_with_corpora(tmp_path):
    entry = make_corpus(tmp_path)
    with pytest.raises(ConfigError, match="wattbot.dir"):
        check_paths(validate(resolve_config([TINY], {"data_root": str(tmp_path / "none")})))
    cfg = validate(resolve_config([TINY], {"data_root": str(tmp_path / "none"), "corpora": {"mine": entry}}))
    notices = check_paths(cfg)
    assert notices and "wattbot.dir" in notices[0] and "skipped" in notices[0]
    assert wf.wattbot_targets(cfg) == [] and wf.suite_targets(cfg) == [] and wf.parse_targets(cfg) == []


def test_trained_sprout_heads_need_the_training_data(tmp_path):
    entry = make_corpus(tmp_path)
    cfg = validate(resolve_config([REPO / "config.yaml"], {
        "data_root": str(tmp_path / "none"), "corpora": {"mine": {**entry, "variants": ["sprout-extractive"]}}}))
    with pytest.raises(ValueError, match="corpora.mine.variants.*trained heads"):
        wf.check_corpora(cfg)


# --- the DAG ---


@pytest.mark.slow
def test_a_corpus_runs_alone(tmp_path):
    """Asking only for a corpus's reports builds its jobs (and the models they need), nothing of
    WattBot, the retrieval suite or SproutRAG; the submission lists every question in order."""
    entry = make_corpus(tmp_path / "corpus")
    cfgfile = tmp_path / "my.yaml"
    cfgfile.write_text(yaml.safe_dump({"extends": str(TINY), "corpora": {"mine": {
        **entry, "variants": ["dense-x", "bm25-x", "ens"]}}}))
    work = tmp_path / "work"
    targets = ["reports/mine/leaderboard.csv", "reports/mine/submission.csv"]
    dry = snakemake(work, "-n", *targets, configfile=cfgfile)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_jobs(dry.stdout)
    assert not {"ingest", "suite_export", "suite_evaluate", "report", "figures", "sprout_train"} & set(jobs)
    assert jobs["tree"] == 3 and jobs["corpus_ingest_labelled"] == 1 and jobs["corpus_report"] == 1
    done = snakemake(work, *targets, configfile=cfgfile)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (work / "results/wattbot").exists() and not (work / "results/hotpotqa").exists()
    board = pd.read_csv(work / "reports/mine/leaderboard.csv")
    assert set(board["variant"]) == {"dense-x", "bm25-x", "ens"}
    assert {"score", "score_lo", "score_hi", "doc_recall@1", "answered", "blank"} <= set(board.columns)
    assert (board["n"] == 2).all() and (board["asked"] == 3).all() and board["score"].between(0, 1).all()
    sub = pd.read_csv(work / "reports/mine/submission.csv")
    assert list(sub["id"]) == ["q1", "q2", "q3"]
    assert "answer_value" in sub.columns
    errors = pd.read_csv(work / "results/mine/parse/errors.csv")
    assert errors.empty
    assert (work / "benchmarks/mine/answer/dense-x/questions.tsv").exists()
    import json

    from pipeline.report.telemetry.time_table import rule_of

    assert rule_of("benchmarks/mine/answer/dense-x/questions.tsv") == "corpus_answer"
    assert rule_of("benchmarks/wattbot/answer/dense-x/train.tsv") == "answer"
    summary = json.loads((work / "reports/summary.json").read_text())  # printed last too
    assert summary["corpora"][0]["corpus"] == "mine" and summary["corpora"][0]["submission"]["rows"] == 3


# --- the report ---


def test_unlabelled_report_counts_answers(tmp_path):
    """Without labels the leaderboard lists each variant's answered and blank counts, no score; the
    submission is the submission variant's CSV as it is."""
    import json

    from pipeline.report.pages.corpus import CorpusReportInputs, build_corpus_report
    from pipeline.workflow.report_settings import corpus_report_params

    recs = [{"id": "q1", "is_blank": False}, {"id": "q2", "is_blank": True}, {"id": "q3", "is_blank": False}]
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in recs))
    sub = tmp_path / "a.csv"
    sub.write_text("id,answer_value\nq1,1\nq2,is_blank\nq3,3\n")
    variant = {"answering": {"backend": "extractive", "retrieval": "bm25"}, "upstream": {"indexes": {"bm25": {}}}}
    params = {"corpus": "mine", "labelled": False, "submission_variant": "x", "variants": {"x": variant}}
    build_corpus_report(corpus_report_params(params), CorpusReportInputs({"x": str(answers)}, {"x": str(sub)}, {}, {}), str(tmp_path / "r"))
    board = pd.read_csv(tmp_path / "r/mine/leaderboard.csv")
    assert board.to_dict("records") == [{"variant": "x", "backend": "extractive", "retrieval": "bm25",
                                         "indexes": "bm25", "asked": 3, "answered": 2, "blank": 1, "failures": 0}]
    assert (tmp_path / "r/mine/submission.csv").read_bytes() == sub.read_bytes()
    page = (tmp_path / "r/mine/index.html").read_text()  # its own page: what answered, no score
    assert 'id="headline"' in page and "has no labels" in page and "<b>x</b> (2 of 3)" in page and 'id="leaderboard"' in page


def test_a_smoke_runs_corpus_page_says_so_and_a_full_runs_reads_as_before(tmp_path):
    """Under ``limit: N`` (#35) the corpus page leads with the smoke-run note index.html shows; a full run's
    params (hence its hash) and page are as before."""
    import json

    from pipeline.report.pages.corpus import CorpusReportInputs, build_corpus_report
    from pipeline.workflow.report_settings import corpus_report_params

    entry = make_corpus(tmp_path / "c", labelled=False)
    full, smoke = corpus_config(entry), validate(resolve_config([TINY], {"corpora": {"mine": entry}, "limit": 2}))
    assert "limit" not in json.loads(wf.corpus_report_params(full, "mine"))
    params = json.loads(wf.corpus_report_params(smoke, "mine"))
    assert params["limit"] == 2 and corpus_report_params(params).limit == 2
    answers, sub = tmp_path / "a.jsonl", tmp_path / "a.csv"
    answers.write_text(json.dumps({"id": "q1", "is_blank": False}) + "\n")
    sub.write_text("id,answer_value\nq1,1\n")
    variant = {"answering": {"backend": "extractive", "retrieval": "bm25"}, "upstream": {"indexes": {"bm25": {}}}}
    pages = {}
    for limit in (None, 2):
        raw = {"corpus": "mine", "labelled": False, "submission_variant": "x", "variants": {"x": variant}}
        inputs = CorpusReportInputs({"x": str(answers)}, {"x": str(sub)}, {}, {})
        build_corpus_report(corpus_report_params(raw | ({"limit": limit} if limit else {})), inputs, str(tmp_path / f"r{limit}"))
        pages[limit] = (tmp_path / f"r{limit}/mine/index.html").read_text()
    assert '<p class="smoke"><strong>smoke run: first 2 questions per split</strong></p>' in pages[2]
    assert "smoke run" not in pages[None]


def test_a_labelled_corpus_draws_the_ablations_it_ran(tmp_path):
    """The answering ablations whose reference the corpus runs go to its page (restricted to its variants);
    none for an unlabelled corpus or one that skips the reference, and the params are then as before."""
    ablations = {"a": {"variants": ["dense-x", "bm25-x", "mock-llm"], "note": "n"}, "b": {"variants": ["mock-llm", "bm25-x"]},
                 "r": {"stage": "retrieval", "variants": ["bm25", "hier-dense"]}}
    cfg = validate(resolve_config([TINY], {"report": {"ablations": ablations},
                                           "corpora": {"mine": {**make_corpus(tmp_path), "variants": ["dense-x", "bm25-x"]}}}))
    assert corpus_ablations(cfg, "mine") == {"a": {"variants": ["dense-x", "bm25-x"], "note": "n"}}
    cfg = corpus_config(make_corpus(tmp_path / "u", labelled=False), variants=["dense-x", "bm25-x"])
    assert corpus_ablations(cfg, "mine") == {} and '"ablations"' not in wf.corpus_report_params(cfg, "mine")


def test_index_html_has_a_section_per_corpus(tmp_path):
    from pipeline.report.stats.ablation import InputFiles
    from pipeline.report.pages.figures import corpus_sections
    from pipeline.report.params import FiguresParams
    from pipeline.workflow.report_settings import figures_params

    board = tmp_path / "lb.csv"
    board.write_text("variant,backend,retrieval,score,score_lo,score_hi,asked,answered,blank\nx,extractive,bm25,0.5,0.1,0.9,3,2,1\n")
    def params(**more) -> FiguresParams:
        return figures_params({"report": {}, "answering": {}, "retrieval": {}, "config_hash": "h", **more})

    sections = corpus_sections(params(corpora=["mine"]), InputFiles(corpora_of={"mine": str(board)}))
    assert [s.title for s in sections] == ["Corpus: mine"] and "0.5" in sections[0].table
    assert corpus_sections(params(), InputFiles()) == []  # no corpora: the page as it was


def test_figures_read_corpora_only_when_configured(tmp_path):
    cfg = validate(resolve_config([TINY]))
    assert "corpora" not in wf.figures_inputs(cfg) and '"corpora"' not in wf.figures_params(cfg)
    cfg = corpus_config(make_corpus(tmp_path))
    assert wf.figures_inputs(cfg)["corpora"] == {"mine": "reports/mine/leaderboard.csv"}


@pytest.mark.slow
def test_without_wattbot_data_rule_all_is_the_corpora(tmp_path):
    """A user without ../shared: `snakemake` (rule all) plans the corpus alone, after a one-line notice."""
    entry = make_corpus(tmp_path / "corpus", labelled=False)
    cfgfile = tmp_path / "my.yaml"
    cfgfile.write_text(yaml.safe_dump({"extends": str(TINY), "corpora": {"mine": entry}}))
    dry = snakemake(tmp_path / "work", "-n", "--config", f"data_root={tmp_path / 'none'}", configfile=cfgfile)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "config key 'wattbot.dir'" in dry.stderr and "skipped" in dry.stderr
    jobs = planned_jobs(dry.stdout)
    assert jobs["corpus_ingest"] == 1 and jobs["corpus_report"] == 1 and "evaluate" not in jobs
    assert not {"ingest", "report", "figures", "suite_export", "sprout_train"} & set(jobs)


def test_estimate_counts_a_corpus_llm_variant(tmp_path):
    """An LLM variant a corpus runs (here an ensemble's member) is priced on the corpus's questions,
    WattBot's data there or not."""
    from pipeline.estimate import estimate

    entry = make_corpus(tmp_path)
    cfg = validate(resolve_config([TINY], {"data_root": str(tmp_path / "none"),
                                           "corpora": {"mine": {**entry, "variants": ["ens"]}}}))
    lines = estimate(llm_work(cfg)).lines
    assert [(x.what, x.split, x.questions) for x in lines] == [("answer mock-llm", "mine/questions", 3)]
