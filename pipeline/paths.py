"""Where every file of a run lives: results/, reports/, benchmarks/, logs/ and the data/ files rules read.

One module, shared by the Snakemake rules (pipeline/rules/*.smk, through pipeline/workflow/) and by the
report verbs, so a path pattern is written once. A function's defaults are Snakemake wildcards, so
``answers()`` is the rule's output pattern ``results/wattbot/answers/{av}/{split}.jsonl`` and
``answers("bm25-x", "train")`` the file one job writes. Standard library only: the DAG is planned
from here without loading any stage code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RESULTS = "results"
REPORTS = "reports"
BENCHMARKS = "benchmarks"  # Snakemake's per-job wall time and memory (run telemetry, outside the byte-identical set)
LOGS = "logs"
WATTBOT = "wattbot"  # the dataset name of WattBot 2025 among the retrieval suite's
WATTBOT_RESULTS = f"{RESULTS}/{WATTBOT}"
RUNS = "runs"  # the kept runs' folder, beside results/ and reports/ (git-ignored; kept_runs/store.py)
SPROUT_DIR = f"{RESULTS}/sprout"  # SproutRAG head training: shared by every dataset

# --- side files: what a job writes beside one of its declared outputs, named from it, and no other job writes:
# the output's provenance manifest (pipeline/provenance.py) and an LLM answer job's run telemetry (only where it
# made LLM calls). Snakemake is not told of them: an output it has no metadata for (one declared after a run
# wrote it) turns off every rerun trigger of its job in that run, so a finished run would no longer see a
# changed config. A job's files are therefore its declared outputs, what lies under a declared directory, and
# these, rewritten only with their output: tests/test_side_files.py holds a real run's results/ to that, and the
# cluster test's resume (tests/cluster/) lets a rerun job rewrite exactly those. ---
MANIFEST_SUFFIX = ".manifest.json"
TELEMETRY_SUFFIX = ".telemetry.jsonl"
SIDE_SUFFIXES = (MANIFEST_SUFFIX, TELEMETRY_SUFFIX)


def side_files(output: str) -> tuple[str, ...]:
    """The files a job may write beside its declared output ``output`` (see SIDE_SUFFIXES)."""
    return tuple(f"{output}{suffix}" for suffix in SIDE_SUFFIXES)


LLM_RUNTIME = "data/models/llama-cpp-python.json"  # the local LLM's runtime, built by the llm_runtime rule
QUALITY_PDFS_MANIFEST = "data/parse-corpus.csv"  # the parse-quality PDFs (pipeline/parse/quality_pdfs.py)
CLAIMS_FILE = Path(__file__).parent / "report" / "claims" / "claims.yaml"  # published claims the report measures
REGISTRATION_FILE = CLAIMS_FILE.with_name("registration.yaml")  # the claims as registered (commit, hashes; #44 item 8)
DEVIATIONS_FILE = CLAIMS_FILE.with_name("deviations.yaml")  # what changed since the registration, why, when


# --- a smoke run (`limit: N`, pipeline/config): the first N questions of every split. What the questions shape
# (the cut question and gold files, retrieval runs, answers, scores) lives under results/<dataset>/first-N/ and
# its reports under reports-first-N/, so a later full run never takes a smoke run's files for its own, and a
# smoke run never overwrites a full run's; what they do not shape (trees, indexes, exports) is shared. The
# Snakefile sets it once from the config (:func:`use_limit`), before the rules read any path; unset, every
# path is what it was. ---

_limit: int | None = None


def use_limit(n: int | None) -> None:
    """Lay the question-shaped files out for a run of the first ``n`` questions per split (None: a full run)."""
    global _limit, reports
    _limit = n
    reports = Reports(f"{REPORTS}-first-{n}" if n else REPORTS)


def limit() -> int | None:
    """The run's ``limit`` (None: every question)."""
    return _limit


def questions_root(dataset: str = "{dataset}") -> str:
    """The folder of the files the questions shape: results/<dataset>, or results/<dataset>/first-N."""
    return f"{RESULTS}/{dataset}" + (f"/first-{_limit}" if _limit else "")


def first_questions(dataset: str = "{dataset}", split: str = "{split}") -> str:
    """A smoke run's questions of one split: the first N rows of the split's file, in file order."""
    return f"{questions_root(dataset)}/questions/{split}.csv"


