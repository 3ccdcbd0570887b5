# wattbench: `snakemake --cores 8` runs the whole benchmark; `snakemake -n` previews the DAG.
# Thin by design: the config is validated once, the rules live in pipeline/rules/, all logic in pipeline/.
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pipeline.config import check_paths, validate
from pipeline.llm.preflight import preflight
from pipeline.cores import machine_cores
from pipeline.estimate import print_estimate
import pipeline.workflow as wf

configfile: "config.yaml"

CFG = validate(config)
check_paths(CFG)
preflight(CFG)   # every model the variants use can be reached (a key is set), before any job starts
print_estimate(CFG)   # LLM calls x tokens x price, before any job (docs/reproduce-kohakurag.md)

# Credentials come only from the environment: Snakemake checks these are set and passes them to cluster
# jobs, without writing them anywhere (the config names the variables, never the values).
if CFG.get("llm", {}).get("envvars"):
    envvars: *CFG["llm"]["envvars"]

include: "pipeline/rules/common.smk"   # L (pipeline/layout.py: where every file lives), CACHE, SPLITS, SCORE_SPLIT, SUITE
include: "pipeline/rules/wattbot.smk"
include: "pipeline/rules/retrieval.smk"
include: "pipeline/rules/suite.smk"
include: "pipeline/rules/report.smk"
include: "pipeline/rules/parse.smk"
include: "pipeline/rules/sprout.smk"
include: "pipeline/rules/llm.smk"
include: "pipeline/rules/embed.smk"

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
        L.reports.index_md,
        L.reports.leaderboard,
        L.reports.submission,
        L.reports.retrieval_table,
        L.reports.index_html,
        wf.suite_targets(CFG),
        wf.parse_targets(CFG),
        wf.sprout_targets(CFG),


# Local runs: no submission rate limit, whose re-scheduling timers multiply while jobs wait (pipeline/workflow.py).
onstart:
    wf.local_scheduler_without_rate_limit(workflow)


# After a successful run, outside the DAG: the documents that could not be parsed, repeated last; the run
# telemetry (latency, cache hits, wall time from benchmarks/) beside the leaderboard; the run's summary
# (leaderboard top, submission, claims, what needs a look, time) printed last and in reports/summary.json.
onsuccess:
    wf.after_run(CFG)


# After a failed run: the failed jobs, their logs' last lines, and the command that resumes.
onerror:
    wf.after_error(log)
