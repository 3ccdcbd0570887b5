# wattbench: `snakemake --cores 8` runs the whole benchmark; `snakemake -n` previews the DAG.
# Thin by design: the config is validated once, the rules live in pipeline/rules/, all logic in pipeline/.
import os
import shutil
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# snakemake-executor-plugin-slurm calls sacct and squeue by name: profiles/slurm/bin's wrappers (they fix the
# plugin's reading of "CANCELLED by <uid>" and PREEMPTED, and its account guess; docs/cluster.md) go first on
# PATH where SLURM's commands exist.
# The SLURM configuration's path, where SLURM_CONF names it, is kept as WATTBENCH_SLURM_CONF too: the plugin's
# jobstep executor drops SLURM_CONF from the srun it starts in each job, and profiles/slurm/bin/srun puts it back.
if shutil.which("sacct") or shutil.which("squeue"):
    os.environ["PATH"] = os.pathsep.join([os.path.join(workflow.basedir, "profiles", "slurm", "bin"), os.environ["PATH"]])
    if os.environ.get("SLURM_CONF"):
        os.environ["WATTBENCH_SLURM_CONF"] = os.environ["SLURM_CONF"]

import pipeline.workflow as wf  # first: it loads the registries' built-in entries (pipeline/register_builtins.py)
from pipeline.config import check_paths, config_hash, snakemake_config
from pipeline.llm.preflight import declared_envvars, real_run_checks, warn_unused_per_model
from pipeline.cores import machine_cores
from pipeline.plan import RunWork, start_run
from pipeline.run_ids import end_run
from pipeline import tracking
from pipeline.workflow.report_settings import track_settings

# The grid the --configfile files describe (their `extends:` chains resolved), else config.yaml; --config
# on top. No `configfile:` directive: Snakemake would merge config.yaml under every --configfile.
CFG = snakemake_config(workflow, config)
wf.use_limit(CFG)   # `limit: N`: a smoke run's question-shaped files apart from a full run's (pipeline/paths.py)
# A missing data folder is an error, unless `corpora:` are configured: then WattBot (or the suite) is left
# out of the DAG with a one-line notice, so a user without the shared data runs their own documents.
for notice in check_paths(CFG):
    if workflow.is_main_process:
        print(notice, file=sys.stderr)
wf.check_corpora(CFG)   # every corpus's files checked (one line naming the file, row or column) before any job
wf.check_labels(CFG)    # every wattbot.solutions file too: its columns, unique ids, each id a question of its split
if CFG.get("cache_journal"):   # the caches' SQLite journal, for every job (pipeline/cache_journal.py; docs/cluster.md)
    os.environ["WATTBENCH_CACHE_JOURNAL"] = CFG["cache_journal"]
# The grid's LLM side, typed once (pipeline/llm/work.py). What this invocation will call is known once
# Snakemake has built its DAG (on -n too): the work of the jobs that will run, so asking for a few
# targets, or resuming, checks and prices only those. Then every model they call must be reachable (a key
# set): a warning on a dry run (`-n` needs no key), a stop in a real run's `onstart`, before its first job.
LLM_WORK = wf.llm_work(CFG)
RUN = RunWork(LLM_WORK)
TRACK = track_settings(CFG)   # what onsuccess logs to MLflow, read once
if workflow.is_main_process:   # not again in each cluster job
    warn_unused_per_model(LLM_WORK)   # a per_model entry no variant calls: most likely a typo
    # LLM calls x tokens x price of the jobs that will run (-n too), printed before Snakemake's job table;
    # a real run adds its plan and spend gate at onstart
    wf.when_dag_built(workflow, lambda jobs: RUN.dag_built(wf.needed_llm_work(LLM_WORK, jobs), workflow.dryrun))
    tracking.require_mlflow(TRACK.tracking)   # `tracking: {mlflow: URI}` needs the mlflow extra: said now, not after the last job