def first_gold(dataset: str = "{dataset}", split: str = "{split}", ext: str = "{ext}") -> str:
    """A smoke run's labels of one split (``csv``: WattBot's and a corpus's solutions; ``jsonl``: a suite
    export's gold): those of its first N questions, so a scorer counts no unasked question as missed."""
    return f"{questions_root(dataset)}/questions/{split}.gold.{ext}"


def labelled_ids(split: str = "{split}") -> str:
    """A WattBot split's labelled ids alone (``power_subsets``: what a power-sized sample is drawn from)."""
    return f"{questions_root(WATTBOT)}/power/{split}.labelled_ids.csv"


def power_questions(group: str = "{group}", split: str = "{split}") -> str:
    """A ``power_subsets`` group's sample of a split: the questions its variants answer."""
    return f"{questions_root(WATTBOT)}/power/{group}/{split}.csv"


def power_sizes(group: str = "{group}", split: str = "{split}") -> str:
    """Its sizing table: per claim, the pilot's spread, the n needed and the n used."""
    return f"{questions_root(WATTBOT)}/power/{group}/{split}.sizes.csv"


def power_gold(group: str = "{group}", split: str = "{split}") -> str:
    """The labels of its sample (its variants' scoring jobs read them)."""
    return f"{questions_root(WATTBOT)}/power/{group}/{split}.gold.csv"


# --- results/<dataset>/: indexes, retrieval runs, suite exports and scores, SproutRAG attention ---


def index_dir(dataset: str = "{dataset}") -> str:
    return f"{RESULTS}/{dataset}/index"


def index(dataset: str = "{dataset}", name: str = "{index}") -> str:
    return f"{index_dir(dataset)}/{name}.sqlite"


def retrieval(dataset: str = "{dataset}", rv: str = "{rv}", split: str = "{split}") -> str:
    return f"{questions_root(dataset)}/retrieval/{rv}/{split}.jsonl"


def export_dir(dataset: str = "{dataset}") -> str:
    return f"{RESULTS}/{dataset}/export"


def export_trees(dataset: str = "{dataset}") -> str:
    return f"{export_dir(dataset)}/trees"


def export_split(dataset: str = "{dataset}", split: str = "queries") -> str:
    """A suite export's questions (its only split is ``queries``)."""
    return f"{export_dir(dataset)}/{split}.csv"


def export_gold(dataset: str = "{dataset}") -> str:
    return f"{export_dir(dataset)}/gold.jsonl"


def suite_scores(dataset: str = "{dataset}", rv: str = "{rv}") -> str:
    return f"{questions_root(dataset)}/scores/{rv}.json"


def suite_per_query(dataset: str = "{dataset}", rv: str = "{rv}") -> str:
    return f"{questions_root(dataset)}/scores/{rv}.per_query.csv"


# --- shards (pipeline/shards.py): a dataset's documents cut into jobs, their parts merged in document order ---


def doc_sizes(dataset: str = "{dataset}") -> str:
    """Each document's id and characters, in document order: what the DAG cuts the dataset's shards from."""
    return f"{RESULTS}/{dataset}/shards/sizes.csv"


def index_part(dataset: str = "{dataset}", name: str = "{index}", shard: str = "{shard}") -> str:
    """One shard's nodes and vectors of a dense index, merged into :func:`index` in document order."""
    return f"{index_dir(dataset)}/parts/{name}/{shard}.sqlite"


def retrieval_batch(
    dataset: str = "{dataset}", rv: str = "{rv}", split: str = "{split}", batch: str = "{batch}"
) -> str:
    """One batch of a split's queries retrieved (their rows), joined into :func:`retrieval` in query order."""
    return f"{questions_root(dataset)}/retrieval/parts/{rv}/{split}/{batch}.jsonl"


def sprout_windows(dataset: str = "{dataset}") -> str:
    """Every SproutRAG window's pass and padded shape: what each shard's attention job pads its windows to."""
    return f"{RESULTS}/{dataset}/sprout/windows.json"


def sprout_attention_part(dataset: str = "{dataset}", shard: str = "{shard}") -> str:
    """One shard's documents of the attention file, joined into :func:`sprout_attention` in document order."""
    return f"{RESULTS}/{dataset}/sprout/parts/{shard}.safetensors"


def sprout_attention(dataset: str = "{dataset}") -> str:
    return f"{RESULTS}/{dataset}/sprout/attention.safetensors"


SPROUT_TRAIN_PAIRS = f"{SPROUT_DIR}/train_pairs.safetensors"
SPROUT_TRAIN_DATA = f"{SPROUT_DIR}/train_data"
SPROUT_HEAD_WEIGHTS = f"{SPROUT_DIR}/head_weights.json"


# SproutRAG cross-fitting (sprout.train.folds, #45): one fold's heads, and a trained sprout index built with them
def sprout_fold_heads(dataset: str = "{dataset}", fold: str = "{fold}") -> str:
    return f"{SPROUT_DIR}/crossfit/{dataset}/fold{fold}.json"


def fold_index(dataset: str = "{dataset}", fold: str = "{fold}", name: str = "{index}") -> str:
    return f"{index_dir(dataset)}/crossfit/fold{fold}/{name}.sqlite"


# --- results/<dataset>/ of an answered dataset (WattBot, or a `corpora:` entry): trees, answers, scores,
# parse failures. The defaults are WattBot's; the rules pass ``dataset="{dataset}"`` (one rule serves both). ---

INGEST_METADATA = f"{WATTBOT_RESULTS}/ingest/metadata.csv"


def ingest_split(split: str = "{split}") -> str:
    return f"{WATTBOT_RESULTS}/ingest/{split}.csv"


CORPUS_SPLIT = "questions"  # a corpus's one split: its questions file


def corpus_ingest_dir(dataset: str = "{dataset}") -> str:
    return f"{RESULTS}/{dataset}/ingest"


def corpus_ingest(dataset: str = "{dataset}", name: str = "questions") -> str:
    """A corpus's ingested ``metadata``, ``questions`` or ``solutions`` CSV (WattBot's columns)."""
    return f"{corpus_ingest_dir(dataset)}/{name}.csv"


def tree(doc: str = "{doc}", dataset: str = WATTBOT) -> str:
    return f"{RESULTS}/{dataset}/trees/{doc}.json"


def answers(av: str = "{av}", split: str = "{split}", dataset: str = WATTBOT) -> str:
    """An answering variant's records of one split (its Kaggle CSV: :func:`answers_csv`)."""
    return f"{questions_root(dataset)}/answers/{av}/{split}.jsonl"


def answers_csv(av: str = "{av}", split: str = "{split}", dataset: str = WATTBOT) -> str:
    return f"{questions_root(dataset)}/answers/{av}/{split}.csv"


def answers_telemetry(answers_path: str) -> str:
    """Run telemetry of an answer job (latency, cache hits), beside its records when it made LLM calls."""
    return f"{answers_path}{TELEMETRY_SUFFIX}"


def scores(av: str = "{av}", dataset: str = WATTBOT) -> str:
    return f"{questions_root(dataset)}/scores/{av}.json"


def per_question(av: str = "{av}", dataset: str = WATTBOT) -> str:
    return f"{questions_root(dataset)}/scores/{av}.per_question.csv"


def split_scores(split: str = "{split}", av: str = "{av}") -> str:
    """A WattBot variant's scores on a labelled split other than the score split (``wattbot.solutions``)."""
    return f"{WATTBOT_RESULTS}/scores/{split}/{av}.json"


def split_per_question(split: str = "{split}", av: str = "{av}") -> str:
    return f"{WATTBOT_RESULTS}/scores/{split}/{av}.per_question.csv"


def parse_errors(dataset: str = WATTBOT) -> str:
    return f"{RESULTS}/{dataset}/parse/errors.csv"


def parse_check(dataset: str = WATTBOT) -> str:
    return f"{RESULTS}/{dataset}/parse/check.json"


PARSE_ERRORS = parse_errors()
PARSE_CHECK = parse_check()


def parse_quality_errors(scope: str = "{scope}") -> str:
    """``scope``: "" (every parse-quality PDF) or "sample/" (the default DAG's few documents)."""
    return f"{RESULTS}/parse-quality/{scope}errors.csv"


# --- reports/: what a reader opens (a root of its own, so a report verb can write elsewhere in tests) ---


def _file(name: str) -> property:
    """A file at ``<root>/<name>``, as a property of :class:`Reports`."""
    return property(lambda self: f"{self.root}/{name}", doc=f"``reports/{name}``")