# Credentials come only from the environment: Snakemake passes these to cluster jobs, without writing
# them anywhere (the config names the variables, never the values): llm.envvars plus each called model's
# llm.per_model.<model>.api_key_env. Only the set ones are declared here (the jobs to run are not known
# yet): the unset ones a dry run's jobs need are a warning, and a real run's stop it in `onstart`.
# A replay needs none.
ENVVARS = declared_envvars(LLM_WORK, dry_run=True)   # none under replay
if ENVVARS:
    envvars: *ENVVARS

include: "pipeline/rules/common.smk"   # paths (pipeline/paths.py: where every file lives), CACHE, SPLITS, SCORE_SPLIT, SUITE
include: "pipeline/rules/wattbot.smk"
include: "pipeline/rules/parse.smk"
include: "pipeline/rules/retrieval.smk"
include: "pipeline/rules/shards.smk"
include: "pipeline/rules/answer.smk"
include: "pipeline/rules/evaluate.smk"
include: "pipeline/rules/power.smk"
include: "pipeline/rules/suite.smk"
include: "pipeline/rules/report.smk"
include: "pipeline/rules/sprout.smk"
include: "pipeline/rules/llm.smk"
include: "pipeline/rules/encoder.smk"
include: "pipeline/rules/corpora.smk"

# LLM calls in flight across the run (`--resources llm_api=N` overrides): each LLM job takes its
# model's `llm.concurrency` units, so jobs run side by side while their shares fit. The default is the
# largest share (one LLM job at a time; 1 for the local server, which answers one request at a time).
if "llm_api" not in workflow.global_resources:
    workflow.register_resource("llm_api", wf.default_llm_api(CFG))

# This machine's cores (`--resources cpus=N` overrides; the cluster profiles lift it): the heavy rules
# take their threads from it, so `--cores 8` on a 2-core machine never runs more of their threads than
# there are cores (Snakemake alone would believe the 8).
if "cpus" not in workflow.global_resources:
    workflow.register_resource("cpus", machine_cores())


rule all:
    input:
        wf.wattbot_targets(CFG),   # WattBot's reports (none when its folder is missing and corpora run alone)
        wf.suite_targets(CFG),
        wf.parse_targets(CFG),
        wf.sprout_targets(CFG),
        wf.corpus_targets(CFG),    # reports/<name>/leaderboard.csv and submission.csv per `corpora:` entry


# Local runs: no submission rate limit, whose re-scheduling timers multiply while jobs wait (pipeline/workflow/scheduler.py);
# job priorities from the critical path, written to logs/critical_path.json.
# Then, before the first job of a real run (never on -n): the LLM plan, the spend gate and the run id (pipeline/plan.py),
# continued only by a run of the same resolved config (its hash: the one every report header shows).
onstart:
    wf.local_scheduler_without_rate_limit(workflow)
    wf.keep_keys_out_of_job_scripts(workflow)   # keys never written into cluster job scripts (pipeline/workflow/job_secrets.py)
    # the work of the jobs that will run: its keys set, its endpoints answer with the configured model
    ENDPOINTS = real_run_checks(RUN.work)   # (main process, real runs only; first: a failed check writes nothing)
    wf.prioritise_by_critical_path(workflow)   # each job ranks by the longest chain below it (pipeline/workflow/critical_path.py)
    if not workflow.touch:   # --touch only marks files up to date: no job, no spend
        start_run(RUN.work, workflow.configfiles, endpoint_lines=ENDPOINTS, est=RUN.est, config_hash=config_hash(CFG))


# After a successful run, outside the DAG: the documents that could not be parsed, repeated last; the run
# telemetry (latency, cache hits, wall time from benchmarks/) beside the leaderboard; the run's summary
# (leaderboard top, submission, claims, what needs a look, time) printed last and in reports/summary.json;
# with `tracking: {mlflow: URI}`, one MLflow run per variant (pipeline/tracking.py).
onsuccess:
    wf.record_final_dag(workflow)   # the whole DAG, checkpoints' jobs included: `makespan` replays it (pipeline/workflow/dag_record.py)
    wf.after_run(CFG)
    tracking.after_run(TRACK)
    end_run()   # the next run gets a new id; a failed or killed one is continued by the next (pipeline/run_ids.py)


# After a failed run: the failed jobs, their logs' last lines, and the command that resumes.
onerror:
    wf.after_error(log)