@dataclass(frozen=True)
class Reports:
    """Every file under reports/: the rules declare them, the report verbs write them (to another root in tests)."""

    root: str = REPORTS

    @classmethod
    def at(cls, folder: str | Path) -> Reports:
        """The layout under ``folder`` (a run's reports/ elsewhere: a kept run's for `make readme`, tests)."""
        return cls(str(Path(folder)))

    # the report rule: leaderboard, Kaggle submissions, reports/index.md
    index_md = _file("index.md")
    leaderboard = _file(f"{WATTBOT}/leaderboard.csv")
    leaderboard_by_type = _file(f"{WATTBOT}/leaderboard_by_type.csv")  # with other labelled splits (question types)
    submission = _file(f"{WATTBOT}/submission.csv")  # the default variant's, what Kaggle gets
    submissions_dir = _file(f"{WATTBOT}/submissions")
    score_figure = _file(f"{WATTBOT}/score_by_variant.png")
    retrieval_table = _file(f"{WATTBOT}/retrieval.csv")
    doc_recall_figure = _file(f"{WATTBOT}/doc_recall_by_variant.png")

    def submission_of(self, av: str) -> str:
        return f"{self.submissions_dir}/{av}.csv"

    # a `corpora:` entry's report (the corpus_report rule): reports/<name>/
    def corpus_leaderboard(self, name: str = "{dataset}") -> str:
        return self / f"{name}/leaderboard.csv"

    def corpus_submission(self, name: str = "{dataset}") -> str:
        return self / f"{name}/submission.csv"

    def corpus_page(self, name: str = "{dataset}") -> str:
        """The corpus's own page (pipeline/report/pages/corpus_page.py), its figures in corpus_figures."""
        return self / f"{name}/index.html"

    def corpus_figures(self, name: str = "{dataset}") -> str:
        return self / f"{name}/figures"

    def relative(self, path: str) -> str:
        """``path`` as a link from a page in reports/ (index.md)."""
        return path.removeprefix(f"{self.root}/")

    # the figures rule: statistics, claims, the figures and reports/index.html
    index_html = _file("index.html")
    claims_csv = _file("claims.csv")
    claims_md = _file("claims.md")
    cost = _file(f"{WATTBOT}/cost.csv")
    ablations = _file(f"{WATTBOT}/ablations.csv")
    ablation_differences = _file(f"{WATTBOT}/ablation_differences.csv")
    attribution = _file(f"{WATTBOT}/attribution.csv")
    attribution_counts = _file(f"{WATTBOT}/attribution_counts.csv")
    attribution_by_type = _file(f"{WATTBOT}/attribution_by_type.csv")
    ensemble_size = _file(f"{WATTBOT}/ensemble_size.csv")
    figures_dir = _file("figures")

    def figure(self, stem: str, ext: str = "png") -> str:
        return f"{self.figures_dir}/{stem}.{ext}"

    # run telemetry, written after a successful run (outside the DAG and the byte-identical set)
    leaderboard_telemetry = _file(f"{WATTBOT}/leaderboard.telemetry.csv")

    # the retrieval suite and the SproutRAG beam sweep
    suite_metrics = _file("retrieval/metrics.csv")
    suite_index_md = _file("retrieval/index.md")
    sprout_beam_csv = _file("retrieval/sprout_beam.csv")
    sprout_beam_png = _file("retrieval/sprout_beam.png")
    suite_power = _file("retrieval/power.telemetry.csv")  # run telemetry (its CPU seconds): suite-power, time-table

    def suite_figure(self, dataset: str = "{dataset}") -> str:
        return self / f"retrieval/{dataset}.png"

    def sprout_tree(self, ext: str = "") -> str:
        """One WattBot document's SproutRAG tree: ``json``, its dendrogram ``png`` / ``svg``, or (no ext) their stem."""
        return self / f"{WATTBOT}/sprout_tree" + (f".{ext}" if ext else "")

    # the parse-quality report ({scope}: "" for every PDF, "sample/" for the default DAG's)
    def parse_quality(self, scope: str = "{scope}") -> str:
        return self / f"parsing/{scope}quality.csv"

    def parse_quality_sources(self, scope: str = "{scope}") -> str:
        return self / f"parsing/{scope}quality_sources.csv"

    screenshot = _file("index.screenshot.png")  # `make report-check`: the page's first screen in Chromium

    def bench(self, name: str) -> str:
        """``make bench`` figures: reports/bench/<name>.json."""
        return self / f"bench/{name}.json"

    def __truediv__(self, name: str) -> str:
        return f"{self.root}/{name}"


reports = Reports()


# --- benchmarks/ and logs/: per-job telemetry and logs, never read by a rule ---


def benchmark(job: str) -> str:
    """A rule's ``benchmark:`` TSV (wall time in column ``s``)."""
    return f"{BENCHMARKS}/{job}.tsv"


# Every rule of the DAG records a benchmark (the time table reads them back: per rule, and the run's
# span from the first job's start to the last job's end). Value: the job part of its path; WattBot's own
# rules come before the suite's, whose {dataset} would match "wattbot" too (the first match names the rule).
# The rules WattBot shares with the corpora write ``{dataset}/...`` (WattBot's files where they were); a
# corpus's jobs are told apart as ``corpus_<rule>`` (matched after WattBot's literal patterns).
BENCHMARK_JOBS = {
    "ingest": f"{WATTBOT}/ingest",
    "tree": f"{WATTBOT}/tree/{{doc}}",
    "parse_errors": f"{WATTBOT}/parse_errors",
    "parse_check": f"{WATTBOT}/parse_check",
    "answer": f"{WATTBOT}/answer/{{av}}/{{split}}",
    "ensemble": f"{WATTBOT}/ensemble/{{av}}/{{split}}",
    "evaluate": f"{WATTBOT}/evaluate/{{av}}",
    "evaluate_split": f"{WATTBOT}/evaluate_split/{{split}}/{{av}}",
    "index": "{dataset}/index/{index}",
    "retrieve": "{dataset}/retrieve/{rv}/{split}",
    "sprout_attention": "{dataset}/sprout_attention",
    "doc_sizes": "{dataset}/doc_sizes",
    "index_part": "{dataset}/index_part/{index}/{shard}",
    "retrieve_batch": "{dataset}/retrieve_batch/{rv}/{split}/{batch}",
    "sprout_windows": "{dataset}/sprout_windows",
    "sprout_attention_part": "{dataset}/sprout_attention_part/{shard}",
    "suite_export": "{dataset}/suite_export",
    "suite_evaluate": "{dataset}/suite_evaluate/{rv}",
    "sprout_train_pairs": "sprout/train_pairs",
    "sprout_train": "sprout/train",
    "sprout_train_fold": "sprout/train_fold/{dataset}/{fold}",
    "sprout_fold_index": "{dataset}/index/crossfit/{fold}/{index}",
    "retrieve_crossfit": "{dataset}/retrieve_crossfit/{rv}/{split}",
    "retrieve_crossfit_batch": "{dataset}/retrieve_crossfit_batch/{rv}/{split}/{batch}",
    "sprout_report": "sprout/report",
    "suite_report": "suite_report",
    "report": "report",
    "figures": "figures",
    "parse_quality": "parsing/{scope}quality",
    "local_model": "local_model/{gguf}",
    "llm_runtime": "llm_runtime",
    "encoder_qint8": "encoder_qint8/{folder}",
    "encoder_qint8_rr": "encoder_qint8_rr/{folder}",
    "encoder_model": "encoder_model/{folder}",
    "corpus_ingest": "{dataset}/ingest",
    "corpus_tree": "{dataset}/tree/{doc}",
    "corpus_parse_errors": "{dataset}/parse_errors",
    "corpus_parse_check": "{dataset}/parse_check",
    "corpus_answer": "{dataset}/answer/{av}/{split}",
    "corpus_ensemble": "{dataset}/ensemble/{av}/{split}",
    "corpus_evaluate": "{dataset}/evaluate/{av}",
    "corpus_report": "{dataset}/report",
    "first_questions": "{dataset}/first_questions/{split}",
    "first_gold": "{dataset}/first_gold/{split}.{ext}",
    "labelled_ids": f"{WATTBOT}/labelled_ids",
    "power_sample": f"{WATTBOT}/power_sample/{{group}}",
    "power_gold": f"{WATTBOT}/power_gold/{{group}}",
}


def dataset_benchmark(rule: str) -> str:
    """The ``benchmark:`` pattern of a rule WattBot and the corpora share: its corpus pattern, whose
    ``{dataset}`` is ``wattbot`` for WattBot's jobs (the same files as :func:`rule_benchmark`)."""
    return benchmark(BENCHMARK_JOBS[f"corpus_{rule}"])


def rule_benchmark(rule: str) -> str:
    """The ``benchmark:`` pattern of ``rule`` (wildcards unfilled)."""
    return benchmark(BENCHMARK_JOBS[rule])


def answer_benchmark(av: str = "{av}", split: str = "{split}") -> str:
    return benchmark(BENCHMARK_JOBS["answer"].format(av=av, split=split))


def log(job: str) -> str:
    return f"{LOGS}/{job}.log"
